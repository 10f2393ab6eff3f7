# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for kubewin.nodes.node_preflight: validation on the controller only, no remote call."""

from __future__ import annotations

from ansible_collections.kubewin.nodes.plugins.plugin_utils import _cluster_settings as cluster_settings
from ansible_collections.kubewin.nodes.plugins.plugin_utils import _downloads
from ansible_collections.kubewin.nodes.plugins.plugin_utils import _preflight as preflight
from ansible_collections.kubewin.nodes.plugins.plugin_utils._windows_action import WindowsAction


class ActionModule(WindowsAction):
    # Pure controller-side validation: nothing runs on the host, so no connection is ever opened
    # (connection plugins connect on first use). Its failure lists every problem, one per line
    # (preflight.failure_message), rather than one reason.
    _requires_connection = False
    ARGSPEC = preflight.PREFLIGHT_ARGSPEC

    def act(self, args):
        # The runtime's CNI plugins join the other downloads; a pin (kubewin_checksums) holds for its URL: both
        # applied here, so every check sees them.
        downloads = args["downloads"] + preflight.cni_plugin_downloads(
            args["cni_dirs"], args["container_runtime"], args["cni_versions"], args["download_bases"])
        args = dict(args, downloads=_downloads.pin_checksums(downloads, args["checksums"]))
        # Inventory values that differ from the cluster's: the first control-plane host's (found by the discovery)
        # and this host's own.
        settings = args["settings"]
        args["settings_conflicts"] = list(settings.get("conflicts") or []) + cluster_settings.conflicts(
            settings, self.host, args["host_settings"])
        args["network_plugin_origin"] = (settings.get("origins") or {}).get("kube_network_plugin")
        # The inventory host, for the checks across hosts (node_names).
        args["host"] = self.host
        failures, warnings, identity = preflight.run_checks(args)
        if not failures:
            # The CNI config and the kubelet's drop-in, static for this node: the node role writes them as they are.
            identity["config_files"], file_failures = preflight.node_config_files(args, identity)
            failures.extend(file_failures)
            # flanneld's command line (services mode), static for this node too: the network role runs it as it is.
            identity["flanneld_argv"], argv_failures = preflight.flanneld_argv(args, identity)
            failures.extend(argv_failures)
        downloads = None
        # A malformed value (a version, a base URL, the proxy, a pin) would only turn into a misleading
        # checksum-fetch error: fetch only when every value that makes up a download is well formed.
        if not any(f["check"] in ("inputs", "downloads") for f in failures):
            fetch = _downloads.fetch_once(
                lambda url: _downloads.fetch_checksum_file(url, args["proxy"], args["checksum_timeout"],
                                                           args["no_proxy"]))
            # The only check that reads the network: the controller fetches the checksum files and the
            # first byte of each file, the way the node will, and names every URL it cannot have.
            download_failures = preflight.download_failures(
                args["downloads"], fetch,
                lambda url: _downloads.probe_download(url, args["proxy"], args["checksum_timeout"], args["no_proxy"]),
                args)
            failures.extend(download_failures)
            if not download_failures:
                # What the node role installs, checksums included (win_host_files fetches none again).
                downloads, resolve_failures = preflight.resolved_downloads(args["downloads"], fetch)
                failures.extend(resolve_failures)
        # ``warnings`` as text so Ansible shows them; ``warning_findings`` keeps check and variable.
        result = dict(changed=False, failures=failures, warning_findings=warnings, node=identity,
                      downloads=downloads, warnings=[w["message"] for w in warnings])
        if failures:
            result.update(failed=True, msg=preflight.failure_message(self.host, failures))
        else:
            result["msg"] = "Preflight passed on %s (%d warning(s))" % (self.host, len(warnings))
        return result
