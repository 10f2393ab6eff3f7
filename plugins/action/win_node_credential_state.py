# -*- coding: utf-8 -*-
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for kubewin.nodes.win_node_credential_state: SHA-512 and access rules of a node's
credential files, in one read (the files_state script; never their content)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.plugins.action import ActionBase

from ansible_collections.kubewin.nodes.plugins.module_utils import host_files as nfiles
from ansible_collections.kubewin.nodes.plugins.module_utils import windows_args as wa
from ansible_collections.kubewin.nodes.plugins.plugin_utils.winremote import RemoteScriptError, run_script


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = True

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super(ActionModule, self).run(tmp, task_vars)
        dummy, args = self.validate_argument_spec(argument_spec=wa.CREDENTIAL_STATE_ARGSPEC)
        host = task_vars.get("inventory_hostname", "?")
        try:
            # Read-only, so it runs in check mode too.
            state = run_script(self, task_vars, "files_state", nfiles.state_query([], [], [
                {"path": p, "restricted": True} for p in args["paths"]]))
        except RemoteScriptError as e:
            result.update(failed=True, msg="win_node_credential_state on %s: %s" % (host, e))
            return result
        files = state.get("files") or {}
        acls = state.get("acls") or {}
        result.update(changed=False, sha512={p: files.get(p) for p in args["paths"]},
                      acls={p: acls.get(p) for p in args["paths"]})
        return result
