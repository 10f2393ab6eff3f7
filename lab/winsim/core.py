"""Controller-side access to the simulation: host creation, state dump, ops counts, faults.

The simulation code itself lives in the stand-in collection's module_utils (so AnsiballZ ships it
to the stand-in modules); this file puts that collection, and kubewin.nodes, on sys.path.
"""

import hashlib
import json
import ntpath
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
COLLECTIONS = os.path.join(HERE, "collections")
KUBEWIN_COLLECTIONS = os.path.join(REPO, ".build", "collections")
DEFAULT_ROOT = os.path.join(REPO, "lab", "_run", "winsim")

for _p in (KUBEWIN_COLLECTIONS, COLLECTIONS):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from ansible_collections.ansible.windows.plugins.module_utils import (  # noqa: E402  # noqa: E402
    winsim_binaries,
    winsim_cmdline,
    winsim_files,
    winsim_hns,
    winsim_host,
    winsim_scm,
)

Host = winsim_host.Host
SimError = winsim_host.SimError


def create_host(root, name, profile="ws2022-containerd", adapters=None, build=None, hostname=None):
    """(Re)create a host from a profile: wipes its drive, state and ops log."""
    import shutil
    host = Host(root, name)
    if os.path.isdir(host.dir):
        shutil.rmtree(host.dir)
    state = winsim_host.initial_state(hostname or name, profile, adapters=adapters, build=build)
    host.create(state)
    for svc in state["services"].values():  # the binaries the installed services run
        exe = winsim_cmdline.split_command_line(svc["image_path"])[0]
        local = host.local_path(exe)
        if not os.path.exists(local):
            os.makedirs(os.path.dirname(local), exist_ok=True)
            tool = ntpath.splitext(ntpath.basename(exe))[0].lower()
            runtimes = ("containerd", "dockerd", "cri-dockerd")
            version = (state["runtime"] or {}).get("version", "10.0") if tool in runtimes else "10.0"
            with open(local, "w") as f:
                f.write(winsim_binaries.marker_line(tool, version))
    if "docker" in state:  # the Docker installer puts the CLI beside dockerd.exe (C:\Program Files\Docker)
        write_binary(host.local_path("C:\\Program Files\\Docker\\docker.exe"), "docker", state["runtime"]["version"])
    if winsim_host.PROFILES[profile].get("unpacked"):  # containerd's archive unpacked, nothing registered
        write_binary(host.local_path("C:\\Program Files\\containerd\\bin\\containerd.exe"), "containerd",
                     winsim_host.PROFILES[profile]["unpacked"])
    if winsim_host.PROFILES[profile].get("crictl"):  # cri-tools' archive unpacked where the runtime role puts it
        write_binary(host.local_path("C:\\Program Files\\containerd\\crictl\\crictl.exe"), "crictl",
                     winsim_host.PROFILES[profile]["crictl"])
    config = winsim_host.PROFILES[profile].get("containerd_config")
    if config:  # an installer's containerd config.toml (see the profile)
        local = host.local_path("C:\\Program Files\\containerd\\config.toml")
        os.makedirs(os.path.dirname(local), exist_ok=True)
        with open(local, "w") as f:
            f.write(config)
    return host


def write_binary(path, tool, version):
    """A stand-in binary (e.g. kubeadm.exe) for the lab mirror or a host's drive."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write(winsim_binaries.marker_line(tool, version))
        f.write("This file stands in for %s %s on simulated Windows hosts of the kubewin.nodes lab.\n"
                % (tool, version))


def dump(root, name):
    """A normalized snapshot of a host (everything but the ops log and fault bookkeeping):
    equal dumps mean nothing observable changed. HNS IDs are random, so objects appear by name."""
    host = Host(root, name)
    with host.open(save=False):
        st = host.state
        sddl = winsim_files.live_sddls(host)
    files = {}
    for d, dirs, fs in os.walk(host.drive):
        for x in dirs:
            files[host.win_path(os.path.join(d, x))] = "dir"
        for x in fs:
            with open(os.path.join(d, x), "rb") as f:
                files[host.win_path(os.path.join(d, x))] = "sha256:" + hashlib.sha256(f.read()).hexdigest()
    hns = st.get("hns") or {}
    ep_names = {e["ID"]: e.get("Name") or e["ID"] for e in hns.get("endpoints", [])}
    networks = sorted(({"Name": n["Name"], "Type": n["Type"], "Subnets": n.get("Subnets"),
                        "NetworkAdapterName": n.get("NetworkAdapterName")} for n in hns.get("networks", [])),
                      key=lambda n: n["Name"])
    endpoints = sorted(({"Name": e.get("Name"), "VirtualNetworkName": e.get("VirtualNetworkName"),
                         "IPAddress": e.get("IPAddress")} for e in hns.get("endpoints", [])),
                       key=lambda e: str(e["Name"]))
    policylists = sorted(({"References": sorted(ep_names.get(r.rsplit("/", 1)[-1], r) for r in p.get("References", [])),
                           "Policies": p.get("Policies")} for p in hns.get("policylists", [])),
                         key=lambda p: json.dumps(p, sort_keys=True))
    return {
        "files": files,
        "services": {k: winsim_scm.snapshot(v) for k, v in sorted(st["services"].items())},
        "hns": {"networks": networks, "endpoints": endpoints, "policylists": policylists,
                "vswitches": hns.get("vswitches", {})},
        "firewall": st.get("firewall", {}), "env": st.get("env", {}), "acls": st.get("acls", {}), "sddl": sddl,
        "registry": st.get("registry", {}), "pipes": sorted(st.get("pipes", [])),
        "runtime": st.get("runtime"), "build": st.get("build"), "hostname": st.get("hostname"),
        "features": st.get("features"),
        # the images containerd's CRI holds (winsim_crictl), by reference
        "images": sorted(i["tag"] for i in st.get("images") or []),
        "processes": _processes(st),
        "scheduled_tasks": sorted(st.get("scheduled_tasks") or {}),
        # Docker's own network store (winsim_docker), by name as HNS's objects
        "docker": {"networks": sorted(({"Name": n["Name"], "Driver": n["Driver"]}
                                       for n in (st.get("docker") or {}).get("networks", [])),
                                      key=lambda n: n["Name"])},
    }


def _processes(st):
    """What runs besides the services' own state: kube-proxy (and whether its HNS network exists
    yet), NSSM's applications (flanneld)."""
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_node
    out = {}
    for name, proc in sorted((st.get("processes") or {}).items()):
        proc = dict(proc)
        if proc.get("program") == "kube-proxy":
            proc["network_found"] = winsim_node.network_ready(st, proc)
        out[name] = proc
    return out


