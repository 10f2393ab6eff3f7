# Test-lab only: the simulated kubelet's Node status (the Ready condition), posted to the lab's real API server.
"""Ready is earned: the simulated kubelet reports Ready only when the real kubelet would.

Sources (Kubernetes v1.37.2 and containerd as cited):
- pkg/kubelet/nodestatus/setters.go ReadyCondition: Ready=True "KubeletReady" / "kubelet is posting ready
  status" unless the runtime, network, storage or shutdown errors aggregate to one (Ready=False,
  "KubeletNotReady", the aggregate's text: one error as is, several as "[a, b]", apimachinery util/errors).
- pkg/kubelet/kubelet.go updateRuntimeUp: the CRI Status call's NetworkReady condition, when false, becomes
  "container runtime network not ready: " + RuntimeCondition.String() ("%s=%t reason:%s message:%s",
  pkg/kubelet/container/runtime.go); a runtime that stops answering is "container runtime is down"
  (pkg/kubelet/runtime.go runtimeErrors).
- containerd internal/cri/server/status.go (2.x; pkg/cri/server/status.go in 1.7): NetworkReady=false with
  reason NetworkPluginNotReady and message "Network plugin returns error: <go-cni Status error>". go-cni
  Status (cni.go): fewer loaded networks than needed is ErrCNINotInitialized, "cni plugin not initialized";
  the CRI plugin loads the first config of its conf dir (winsim_containerd.cni_config). Since go-cni calls
  libcni GetStatusNetworkList, a config of cniVersion >= 1.1.0 also runs each plugin's STATUS, which first
  finds the plugin binary (libcni api.go: versions below 1.1.0 skip STATUS, so the plugin binaries, the
  flannel delegate and flannel's subnet.env do not decide readiness then: they fail each pod's sandbox at
  ADD, see winsim_containerd.cni_problems).
- cri-dockerd (dockershim's code, core/docker_service.go Status, network/cni/cni.go): "docker: network plugin
  is not ready: cni config uninitialized" without a loadable config in its --cni-conf-dir.

When it is posted: the real kubelet posts its status when it changes (and every nodeStatusReportFrequency,
5 min); its Lease (renewed every 10 s) is the heartbeat the node lifecycle controller watches. In the lab the
status is computed after every simulated remote operation on the host and patched when it changed (every
change on a simulated host is such an operation), and kwok renews the Lease (lab/controlplane/
kwok_stages.py; kwok keeps the node's Lease, not its status). Not modelled: a kubelet that stops leaves its
last status and kwok's Lease, so the node does not turn Unknown.
"""

from __future__ import annotations

import datetime
import json
import os

from ansible_collections.ansible.windows.plugins.module_utils import winsim_containerd
from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError

# The annotation that takes a node out of kwok's node stages (kwok_stages.py WINSIM_ANNOTATION).
ANNOTATION = "winsim.kubewin.lab/kubelet"
READY_MESSAGE = "kubelet is posting ready status"
NETWORK_NOT_READY = "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:%s"
CNI_NOT_INITIALIZED = "cni plugin not initialized"


def _cni_version_at_least_1_1(v):
    try:
        parts = [int(x) for x in str(v or "0").split(".")[:3]]
    except ValueError:
        return False
    return parts + [0] * (3 - len(parts)) >= [1, 1, 0]


def _containerd_network_error(host, runtime_version, config_flag):
    """go-cni Status as containerd's CRI plugin reports it: None when the network is ready."""
    try:
        bin_dirs, conf_dir = winsim_containerd.effective_dirs(host, runtime_version, config_flag)
    except winsim_containerd.ContainerdError:
        return None  # containerd would not run at all: the runtime error says so
    conf = winsim_containerd.cni_config(host, conf_dir)
    if conf is None:
        return "Network plugin returns error: " + CNI_NOT_INITIALIZED
    if _cni_version_at_least_1_1(conf.get("cniVersion")):
        for plugin in conf.get("plugins") or [conf]:
            t = plugin.get("type") or ""
            if winsim_containerd.find_plugin(host, t, bin_dirs) is None:
                # libcni invoke FindInPath's error, returned by the plugin's STATUS
                return "Network plugin returns error: failed to find plugin %s in path %s" % (
                    json.dumps(t), "[%s]" % " ".join(bin_dirs))
    return None


