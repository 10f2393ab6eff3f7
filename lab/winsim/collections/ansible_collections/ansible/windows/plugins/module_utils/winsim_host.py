# Test-lab only: the state of one simulated Windows host.
"""One simulated Windows host: a ``C/`` tree standing for the C: drive plus ``state.json``.

Layout under ``<root>/hosts/<host>/``: ``C/`` (the C: drive), ``state.json`` (services, HNS,
firewall, environment, ACLs, registry, adapters, runtime, faults), ``state.lock`` (flock held for
the whole of one module execution: ansible forks run hosts in parallel, and a join inside one
module must not interleave with another module on the same host), ``ops.log`` (one line per
module execution, written by the connection plugin).
"""

from __future__ import annotations

import contextlib
import copy
import fcntl
import json
import os
import re

ENV_HOST = "KUBEWIN_SIM_HOST"
ENV_ROOT = "KUBEWIN_SIM_ROOT"

DEFAULT_BUILD = 20348

# Profiles set what a freshly installed host looks like. Keep them small: tests add what they need.
# containerd: 1.7 reached its end of life in September 2026 (containerd RELEASES.md); 2.3 is the first LTS of the
# 2.x line (containerd 2.3.0 release notes), the default here. containerd 2.x reads config version 3, where the CRI
# plugin's CNI settings are plugins."io.containerd.cri.v1.runtime".cni with the list bin_dirs (internal/cri/config/
# config.go CniConfig; docs/cri/config.md); 1.7 reads version 2 with plugins."io.containerd.grpc.v1.cri".cni.bin_dir.
# Without a config.toml both use C:\Program Files\containerd\cni\{bin,conf} (config_windows.go).
CONTAINERD_2_3_CONFIG = (  # what `containerd.exe config default` of 2.x writes for the CNI (other sections left out)
    "version = 3\n\n[plugins]\n  [plugins.'io.containerd.cri.v1.runtime']\n"
    "    [plugins.'io.containerd.cri.v1.runtime'.cni]\n"
    "      bin_dirs = ['C:\\Program Files\\containerd\\cni\\bin']\n"
    "      conf_dir = 'C:\\Program Files\\containerd\\cni\\conf'\n")
PROFILES = {
    "ws2022-containerd": {"build": 20348, "runtime": "containerd", "runtime_version": "2.3.5",
                          "containerd_config": CONTAINERD_2_3_CONFIG},
    # containerd 2.1 installed without a config.toml: the built-in defaults
    "ws2022-containerd-2.1": {"build": 20348, "runtime": "containerd", "runtime_version": "2.1.4"},
    # the last 1.7 (config version 2, bin_dir): still supported by the collection (containerd >= 1.6)
    "ws2022-containerd-1.7": {"build": 20348, "runtime": "containerd", "runtime_version": "1.7.27"},
    # containerd installed the sig-windows-tools way (Install-Containerd.ps1 -CNIBinPath c:/opt/cni/bin
    # -CNIConfigPath c:/etc/cni/net.d writes them into config.toml), not at the Program Files defaults.
    "ws2022-containerd-etc-cni": {"build": 20348, "runtime": "containerd", "runtime_version": "1.7.27",
                                  "containerd_config": (
        'version = 2\n\n[plugins]\n  [plugins."io.containerd.grpc.v1.cri"]\n'
        '    [plugins."io.containerd.grpc.v1.cri".cni]\n      bin_dir = "c:/opt/cni/bin"\n'
        '      conf_dir = "c:/etc/cni/net.d"\n')},
    # a config.toml containerd cannot load (`config dump` fails: "failed to load TOML")
    "ws2022-containerd-bad-config": {"build": 20348, "runtime": "containerd",
                                     "containerd_config": 'version = 2\n[plugins."io.containerd.grpc.v1.cri".cni\n'},
    "ws2019-containerd": {"build": 17763, "runtime": "containerd"},
    "ws2025-containerd": {"build": 26100, "runtime": "containerd"},
    "ws2022-docker": {"build": 20348, "runtime": "docker"},
    # Docker with Mirantis cri-dockerd: how the kubelet reaches Docker since dockershim left in 1.24
    "ws2022-docker-cri": {"build": 20348, "runtime": "docker", "cri_dockerd": True},
    "ws2022-bare": {"build": 20348, "runtime": None},
    # A freshly installed Windows Server 2022 without the Containers feature (so without the Host Compute Service) and
    # without containerd: what kubewin_containerd_install starts from (issue 23; winsim_features).
    "ws2022-no-containers": {"build": 20348, "runtime": None, "features": {"Containers": "Available"}},
    # containerd with the collection's crictl beside it: the integration target of win_image_pull starts there
    "ws2022-containerd-crictl": {"build": 20348, "runtime": "containerd", "runtime_version": "2.3.5",
                                 "containerd_config": CONTAINERD_2_3_CONFIG, "crictl": "1.34.0"},
    # the same, Windows Server 2025 (issue 23: the pause image for its build)
    "ws2025-no-containers": {"build": 26100, "runtime": None, "features": {"Containers": "Available"}},
    # containerd's release archive unpacked where kubewin.nodes puts it (C:\Program Files\containerd\bin), no service
    # yet: the integration target of win_containerd starts there.
    "ws2022-containerd-unpacked": {"build": 20348, "runtime": None, "unpacked": "2.3.5"},
    # containerd 1.5.18, the last 1.5 release (containerd/containerd releases): below the collection's floor.
    "ws2022-containerd-1.5": {"build": 20348, "runtime": "containerd", "runtime_version": "1.5.18"},
}


