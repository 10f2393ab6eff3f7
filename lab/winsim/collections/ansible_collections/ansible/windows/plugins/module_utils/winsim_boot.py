# Test-lab only: what a reboot, and a restart of the Host Network Service, do to a simulated host.
"""One model of a reboot, used by the win_reboot stand-in (winsim_reboot.ps1) and by ``core.reboot`` (a
reboot nobody planned: no Ansible run, no remote operation). Each rule cites its source; the table is in
lab/winsim/README.md ("Reboots"). Where the sources do not settle a point, the stricter choice is taken.

Shut down:
- Every service stops, and its process with it; a service marked for deletion is deleted (SCM deletes it
  once it stops: Microsoft Learn, DeleteService). No process survives (``processes`` is emptied) and no
  named pipe either: a pipe exists while its server process holds it (Microsoft Learn, Named Pipes).
- HNS (``hns_after_restart``): a network created with the non-persistent flag is gone: flannel's vxlan
  backend creates ``flannel.<VNI>`` with ``Flags: hcn.EnableNonPersistent`` (flannel v0.26.7
  pkg/backend/vxlan/device_windows.go newVXLANDevice; hcsshim v0.13.0 hcn/hcnnetwork.go
  ``EnableNonPersistent NetworkFlags = 8``; kubernetes-sigs/sig-windows-tools#89 "after restart computer,
  Network flannel.4096 not found"). A NAT network is gone (sig-windows-tools#52, the ``host`` NAT network
  removed on reboot; #128 "NAT is somehow deleted during reboot"). Every other network stays with its
  endpoints (flannel's host-gw backend finds ``cbr0`` and ``cbr0_ep`` again after a restart:
  pkg/backend/hostgw/hostgw_windows.go "Found existing HNSNetwork", "Found existing bridge HNSEndpoint";
  microsoft/SDN helper.psm1 creates ``External`` "only once"). Unverified on every build: the stricter
  reading would drop more, but the sources support keeping these, and the README lists it for a real host.
  Endpoints of a dropped network go with it; the containers of kept endpoints are gone. Policy lists
  (kube-proxy's load balancers) are dropped: whether HNS keeps them is not documented, kube-proxy deletes
  them all at start anyway (k8s v1.37.2 pkg/proxy/winkernel/proxier.go newProxierInternal "Cleaning up old
  HNS policy lists"). A vSwitch goes with the last network on its adapter.
- Files, registry, services' configuration, firewall rules, the machine key store stay (nothing here
  touches them). New logons see the machine environment as it is now (``env_boot``).

Boot (``boot_services``): the SCM starts the Automatic services that are not delayed, then (after the
delay) the delayed ones, each after the services it depends on (MS-SCMR and winsvc
SERVICE_DELAYED_AUTO_START_INFO: "those services are started before this service"; the delayed ones start
"after other auto-start services are started plus a short delay", 120 s by default). A dependency is
started even when it is itself delayed or demand-start. Each service is tried once: when a dependency
failed, the dependent is not started and fails with 1068 ("The dependency service or group failed to
start", event 7001), and its recovery actions do not apply (they are for a service that ran and failed:
Microsoft Learn, SERVICE_FAILURE_ACTIONS). Not modelled: the load order groups (ServiceGroupOrder) of the
system's own services; the services the lab knows start by name, dependencies first. ``boot_log`` records
each start in order. A service that reports Running and fails later follows winsim_scm.observe (its
recovery actions apply). The vSwitch blips of networks created at boot are over before anyone connects.

Then the Task Scheduler runs the tasks with a boot trigger, each after its delay (winsim_tasks.run_boot_tasks).

Windows updates installed and waiting for a reboot complete while the host is down, before the services start
(winsim_updates.complete_at_boot, with their effects).
"""

from __future__ import annotations

from ansible_collections.ansible.windows.plugins.module_utils import (
    winsim_binaries,
    winsim_features,
    winsim_scm,
    winsim_tasks,
    winsim_updates,
)
from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError

NON_PERSISTENT = 8  # hcsshim hcn/hcnnetwork.go: EnableNonPersistent NetworkFlags = 8
# winsvc SERVICE_DELAYED_AUTO_START_INFO: "a short delay" (AutoStartDelay, 120 s unless configured)
DELAYED_START_SECONDS = 120.0


def _dropped_at_restart(net):
    return bool(int(net.get("Flags") or 0) & NON_PERSISTENT) or str(net.get("Type", "")).lower() == "nat"


