# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Turn the node_facts script's raw answer into the facts the roles decide on."""

from __future__ import annotations

import re

from ansible_collections.kubewin.nodes.plugins.module_utils import _versions as versions
from ansible_collections.kubewin.nodes.plugins.module_utils import _windows_paths as wp
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import containerd, firewall, runtime_cni, runtimes

NODE_SERVICES = ["containerd", "docker", "cri-dockerd", "kubelet", "kube-proxy", "flanneld", "windows_exporter"]
# The services the roles define (win_kubelet_service, win_host_service) whose whole definition this read returns, so
# that their tasks need no read of their own while nothing in the run has touched them (issue 22). Not the runtimes:
# an operator's runtime service may carry a proxy's credentials in its environment, and facts are printed at -v.
DEFINED_SERVICES = ["kubelet", "kube-proxy", "flanneld", "windows_exporter"]


def join_markers(ca_cert_path=None):
    """What kubeadm join leaves: kubelet.conf, bootstrap-kubelet.conf and the cluster CA at the JoinConfiguration's
    caCertPath (``ca_cert_path``, kubeadm's default when None). kubeadm's preflight refuses a join while any of
    them exists (FileAvailable checks)."""
    return [wp.KUBELET_CONF, wp.BOOTSTRAP_CONF, ca_cert_path or wp.CA_CERT]


def script_parameters(extra_paths=(), ca_cert_path=None, list_images=False):
    """node_facts' parameters; ``list_images``: also `crictl images -o json` (kubewin_prepull_images is not empty)."""
    params = {"Paths": join_markers(ca_cert_path) + list(extra_paths), "Services": NODE_SERVICES,
              "VersionOf": [r["service"] for r in runtimes.RUNTIMES.values()],
              "DefinitionOf": DEFINED_SERVICES, "FlagsFile": wp.KUBEADM_FLAGS,
              # containerd's effective CNI directories (its config.toml may move them).
              "ConfigDumpOf": ["containerd"], "ConfigFlagPattern": runtime_cni.CONTAINERD_CONFIG_FLAG,
              # the file names in the runtimes' CNI configuration directories (another configuration would be
              # loaded instead of 10-flannel.conf: runtime_cni.conf_dir_conflicts), in the same read
              "CniConfDirs": runtime_cni.DEFAULT_CONF_DIRS, "ConfDirPattern": runtime_cni.CONTAINERD_CONF_DIR_PATTERN,
              "DockerConfDirPattern": runtime_cni.CRI_DOCKERD_CONF_DIR_PATTERN,
              # the inbound rules the roles make, so that one already as wanted costs no remote operation
              "FirewallRulePattern": firewall.RULE_PATTERN}
    if list_images:
        params.update(Crictl=containerd.CRICTL_DIR + "\\crictl.exe", CrictlConfig=containerd.CRICTL_CONFIG)
    return params


def parse_runtime_version(output):
    """'containerd github.com/containerd/containerd/v2 v2.0.4 abc' or 'Docker version 24.0.7, build x'
    -> '2.0.4' / '24.0.7'; None when nothing looks like a version."""
    ver = versions.parse(output, whole=False)
    return versions.format_version(ver, prefix="") if ver else None


def kubeadm_process_path(machine_path, install_dir=wp.INSTALL_DIR):
    """The Path to run kubeadm join / upgrade node with: the install directory first, then the machine Path.

    Both commands run ``kubelet --version`` through a PATH lookup in their preflight (KubeletVersion and
    SystemVerification checks, kubernetes cmd/kubeadm/app/preflight/utils.go GetKubeletVersion), so the
    kubelet in ``install_dir`` must be on the Path of the kubeadm process. The roles also put
    ``install_dir`` on the machine Path (ansible.windows.win_path), but a process started from the
    current WinRM session keeps the environment of that session, so kubeadm gets it explicitly.
    """
    parts = [p for p in (machine_path or "").split(";") if p.strip()]
    same = install_dir.rstrip("\\").lower()
    rest = [p for p in parts if p.strip().strip('"').rstrip("\\").lower() != same]
    return ";".join([install_dir] + rest)


# ansible.windows win_path.ps1's $pathsplit_re, '((?<q>\s*"[^"]+"\s*)|(?<q>[^;]+))(;$|$|;)' (a quoted element may
# hold a ';'), with its two groups named q made one
_WIN_PATH_SPLIT = re.compile(r'(\s*"[^"]+"\s*|[^;]+)(;$|$|;)')


def path_has(machine_path, element=wp.INSTALL_DIR):
    """Whether ``element`` is on ``machine_path``, the machine Path as node_facts returns it, split and compared per
    element as ansible.windows.win_path does (its quote-aware split, then Get-IndexOfPathElement: quotes and
    backslashes trimmed at both ends, -ieq). The text differs from win_path's: node_facts reads the Path through
    Environment.GetEnvironmentVariable(..., Machine), which EXPANDS the REG_EXPAND_SZ value (.NET Framework reference
    source, environment.cs GetEnvironmentVariable -> registrykey.cs GetValue), while win_path compares the raw value
    (GetValue with DoNotExpandEnvironmentNames). So an element written %SystemDrive%\\k counts as present here, where
    win_path would add C:\\k: the effective Path (what a new logon, a service and kubeadm get) has it either way. The
    roles skip win_path when this already answers what they want (issue 22: no remote operation for a Path in its
    desired state); reset's removal runs when this is true, and win_path then decides on the raw value."""
    def key(text):
        return text.strip('"').strip("\\").lower()
    return any(key(m.group(1)) == key(element) for m in _WIN_PATH_SPLIT.finditer(machine_path or ""))