class SimError(Exception):
    """A Windows-side failure; the message is what Windows would have said."""


def _service(name, image_path, status="Running", display_name=None, dependencies=None):
    return {
        "name": name, "display_name": display_name or name, "description": "", "image_path": image_path,
        "start": 2, "delayed_autostart": 0, "dependencies": list(dependencies or []), "environment": [],
        "object_name": "LocalSystem", "status": status, "failure_actions": None,
        "failure_actions_on_non_crash": None, "pending_delete": False, "last_error": None, "parameters": {},
    }


def initial_state(hostname, profile="ws2022-containerd", adapters=None, build=None, runtime_version=None):
    """The state of a freshly installed host (what Windows + the runtime installer leave)."""
    prof = PROFILES[profile]
    build = build or prof["build"]
    adapters = adapters or [{"name": "Ethernet", "ip": "10.0.0.10", "prefix": 24,
                             "mac": "00-15-5D-00-00-10", "gateway": "10.0.0.1"}]
    services = {
        "hns": _service("hns", r"C:\Windows\system32\svchost.exe -k NetSvcs -p", display_name="Host Network Service"),
        "vmcompute": _service("vmcompute", r"C:\Windows\system32\vmcompute.exe",
                              display_name="Hyper-V Host Compute Service"),
        "winrm": _service("WinRM", r"C:\Windows\System32\svchost.exe -k NetworkService -p",
                          display_name="Windows Remote Management (WS-Management)"),
    }
    runtime, pipes, docker = None, [], None
    if (prof.get("features") or {}).get("Containers", "Installed") != "Installed":
        del services["vmcompute"]  # the Containers feature brings the Host Compute Service
    if prof["runtime"] == "containerd":
        runtime = {"name": "containerd", "version": runtime_version or prof.get("runtime_version") or "2.3.5"}
        services["containerd"] = _service(
            "containerd", r'"C:\Program Files\containerd\containerd.exe" --run-service',
            display_name="containerd container runtime")
        pipes.append(r"\\.\pipe\containerd-containerd")
    elif prof["runtime"] == "docker":
        runtime = {"name": "docker", "version": runtime_version or "24.0.7"}
        services["docker"] = _service("docker", r'"C:\Program Files\Docker\dockerd.exe" --run-service',
                                      display_name="Docker Engine")
        pipes.append(r"\\.\pipe\docker_engine")
        docker = {"networks": []}  # Docker's own network store (winsim_docker)
        if prof.get("cri_dockerd"):
            services["cri-dockerd"] = _service(
                "cri-dockerd", r'"C:\Program Files\cri-dockerd\cri-dockerd.exe" --run-service',
                display_name="cri-dockerd", dependencies=["docker"])
            pipes.append(r"\\.\pipe\cri-dockerd")
    return {
        "hostname": hostname.upper()[:15],  # NetBIOS-style computer name
        "build": build,
        "adapters": adapters,
        "runtime": runtime,
        "pipes": pipes,
        "services": services,
        "hns": {"networks": [], "endpoints": [], "policylists": [], "vswitches": {}, "blips": []},
        **({"docker": docker} if docker else {}),
        **({"features": dict(prof["features"])} if prof.get("features") else {}),
        # Windows Defender Firewall blocks inbound traffic that no rule allows (Microsoft Learn, "Windows Firewall
        # overview"; Windows Server's default inbound action is Block). Rules: winsim_firewall.
        "firewall": {"default_inbound_action": "Block", "rules": []},
        "env": {"Path": INITIAL_PATH},
        # The machine environment as of the last boot: what the WinRM session and its processes see.
        "env_boot": {"Path": INITIAL_PATH},
        "registry": {},
        "acls": {},
        "reboots": 0,
        "faults": {},
        "fault_hits": {},
    }


INITIAL_PATH = r"C:\Windows\system32;C:\Windows;C:\Windows\System32\WindowsPowerShell\v1.0\\"