def readiness(host, cri_pipe):
    """(status "True"/"False", reason, message) of the Ready condition the kubelet would post now."""
    state = host.state
    runtime = state.get("runtime") or {}
    services = state.get("services") or {}
    errors = []
    if runtime.get("name") == "docker":
        runtime_service = "cri-dockerd" if "cri-dockerd" in services else "docker"
    else:
        runtime_service = "containerd"
    svc = services.get(runtime_service)
    if not svc or svc.get("status") != "Running" or cri_pipe not in (state.get("pipes") or []):
        errors.append("container runtime is down")
    elif runtime_service == "containerd":
        from ansible_collections.ansible.windows.plugins.module_utils.winsim_containerd import _config_flag
        try:
            network = _containerd_network_error(host, runtime.get("version"), _config_flag(svc.get("image_path")))
        except SimError:
            network = None
        if network:
            errors.append(NETWORK_NOT_READY % network)
    else:
        conf_dir = winsim_containerd.cri_dockerd_conf_dir(svc.get("image_path"))
        if winsim_containerd.cni_config(host, conf_dir) is None:
            errors.append("container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady "
                          "message:docker: network plugin is not ready: cni config uninitialized")
    if not errors:
        return "True", "KubeletReady", READY_MESSAGE
    return "False", "KubeletNotReady", errors[0] if len(errors) == 1 else "[%s]" % ", ".join(errors)


def registered(host, node_name, kubeconfig, cri_pipe):
    """The kubelet registered ``node_name``: remember how to reach the API as that node."""
    host.state["kubelet_status"] = {"node": node_name, "kubeconfig": kubeconfig, "cri_pipe": cri_pipe,
                                    "posted": None}


def sync(host):
    """Post the Ready condition when it changed, as long as the kubelet runs and has its kubeconfig."""
    rec = host.state.get("kubelet_status")
    if not rec:
        return
    kubelet = (host.state.get("services") or {}).get("kubelet")
    if not kubelet or kubelet.get("status") != "Running":
        return
    if not os.path.isfile(host.local_path(rec["kubeconfig"])):
        host.state.pop("kubelet_status", None)  # kubeadm reset removed it: nothing to post as
        return
    now = readiness(host, rec["cri_pipe"])
    if rec.get("posted") == list(now):
        return
    from ansible_collections.ansible.windows.plugins.module_utils.winsim_kube import _api_from_kubeconfig
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    status, reason, message = now
    ready = {"type": "Ready", "status": status, "reason": reason, "message": message, "lastHeartbeatTime": stamp}
    if not rec.get("posted") or rec["posted"][0] != status:
        ready["lastTransitionTime"] = stamp  # setters.go: kept while the status stays the same
    conditions = []
    if not rec.get("posted"):
        conditions = [{"type": t, "status": "False", "reason": r, "message": m, "lastHeartbeatTime": stamp,
                       "lastTransitionTime": stamp}
                      for t, r, m in (("MemoryPressure", "KubeletHasSufficientMemory",
                                       "kubelet has sufficient memory available"),
                                      ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                                      ("PIDPressure", "KubeletHasSufficientPID",
                                       "kubelet has sufficient PID available"))]
    conditions.append(ready)  # setters.go: Ready is the last condition
    try:
        api = _api_from_kubeconfig(host, rec["kubeconfig"])
        try:
            # A strategic merge patch merges conditions by type (NodeStatus.Conditions patchMergeKey "type").
            code, ans = api.request("PATCH", "/api/v1/nodes/%s/status" % rec["node"],
                                    {"status": {"conditions": conditions}},
                                    content_type="application/strategic-merge-patch+json")
        finally:
            api.close()
    except (SimError, OSError, ValueError, KeyError) as e:
        # the real kubelet retries; the next operation on the host tries again
        host.state.setdefault("notes", []).append("kubelet: node status not posted: %s" % e)
        return
    if code < 300:
        rec["posted"] = list(now)
    elif code == 404:
        host.state.pop("kubelet_status", None)  # the Node was deleted; a restarted kubelet registers again
    else:
        host.state.setdefault("notes", []).append("kubelet: node status not posted: %s" % ans.get("message"))
