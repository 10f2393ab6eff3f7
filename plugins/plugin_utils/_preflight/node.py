# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Preflight: the node's identity (name, Windows build, the adapter and IP it joins with) and an existing Node object.

PRIVATE to the collection: no compatibility promise outside it.
"""

from __future__ import annotations

import ipaddress
import re

from ansible_collections.kubewin.nodes.plugins.module_utils import _versions as versions
from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight.findings import VARIABLES, Findings

# Windows Server builds this collection supports (LTSC releases Kubernetes supports on Windows).
SUPPORTED_BUILDS = {
    17763: "Windows Server 2019",
    20348: "Windows Server 2022",
    26100: "Windows Server 2025",
}

NETBIOS_MAX = 15
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")

RESET_HINT = "playbooks/reset.yml"


# ---------------------------------------------------------------------------------------------------
# node name


def suggest_node_name(name):
    """A DNS-1123 subdomain close to ``name`` (lowercase, invalid characters replaced by '-')."""
    labels = []
    for label in str(name or "").lower().split("."):
        label = re.sub(r"[^a-z0-9-]+", "-", label).strip("-")[:63].strip("-")
        if label:
            labels.append(label)
    return ".".join(labels)[:253].strip(".-")


def check_node_name(node_name, hostname=None):
    f = Findings("node_name")
    var = VARIABLES["node_name"]
    name = node_name or ""
    problems = []
    if not name:
        problems.append("it is empty")
    else:
        if len(name) > 253:
            problems.append("it is %d characters long (at most 253)" % len(name))
        if name != name.lower():
            problems.append("it has uppercase letters (the kubelet registers lowercase names)")
        for label in name.lower().split("."):
            if len(label) > 63:
                problems.append("label %r is %d characters long (at most 63)" % (label, len(label)))
            elif not _DNS_LABEL.match(label):
                problems.append("label %r must consist of a-z, 0-9 and '-' and start and end with a letter or digit"
                                % label)
    if problems:
        origin = ""
        if hostname and name.lower() == hostname.lower():
            origin = " (it defaults to the Windows computer name %r)" % hostname
        suggestion = suggest_node_name(name or hostname)
        fix = ("set %s to a valid name%s" % (var, ", for example %r" % suggestion if suggestion else ""))
        f.fail(var, "node name %r%s is not a valid Kubernetes node name (DNS-1123 subdomain): %s; %s"
               % (name, origin, "; ".join(problems), fix))
    if hostname and len(hostname) > NETBIOS_MAX:
        f.warn(var, "the Windows computer name %r is longer than %d characters (%d): Windows truncates its "
                    "NetBIOS name to %d characters (%r), and the node name must not depend on the truncated form; "
                    "rename the computer to at most %d characters or set %s explicitly"
               % (hostname, NETBIOS_MAX, len(hostname), NETBIOS_MAX, hostname[:NETBIOS_MAX], NETBIOS_MAX, var))
    return f.result()


# ---------------------------------------------------------------------------------------------------
# Windows build


def supported_builds_table(supported_builds=None):
    """The supported builds as {build: label}; ``supported_builds`` (strings) overrides the default table."""
    if supported_builds is None:
        return dict(SUPPORTED_BUILDS)
    table = {}
    for item in supported_builds:
        build = versions.windows_build(item)
        if build is None:
            raise ValueError(item)
        table[build] = SUPPORTED_BUILDS.get(build, "build %d" % build)
    return table


# kubeadm's ValidateJoinConfiguration: caCertPath must be absolute and end in .crt (cmd/kubeadm/app/apis/kubeadm/
# validation/validation.go, "the ca certificate path must be an absolute path").
_KUBEADM_CA_PATH = re.compile(r"^[A-Za-z]:\\.+\.crt$")


def check_ca_cert_path(ca_cert_path, origin=None):
    """The cluster CA's path on the node (the cluster's kubelet clientCAFile, kubeadm's Windows form) must be one
    kubeadm join accepts as its caCertPath, or the join fails after its token was made."""
    f = Findings("ca_cert_path")
    if ca_cert_path and not _KUBEADM_CA_PATH.match(str(ca_cert_path)):
        f.fail("clientCAFile", "the cluster CA would be at %s on the node (%s), which kubeadm join cannot write: "
                               "its caCertPath must be an absolute path ending in .crt. Set "
                               "authentication.x509.clientCAFile in the kube-system/kubelet-config ConfigMap to "
                               "<certificatesDir>/ca.crt, kubeadm's default, and run again"
               % (ca_cert_path, origin or "the cluster's kubelet configuration"))
    return f.result()


def check_windows_build(windows_build, supported_builds=None):
    f = Findings("windows_build")
    var = VARIABLES["windows_build"]
    try:
        table = supported_builds_table(supported_builds)
    except ValueError as e:
        f.fail(var, "%s entry %r is not a Windows build number; list builds like '20348' or '10.0.20348'"
               % (var, str(e)))
        return f.result()
    if windows_build is None:
        return f.result()
    build = versions.windows_build(windows_build)
    listed = ", ".join("%d (%s)" % (b, table[b]) for b in sorted(table))
    if build is None:
        f.fail(var, "Windows version %r is not a Windows build like 10.0.20348; check the gathered facts "
                    "(ansible_distribution_version) of this host" % windows_build)
    elif build not in table:
        known = SUPPORTED_BUILDS.get(build)
        f.fail(var, "Windows build 10.0.%d%s is not supported; supported builds: %s. Use a supported Windows "
                    "Server (client editions such as Windows 10/11 cannot be nodes), or add %d to %s if you have "
                    "verified this build"
               % (build, " (%s)" % known if known else "", listed, build, var))
    return f.result()


# ---------------------------------------------------------------------------------------------------
# existing Node object


def check_existing_node(node_name, existing_node, joined):
    f = Findings("existing_node")
    var = VARIABLES["node_name"]
    node = existing_node or {}
    if not node.get("exists"):
        if joined:
            f.warn(var, "this host has C:\\etc\\kubernetes\\kubelet.conf but the cluster has no Node %r: it was "
                        "deleted or this host belongs to another cluster; if so, reset it (%s) before joining"
                   % (node_name, RESET_HINT))
        return f.result()
    node_os = (node.get("os") or "").lower()
    if node_os and node_os != "windows":
        f.fail(var, "Node %r already exists in the cluster and is a %s node; the name belongs to another machine: "
                    "set %s to a different name" % (node_name, node_os, var))
        return f.result()
    if joined:
        return f.result()
    if node.get("ready"):
        f.fail(var, "Node %r already exists and is Ready, but this host has not joined (no kubelet.conf): the name "
                    "is taken and kubeadm join refuses a Ready Node of the same name; reset that node first (%s "
                    "for a kubewin node; otherwise kubeadm reset on it and kubectl delete node %s) or set %s to a "
                    "different name"
               % (node_name, RESET_HINT, node_name, var))
    else:
        f.warn(var, "Node %r already exists (NotReady) and this host has not joined: kubeadm join refuses only a "
                    "Ready Node of the same name, so joining takes over the existing Node object with its labels "
                    "and taints; delete it first (kubectl delete node %s) if it belongs to another machine"
               % (node_name, node_name))
    return f.result()


# ---------------------------------------------------------------------------------------------------
# network adapter


def _usable_ipv4(values):
    out = []
    for value in values or []:
        try:
            ip = ipaddress.ip_interface(str(value).strip()).ip
        except ValueError:
            continue
        if ip.version == 4 and not ip.is_loopback and not ip.is_link_local:
            out.append(ip)
    return out


def adapter_candidates(adapters):
    """{physical adapter name: [IPv4]} for adapters with a usable IPv4 address.

    Once HNS has bound an adapter X to a vSwitch, X keeps no address and the host vNIC
    'vEthernet (X)' holds it: that address counts for X. Other 'vEthernet (...)' adapters
    (HNS's nat, cbr0_ep, ...) are HNS's own and not candidates.
    """
    names = {a["name"] for a in adapters}
    lower = {n.lower(): n for n in names}
    out = {}
    for a in adapters:
        ips = _usable_ipv4(a.get("ipv4"))
        if not ips:
            continue
        m = re.match(r"^vEthernet \((.*)\)$", a["name"], re.IGNORECASE)
        if m:
            owner = lower.get(m.group(1).lower())
            if owner is None:
                continue
            out.setdefault(owner, []).extend(ips)
        else:
            out.setdefault(a["name"], []).extend(ips)
    return out


def check_network_adapter(adapters, adapter_name, kube_network_plugin="flannel"):
    """Returns ((failures, warnings), node_ips) where node_ips are the chosen adapter's IPv4 addresses."""
    f = Findings("network_adapter")
    var = VARIABLES["adapter_name"]
    if adapters is None:
        return f.result(), []
    candidates = adapter_candidates(adapters)
    if adapter_name:
        by_lower = {a["name"].lower(): a["name"] for a in adapters}
        actual = by_lower.get(adapter_name.lower())
        if actual is None:
            f.fail(var, "%s is %r but this host has no adapter of that name; adapters: %s; set %s to one of them"
                   % (var, adapter_name, ", ".join(sorted(a["name"] for a in adapters)) or "none", var))
            return f.result(), []
        ips = candidates.get(actual) or _usable_ipv4(next(a for a in adapters if a["name"] == actual).get("ipv4"))
        if not ips:
            f.fail(var, "%s is %r but that adapter has no IPv4 address; set %s to the adapter that carries the "
                        "node's IPv4 address%s"
                   % (var, adapter_name, var,
                      " (%s)" % ", ".join(sorted(candidates)) if candidates else ""))
        return f.result(), ips
    if not candidates:
        f.fail(var, "no network adapter of this host has an IPv4 address (adapters: %s); the node needs one, or "
                    "set %s to the adapter to use" % (", ".join(sorted(a["name"] for a in adapters)) or "none", var))
        return f.result(), []
    if len(candidates) > 1:
        if (kube_network_plugin or "").lower() == "flannel":
            listing = ", ".join("%s %s" % (n, "/".join(str(i) for i in candidates[n])) for n in sorted(candidates))
            f.fail(var, "this host has %d adapters with an IPv4 address (%s) and %s is not set; flannel and HNS "
                        "must know the node's interface (HNS otherwise fails with \"An adapter was not found\"): "
                        "set %s to one of them" % (len(candidates), listing, var, var))
        return f.result(), []
    return f.result(), next(iter(candidates.values()))


def check_node_ip(node_ips, pods_net, svc_net):
    f = Findings("node_ip")
    for ip in node_ips:
        for var, net in ((VARIABLES["kube_pods_subnet"], pods_net), (VARIABLES["kube_service_addresses"], svc_net)):
            if net is not None and ip in net:
                f.fail(var, "the node address %s lies inside %s %s; node, pod and service networks must be "
                            "disjoint: give the node an address outside it (or choose another network when "
                            "creating the cluster)" % (ip, var, net))
    return f.result()


def node_subnet(adapters, node_ip):
    """The IPv4 network of the adapter address that is ``node_ip`` ('10.0.0.0/24'), from the adapters' ipv4 entries
    with a prefix length ('<address>/<PrefixLength>', Get-NetIPAddress); None when it is not known."""
    if not node_ip:
        return None
    for a in adapters or []:
        for value in a.get("ipv4") or []:
            if "/" not in str(value):
                continue
            try:
                iface = ipaddress.ip_interface(str(value).strip())
            except ValueError:
                continue
            if iface.version == 4 and str(iface.ip) == str(node_ip) and iface.network.prefixlen < 32:
                return str(iface.network)
    return None


def chosen_adapter(adapters, adapter_name, node_ips):
    """The physical adapter that carries the node IP: the one named by kubewin_network_adapter (in the
    host's own spelling), else the only candidate; None when there is none."""
    if not node_ips:
        return None
    for name, ips in adapter_candidates(adapters or []).items():
        if node_ips[0] in ips and (not adapter_name or name.lower() == adapter_name.lower()):
            return name
    by_lower = {a["name"].lower(): a["name"] for a in adapters or []}
    return by_lower.get((adapter_name or "").lower())


# ---------------------------------------------------------------------------------------------------
# Windows update level

# Windows Server 2025's overlay (vxlan) data path is fixed only by the October 2025 cumulative update: SIG Windows,
# relayed in rancher/rancher issue #50915 (2025-09-03): "Windows Server 2025 networking fix ... only impacting overlay
# networking mode. Targeted to release with 10B (oct 2025 patches)" (the project's review realnode.md, F5). 10B is
# KB5066835 of 2025-10-14, OS build 26100.6899 (Microsoft's release notes for that KB). host-gw is not affected.
WS2025_BUILD = 26100
WS2025_OVERLAY_KB = "KB5066835"
WS2025_OVERLAY_MIN_UBR = 6899
# Windows Server 2019 (17763) and vxlan: flannel v0.26.7 pkg/backend/vxlan/device_windows.go (lines 159-177) asks HNS
# for the HostRoute policy, which needs Windows build 18321 or later, and on 17763 only logs "Could not apply
# HostRoute policy ... requires Windows 18321" and goes on: the node joins, but pods cannot reach their own node
# over the overlay (the project's review realnode.md, F7). host-gw does not use that policy.
WS2019_BUILD = 17763
HOSTROUTE_MIN_BUILD = 18321


def check_windows_update(windows_build, backend):
    """Windows Server 2025 with flannel's vxlan backend needs the update level of the October 2025 cumulative
    update; below it the node joins and goes Ready but its overlay traffic is not expected to work. Windows Server
    2019 with vxlan gets a warning (no HostRoute policy before build 18321)."""
    f = Findings("windows_update")
    var = VARIABLES["windows_build"]
    if windows_build is None or str(backend or "vxlan").lower() != "vxlan":
        return f.result()
    if versions.windows_build(windows_build) == WS2019_BUILD:
        f.warn(VARIABLES["flannel_backend_type"],
               "Windows Server 2019 (%s) with flannel's vxlan backend: HNS refuses the HostRoute policy flannel asks "
               "for (it needs Windows build %d or later; flanneld only logs \"Could not apply HostRoute policy\" and "
               "goes on), so pods on this node cannot reach the node itself over the overlay (its address, "
               "hostNetwork pods, NodePorts there). Use flannel's host-gw backend (flannel_backend_type: host-gw, "
               "nodes on one L2 network) or Windows Server 2022 or later" % (windows_build, HOSTROUTE_MIN_BUILD))
        return f.result()
    if versions.windows_build(windows_build) != WS2025_BUILD:
        return f.result()
    ubr = versions.windows_update_revision(windows_build)
    fix = ("install the October 2025 cumulative update (%s, OS build %d.%d) or a later one on this host, or use "
           "flannel's host-gw backend" % (WS2025_OVERLAY_KB, WS2025_BUILD, WS2025_OVERLAY_MIN_UBR))
    if ubr is None:
        f.warn(var, "Windows Server 2025 (%s) without its update revision: its overlay (vxlan) networking needs OS "
                    "build %d.%d or later, which could not be checked; %s"
               % (windows_build, WS2025_BUILD, WS2025_OVERLAY_MIN_UBR, fix))
    elif ubr < WS2025_OVERLAY_MIN_UBR:
        f.fail(var, "Windows Server 2025 at OS build %d.%d is below %d.%d: its overlay (vxlan) networking is broken "
                    "until the October 2025 cumulative update (SIG Windows: \"only impacting overlay networking "
                    "mode\"); %s" % (WS2025_BUILD, ubr, WS2025_BUILD, WS2025_OVERLAY_MIN_UBR, fix))
    return f.result()
