# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for kubewin.nodes.bundle_archive: the support bundle's one archive per run, written on the controller
from the files win_node_bundle staged there (plugin_utils/_bundle.py), which it then removes."""

from __future__ import annotations

import os

from ansible.plugins.action import ActionBase

from ansible_collections.kubewin.nodes.plugins.module_utils import _windows_args as wa
from ansible_collections.kubewin.nodes.plugins.plugin_utils import _bundle as bundle


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        dummy, args = self.validate_argument_spec(argument_spec=wa.BUNDLE_ARCHIVE_ARGSPEC)
        dest = args["dest"]
        if not os.path.isdir(dest):
            return dict(result, failed=True, msg="bundle_archive: %s is not a directory on the controller; make it, or "
                        "set kubewin_support_bundle_dir to one" % dest)
        hosts, staged = {}, []
        for host, answer in args["hosts"].items():
            reason = answer.get("msg") if isinstance(answer, dict) else None
            if isinstance(answer, dict) and isinstance(answer.get("files"), list) and answer.get("staging"):
                try:  # the texts win_node_bundle wrote on the controller, not in its result
                    hosts[host] = bundle.unstage(answer["staging"], answer["files"])
                    staged.append(answer["staging"])
                    continue
                except (OSError, ValueError) as e:
                    reason = "its staged files could not be read: %s" % e
            # unreachable, or failed: the index says so
            hosts[host] = [{"file": None, "what": "the node's files", "source": host, "text": None,
                            "error": "not collected: %s" % (reason or "the host did not answer"),
                            "truncated": False, "lines": None}]
        path, idx = bundle.write_archive(dest, hosts)
        for directory in staged:
            bundle.remove_staging(directory)
        missing = [r for r in idx["files"] if r["error"]]
        return dict(result, changed=True, path=path, files=len(idx["files"]) - len(missing),
                    not_collected=["%s: %s (%s)" % (r["host"], r["source"], r["error"]) for r in missing])