class Host(object):
    """Open with ``Host.open()`` (a context manager holding the host lock); ``state`` is saved on exit."""

    def __init__(self, root, name):
        self.root = root
        self.name = name
        self.dir = os.path.join(root, "hosts", name)
        self.drive = os.path.join(self.dir, "C")
        self.state_file = os.path.join(self.dir, "state.json")
        self.state = None

    @classmethod
    def from_env(cls):
        root, name = os.environ.get(ENV_ROOT), os.environ.get(ENV_HOST)
        if not root or not name:
            raise SimError("not running under the winsim connection (%s/%s unset)" % (ENV_ROOT, ENV_HOST))
        return cls(root, name)

    def config(self):
        """Lab-wide settings written by make_inventory (lab cache dir, timeouts)."""
        path = os.path.join(self.root, "winsim.json")
        if os.path.exists(path):
            with open(path) as f:
                return json.load(f)
        return {}

    @contextlib.contextmanager
    def open(self, save=True):
        if not os.path.exists(self.state_file):
            raise SimError("simulated host %s has no state under %s (run make_inventory)" % (self.name, self.dir))
        with open(os.path.join(self.dir, "state.lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                with open(self.state_file) as f:
                    self.state = json.load(f)
                before = copy.deepcopy(self.state)
                try:
                    yield self
                finally:
                    # Saved even when the module fails: Windows keeps what happened before an error.
                    if save and self.state != before:
                        self._write()
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _write(self):
        tmp = self.state_file + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.state, f, indent=1, sort_keys=True)
        os.replace(tmp, self.state_file)

    def create(self, state):
        os.makedirs(self.drive, exist_ok=True)
        # MachineKeys: the machine key store's folder, there on every Windows (Microsoft Learn, "Understanding
        # machine-level and user-level RSA key containers")
        for d in (r"Windows\System32", r"ProgramData\Microsoft\Crypto\RSA\MachineKeys", r"Users\Administrator",
                  r"Windows\Temp"):
            os.makedirs(self.local_path("C:\\" + d), exist_ok=True)
        # xcopy.exe ships with Windows in System32; kubeadm's preflight looks for it on the Path
        # (cmd/kubeadm/app/preflight/checks_windows.go addExecChecks).
        with open(self.local_path("C:\\Windows\\System32\\xcopy.exe"), "w") as f:
            f.write("KUBEWIN-SIM-BINARY xcopy 10.0\n")
        self.state = state
        self._write()

    # --- paths ------------------------------------------------------------------------------
    def local_path(self, win_path):
        """Map a Windows path on C: to the simulated drive, matching names case-insensitively."""
        parts = split_win_path(win_path)
        cur = self.drive
        for part in parts:
            match = part
            if os.path.isdir(cur):
                lower = part.lower()
                for entry in os.listdir(cur):
                    if entry.lower() == lower:
                        match = entry
                        break
            cur = os.path.join(cur, match)
        return cur

    def win_path(self, local):
        rel = os.path.relpath(local, self.drive)
        return "C:\\" + ("" if rel == "." else rel.replace("/", "\\"))

    # --- faults -----------------------------------------------------------------------------
    def fault(self, operation):
        """Apply the fault configured for ``operation`` (fail_once, fail_always, timeout)."""
        mode = (self.state.get("faults") or {}).get(operation)
        if not mode:
            return
        hits = self.state.setdefault("fault_hits", {})
        hits[operation] = hits.get(operation, 0) + 1
        if mode == "fail_once":
            if hits[operation] > 1:
                return
            raise SimError("winsim fault injected (fail_once) for %s" % operation)
        if mode == "fail_always":
            raise SimError("winsim fault injected (fail_always) for %s" % operation)
        if mode == "timeout":
            raise SimError("winsim fault injected (timeout) for %s: The operation has timed out." % operation)
        raise SimError("unknown winsim fault mode %r for %s" % (mode, operation))


_DRIVE = re.compile(r"^([A-Za-z]):(?:[\\/]|$)")


def split_win_path(win_path):
    """'C:\\k\\x.exe' / 'C:/k/x.exe' -> ['k', 'x.exe']; other drives and relative paths are refused."""
    p = str(win_path).strip()
    if p.startswith("\\\\?\\"):
        p = p[4:]
    m = _DRIVE.match(p)
    if not m:
        raise SimError("Cannot find path '%s' (winsim supports absolute paths on C: only)" % win_path)
    if m.group(1).upper() != "C":
        raise SimError("Cannot find drive. A drive with the name '%s' does not exist." % m.group(1).upper())
    parts = [x for x in re.split(r"[\\/]+", p[2:]) if x and x != "."]
    out = []
    for x in parts:
        if x == "..":
            if out:
                out.pop()
        else:
            out.append(x)
    return out


def is_pipe(path):
    return str(path).lower().startswith("\\\\.\\pipe\\")