def hns_after_restart(state):
    """What HNS still holds after it (or the host) restarted: see the module docstring. Returns the names of
    the networks that are gone."""
    hns = state.setdefault("hns", {"networks": [], "endpoints": [], "policylists": [], "vswitches": {},
                                   "blips": []})
    gone = [n for n in hns.get("networks") or [] if _dropped_at_restart(n)]
    ids = {n["ID"].lower() for n in gone}
    hns["networks"] = [n for n in hns.get("networks") or [] if n["ID"].lower() not in ids]
    hns["endpoints"] = [e for e in hns.get("endpoints") or [] if str(e.get("VirtualNetwork", "")).lower() not in ids]
    hns["policylists"] = []
    # kube-proxy's HNS v2 load balancers: gone like the policy lists (their remote endpoints are in flannel's network,
    # which is gone). kubernetes/kubernetes#139519 (2026) reports newer HNS builds restoring them after an HNS restart
    # ("rehydration"); the lab takes the older behaviour, under which kube-proxy must program them again.
    hns["loadbalancers"] = []
    kept_adapters = {n.get("NetworkAdapterName") for n in hns["networks"]}
    for adapter in list(hns.get("vswitches") or {}):
        if adapter not in kept_adapters:
            del hns["vswitches"][adapter]
    return [n["Name"] for n in gone]


def shutdown(host):
    """Every service and process ends; what HNS does not keep is gone (see the module docstring)."""
    st = host.state
    for svc in list((st.get("services") or {}).values()):
        if svc["status"] != "Stopped" or svc.get("crash"):
            winsim_binaries.service_process_stop(host, svc)
        svc.update(status="Stopped", pid=0)
        for k in ("crash", "app_pid"):
            svc.pop(k, None)
        if svc["pending_delete"]:
            del st["services"][svc["name"].lower()]
    st["processes"] = {}
    st.pop("shims", None)  # containerd's shims too (no process survives)
    st["pipes"] = []
    gone = hns_after_restart(st)
    for ep in (st["hns"].get("endpoints") or []):
        ep["SharedContainers"] = []  # the containers are gone (their endpoints stay stale)
    return gone


def boot_services(host):
    """The SCM's start of the auto-start services at boot; returns {service: error} of those that failed."""
    st = host.state
    log = st["boot_log"] = []
    tried = {}

    def boot_start(svc, delayed):
        key = svc["name"].lower()
        if key in tried:
            return tried[key]
        tried[key] = "1068: a circular dependency"  # SCM refuses a cycle; the lab's services have none
        error = None
        for dep in svc["dependencies"]:
            d = winsim_scm.find(st, dep)
            if d is None or d["pending_delete"]:
                error = "1075: The dependency service does not exist or has been marked for deletion."
            elif boot_start(d, delayed):
                error = "1068: The dependency service or group failed to start."
            if error:
                break
        if error is None:
            try:
                winsim_scm.start(host, svc["name"])
            except SimError as e:
                error = str(e)
        else:
            svc["last_error"] = int(error[:4])  # never started: no recovery action applies
        tried[key] = error
        log.append({"service": svc["name"], "delayed": delayed, "at": winsim_scm.clock(host),
                    "status": svc["status"], "error": error})
        return error

    auto = sorted((s for s in st["services"].values() if s["start"] == 2), key=lambda s: s["name"].lower())
    for svc in [s for s in auto if not s.get("delayed_autostart")]:
        boot_start(svc, False)
    delayed = [s for s in auto if s.get("delayed_autostart") and s["name"].lower() not in tried]
    if delayed:
        winsim_scm.advance(host, DELAYED_START_SECONDS)
        for svc in delayed:
            boot_start(svc, True)
    return {e["service"]: e["error"] for e in log if e["error"]}


def reboot(host):
    """Shut down and boot (no remote session exists meanwhile): returns (networks gone, services failed)."""
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_hns, winsim_kubelet_status, winsim_node
    st = host.state
    gone = shutdown(host)
    winsim_updates.complete_at_boot(st)  # the updates waiting for this reboot, and their effects
    winsim_features.complete_at_boot(host)  # Windows features installed and waiting for this reboot
    st["reboots"] = int(st.get("reboots") or 0) + 1
    st["last_boot"] = winsim_scm.clock(host)
    # New logons see the machine environment as it is now (winsim_binaries.session_path).
    st["env_boot"] = dict(st.get("env") or {})
    failed = boot_services(host)
    while winsim_hns.take_blip(st):  # a vSwitch made at boot blipped before anyone connected
        pass
    winsim_node.kube_proxy_network_found(host)
    # then the Task Scheduler's boot-triggered tasks, each after its delay (winsim_tasks)
    winsim_tasks.run_boot_tasks(host)
    while winsim_hns.take_blip(st):
        pass
    winsim_node.kube_proxy_network_found(host)
    winsim_kubelet_status.sync(host)
    return gone, failed


def hns_service_restart(host):
    """The Host Network Service restarted (or crashed) while everything else runs (microsoft/Windows-Containers#278):
    HNS holds what a reboot leaves it (``hns_after_restart``), the processes keep running and nothing tells them:
    flanneld does not recreate its network, kube-proxy does not re-apply the load balancers it applied
    (proxier.go: ``svcInfo.policyApplied``). Returns the names of the networks that are gone."""
    return hns_after_restart(host.state)