def join_state(paths, ca_cert_path=None):
    """joined: kubelet.conf exists (TLS bootstrap finished). partial: an interrupted join left
    bootstrap files behind, which kubeadm's preflight refuses; reset before joining again."""
    if paths.get(wp.KUBELET_CONF):
        return "joined"
    if any(paths.get(p) for p in join_markers(ca_cert_path)[1:]):
        return "partial"
    return "fresh"


def adapter_ipv4(adapter):
    """An adapter's IPv4 addresses as '<address>/<prefix length>' (Get-NetIPAddress's PrefixLength: the node's subnet,
    host-gw's OutBoundNAT exception), or the bare address where the script's ipv4_cidr gives no valid prefix."""
    out = []
    cidrs = list(adapter.get("ipv4_cidr") or [])
    for i, address in enumerate(adapter.get("ipv4") or []):
        cidr = str(cidrs[i]) if i < len(cidrs) else ""
        prefix = cidr.rpartition("/")[2] if cidr.partition("/")[0] == str(address) else ""
        out.append("%s/%s" % (address, prefix) if prefix.isdigit() and int(prefix) <= 32 else address)
    return out


def service_definitions(answer):
    """{service: what service_state would answer for it now}, for those of DEFINED_SERVICES the read settled (an
    existing service without its definition is left out: its task reads it); the kubelet's with kubeadm's flags file
    (path and text), as win_kubelet_service reads it by default. converge_service takes one as ``observed``."""
    out = {}
    for name in DEFINED_SERVICES:
        entry = (answer.get("services") or {}).get(name)
        if not entry or (entry.get("exists") and not entry.get("definition")):
            continue
        definition = dict(entry["definition"]) if entry.get("exists") else {"exists": False}
        definition.update(name=name, flags_file="", flags_file_content=None)
        if name == "kubelet":
            definition.update(flags_file=wp.KUBEADM_FLAGS, flags_file_content=answer.get("flags_file_content"))
        out[name] = definition
    return out


def node_facts(answer, ca_cert_path=None):
    version = answer.get("version") or {}
    build = "%s.%s.%s" % (version.get("major"), version.get("minor"), version.get("build"))
    services = answer.get("services") or {}
    pipes = set(answer.get("pipes") or [])
    runtime_facts = {}
    for runtime, names in runtimes.RUNTIMES.items():
        service, pipe = names["service"], names["pipe"]
        svc = services.get(service) or {}
        runtime_facts[runtime] = {
            "service_exists": bool(svc.get("exists")),
            "service_status": svc.get("status"),
            "pipe_exists": pipe in pipes,
            "version": parse_runtime_version(svc.get("version_output")),
        }
    adapters = [{"name": a.get("name"), "ipv4": adapter_ipv4(a)} for a in answer.get("adapters") or []]
    # plus firewall: {state: read|unknown, reason} and, only when read, firewall_rules: {lower-case rule name: its
    # options as win_firewall_rule takes them, None for a name two rules share}
    return dict({
        "hostname": answer.get("hostname"),
        "computer_name": answer.get("computer_name"),
        "windows_build": build,
        "windows_build_full": "%s.%s" % (build, version.get("ubr")) if version.get("ubr") is not None else build,
        "adapters": adapters,
        "runtimes": runtime_facts,
        # the collection's containerd (the service --register-service made for C:\Program Files\containerd\bin):
        # the one the upgrade playbook may replace
        # (registered with --log-file, or by an earlier release without it)
        "containerd_managed": str((services.get("containerd") or {}).get("image_path") or "").lower()
        in (containerd.service_command().lower(), containerd.service_command(log_file=False).lower()),
        # where the kubelet (--container-runtime-endpoint) and kubeadm (criSocket) reach each runtime
        "cri_endpoints": {runtime: runtimes.cri_endpoint(runtime) for runtime in runtimes.NAMES},
        "services": {name: {"exists": bool(s.get("exists")), "status": s.get("status")}
                     for name, s in services.items()},
        # the definitions of the services the roles define, for their tasks' first look (service_definitions)
        "service_definitions": service_definitions(answer),
        "paths": dict(answer.get("paths") or {}),
        "join_state": join_state(answer.get("paths") or {}, ca_cert_path),
        "machine_path": answer.get("machine_path") or "",
        # the install directory is on the machine Path (what the node role's win_path puts there, reset removes)
        "install_dir_on_path": path_has(answer.get("machine_path") or ""),
        # the Path kubeadm join / upgrade node run with (the install directory first)
        "kubeadm_path": kubeadm_process_path(answer.get("machine_path") or ""),
        # Where each runtime reads CNI configuration and plugins: {bin_dir, conf_dir, source} or {error}.
        # With conf_files (the names in conf_dir, None when it was not listed) and max_conf_num.
        "cni": {runtime: runtime_cni.with_conf_files(runtime_cni.runtime_cni_dirs(runtime, services), runtime, services,
                                                     answer.get("cni_conf_files"))
                for runtime in runtimes.NAMES},
        # the public half of the key secrets are sealed to (plugin_utils/_host/sealed.py); not a secret
        "transport_key": answer.get("transport_key"),
        # with list_images: {code, output} of `crictl images -o json` (code null: no crictl); else null
        "images": answer.get("images"),
    }, **firewall.firewall_facts(answer))
