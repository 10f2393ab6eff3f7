# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for kubewin.nodes.win_host_files: directories, verified downloads and files in two operations."""

from __future__ import annotations

from ansible_collections.kubewin.nodes.plugins.module_utils import _windows_args as wa
from ansible_collections.kubewin.nodes.plugins.plugin_utils import _downloads
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import files as host_files
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import network as host_network
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import runtime_cni
from ansible_collections.kubewin.nodes.plugins.plugin_utils._windows_action import WindowsAction


class ActionModule(WindowsAction):
    ARGSPEC = wa.FILES_ARGSPEC
    ERRORS = (host_files.HostFilesError, _downloads.NoProxyEntryError, host_network.NetworkConfigError)

    def act(self, args):
        files = list(args["files"])
        if args["source_vip_reservation"]:
            vip = args["source_vip_reservation"]
            files.append(dict(host_network.source_vip_reservation(vip["pod_cidr"], vip["backend"], vip["vni"]),
                              restricted=False, secret=False))
        secret = any(f["secret"] for f in files)
        absent, prune = list(args["absent"]), list(args["prune"])
        if args["remove_cni"]:
            cni = args["remove_cni"]
            cni_files, cni_dirs = runtime_cni.installed_paths(cni["dirs"], cni["container_runtime"], cni["versions"])
            # the runtime's CNI directories are pruned first (deepest first: they sit below their parent)
            absent += [f for f in cni_files if f not in absent]
            prune = cni_dirs + [d for d in prune if d not in cni_dirs]

        def fetch(url):
            return _downloads.fetch_checksum_file(url, args["proxy"], args["checksum_timeout"], args["proxy_bypass"])

        downloads = _downloads.resolve_downloads(args["downloads"], fetch)
        # Removal alone (no check or diff mode to report first): no read, node_sync removes what is there and says
        # what it removed (issue 22: one remote operation, as a service's removal).
        blind = not (args["directories"] or downloads or files) and not self._task.check_mode \
            and not self._task.diff
        if blind:
            state = host_files.assumed_present(absent, prune)
        else:
            state = self.script("files_state", host_files.state_query(
                args["directories"], downloads, files, absent, prune))
        # A directory that was not protected is listed by node_sync once it has secured it (nobody else can add to
        # it then): no second read, and nothing a user adds between the two operations is adopted.
        params, report = host_files.plan(args["directories"], downloads, files, state,
                                         absent, prune, args["forget_transport_key"])
        stopped = []
        if params and not self._task.check_mode:
            params.update(Proxy=args["proxy"] or "",
                          ProxyBypass=_downloads.proxy_bypass_patterns(args["proxy_bypass"]))
            reply = self.script("node_sync", params, sensitive=secret)
            if blind:
                report["removed"] = list(reply.get("removed") or [])
            stopped = list(reply.get("stopped") or [])
        # forget_transport_key alone makes node_sync run but is no change (every facts read makes the key again)
        changed = bool(report["directories"] or report["downloads"] or report["files"] or report["removed"])
        result = dict(changed=changed, directories=report["directories"],
                      downloaded=report["downloads"], written=report["files"], removed=report["removed"],
                      stopped=stopped)
        if self._task.diff and changed:
            result["diff"] = {"before": report["before"], "after": report["after"],
                              "before_header": "%s files" % self.host, "after_header": "%s files" % self.host}
        return result
