# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for kubewin.nodes.win_host_credential_state: SHA-512 and access rules of a node's
credential files, in one read (the files_state script; never their content)."""

from __future__ import annotations

from ansible_collections.kubewin.nodes.plugins.module_utils import _windows_args as wa
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import credential_files
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import files as host_files
from ansible_collections.kubewin.nodes.plugins.plugin_utils._windows_action import WindowsAction


class ActionModule(WindowsAction):
    ARGSPEC = wa.CREDENTIAL_STATE_ARGSPEC

    def act(self, args):
        paths = list(args["paths"])
        for p in list(args["token_files"].values()) + list(args["kubeconfigs"].values()):
            if p not in paths:
                paths.append(p)
        # Read-only, so it runs in check mode too.
        state = self.script("files_state", host_files.state_query([], [], [
            {"path": p, "restricted": True} for p in paths]))
        files = state.get("files") or {}
        acls = state.get("acls") or {}
        result = dict(changed=False, sha512={p: files.get(p) for p in paths}, acls={p: acls.get(p) for p in paths})
        result["token_files_sha512"] = credential_files.token_file_hashes(args["token_files"], result)
        return result