def ops(root, name):
    """Module executions on a host, in order (from the connection's ops.log)."""
    path = os.path.join(root, "hosts", name, "ops.log")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [line.split()[1] for line in f if line.strip()]


def ops_detailed(root, name):
    """Module executions on a host, in order, as (time, module, script id or None): the script id is that of the
    kubewin.nodes script a win_powershell (or batch) execution ran (the connection's ops.log third column)."""
    path = os.path.join(root, "hosts", name, "ops.log")
    if not os.path.exists(path):
        return []
    out = []
    with open(path) as f:
        for line in f:
            cols = line.split()
            if cols:
                out.append((float(cols[0]), cols[1], cols[2] if len(cols) > 2 else None))
    return out


def control_plane_ops(root):
    """(time, module) per module execution on the control-plane host, in order (the counted_local connection's
    ROOT/control-plane.log): every Python start there, delegated tasks and loop items included."""
    path = os.path.join(root, "control-plane.log")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [(float(t), m) for t, m in (line.split() for line in f if line.strip())]


def reset_control_plane_ops(root):
    path = os.path.join(root, "control-plane.log")
    if os.path.exists(path):
        os.remove(path)


def command_lines(root, name):
    """Every process command line the host started (winsim's stand-in for event 4688 with command lines)."""
    path = os.path.join(root, "hosts", name, "processes.log")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [line.rstrip("\n") for line in f if line.strip()]


def reset_ops(root, name):
    path = os.path.join(root, "hosts", name, "ops.log")
    if os.path.exists(path):
        os.remove(path)


def set_fault(root, name, operation, mode):
    """mode: fail_once | fail_always | timeout | None (clear). Operations: a module name
    (win_get_url), 'script:<id>', 'exec:<tool>', 'service:<name>'."""
    host = Host(root, name)
    with host.open():
        faults = host.state.setdefault("faults", {})
        if mode:
            faults[operation] = mode
        else:
            faults.pop(operation, None)
        host.state.setdefault("fault_hits", {}).pop(operation, None)


def edit(root, name, fn):
    """Change a host's state directly (test set-up): fn(state) under the host lock."""
    host = Host(root, name)
    with host.open():
        fn(host.state)


def flannel(root, name, backend="vxlan", vni=4096, pod_subnet="10.244.1.0/24", adapter=None):
    """What flanneld does to HNS when it starts on the node (a test's set-up: its vSwitch blip is over)."""
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_node
    host = Host(root, name)
    with host.open():
        answer = winsim_hns.flannel_network(host.state, backend, vni, pod_subnet, adapter)
        winsim_hns.take_blip(host.state)
        winsim_node.kube_proxy_network_found(host)
        return answer


def reboot(root, name):
    """A reboot nobody planned (a power cut, Windows Update's own restart): no Ansible run and no remote
    operation (nothing is written to ops.log). The model is winsim_boot's, as the win_reboot stand-in's.
    Returns (HNS networks gone, {service: error} of the services that failed to start at boot)."""
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_boot
    host = Host(root, name)
    with host.open():
        return winsim_boot.reboot(host)


def wait(root, name, seconds):
    """Time passes on a host and nothing else happens there: the scheduled tasks that fall due run
    (winsim_tasks.wait)."""
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_tasks
    host = Host(root, name)
    with host.open():
        winsim_tasks.wait(host, seconds)


def hns_service_restart(root, name):
    """The Host Network Service restarted while everything else runs (microsoft/Windows-Containers#278):
    winsim_boot.hns_service_restart. Returns the names of the HNS networks that are gone."""
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_boot
    host = Host(root, name)
    with host.open():
        return winsim_boot.hns_service_restart(host)
