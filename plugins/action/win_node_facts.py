# -*- coding: utf-8 -*-
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for kubewin.nodes.win_node_facts: one read of everything the roles decide on."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.plugins.action import ActionBase

from ansible_collections.kubewin.nodes.plugins.module_utils import windows_args as wa
from ansible_collections.kubewin.nodes.plugins.plugin_utils import host_facts as nf
from ansible_collections.kubewin.nodes.plugins.plugin_utils.winremote import RemoteScriptError, run_script


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = True

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super(ActionModule, self).run(tmp, task_vars)
        dummy, args = self.validate_argument_spec(argument_spec=wa.FACTS_ARGSPEC)
        try:
            answer = run_script(self, task_vars, "node_facts", nf.script_parameters(args["extra_paths"]))
        except RemoteScriptError as e:
            result.update(failed=True, msg="win_node_facts: %s" % e)
            return result
        result.update(changed=False, ansible_facts={"kubewin_node": nf.node_facts(answer)})
        return result
