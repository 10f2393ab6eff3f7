# -*- coding: utf-8 -*-
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for kubewin.nodes.win_node_files: directories, verified downloads and files in two operations."""

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
        dummy, args = self.validate_argument_spec(argument_spec=wa.FILES_ARGSPEC)
        host = task_vars.get("inventory_hostname", "?")
        secret = any(f["secret"] for f in args["files"])

        def fetch(url):
            return nfiles.fetch_checksum_file(url, args["proxy"], args["checksum_timeout"], args["proxy_bypass"])

        try:
            downloads = nfiles.resolve_downloads(args["downloads"], fetch)
            state = run_script(self, task_vars, "files_state", nfiles.state_query(
                args["directories"], downloads, args["files"], args["absent"], args["prune"]))
            # Only a directory that was not protected is listed (a second read): a converged node is read once.
            scan = nfiles.scan_needed(args["directories"], state)
            if scan:
                state["scan"] = run_script(self, task_vars, "files_state", nfiles.scan_query(scan)).get("scan") or {}
            params, report = nfiles.plan(args["directories"], downloads, args["files"], state,
                                         args["absent"], args["prune"])
            if params and not self._task.check_mode:
                params.update(Proxy=args["proxy"] or "",
                              ProxyBypass=nfiles.proxy_bypass_patterns(args["proxy_bypass"]))
                run_script(self, task_vars, "node_sync", params, sensitive=secret)
        except (nfiles.NodeFilesError, nfiles.NoProxyEntryError, RemoteScriptError) as e:
            result.update(failed=True, msg="win_node_files on %s: %s" % (host, e))
            return result
        result.update(changed=params is not None, directories=report["directories"],
                      downloaded=report["downloads"], written=report["files"], removed=report["removed"])
        if self._task.diff and params is not None:
            result["diff"] = {"before": report["before"], "after": report["after"],
                              "before_header": "%s files" % host, "after_header": "%s files" % host}
        return result
