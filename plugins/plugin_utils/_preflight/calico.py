# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Preflight: a Calico cluster, read by k8s_join_info (module_utils/_calico.py), against what Calico's Windows
nodes can run. Every setting Windows cannot run is its own failure naming kubespray's variable and the fix, all
in one run; then one more failure says that this collection cannot install Calico's Windows components yet, with
the settings that are already fine and the ones that need fixing.

Sources (projectcalico/calico release-v3.31; kubespray v2.31.0 roles/network_plugin/calico*, shared/fixtures/):
- Calico's Windows limitations (docs.tigera.io/calico/3.31/getting-started/kubernetes/windows-calico/limitations):
  no IP-in-IP, no BGP overlay, no cross-subnet VXLAN, no IPv6/dual stack, eBPF and WireGuard Linux-only, 4
  addresses of each Windows block reserved; VXLAN on UDP 4789 only (Calico's older requirements page, "the only
  port supported by Windows").
- node/windows-packaging/CalicoWindows: install-calico.ps1 "Windows does not support VXLANVNI < 4096";
  calico.psm1 "Calico VXLAN requires IPAM type calico-ipam"; config.ps1 CALICO_DATASTORE_TYPE (kubernetes).
- libcalico-go/lib/ipam/ipam.go: "global strict affinity should not be false for Windows node"; kubespray
  re-applies IPAMConfig from calico_ipam_strictaffinity (default false) on every network-role run.
- Windows builds (docs.tigera.io/calico/3.31/getting-started/kubernetes/windows-calico/requirements): Windows
  Server 2019 (1809, build 17763.1432 or later) and 2022 (build 20348.169 or later). Other Calico versions are
  not listed here, so refused (the stricter choice).

PRIVATE to the collection: no compatibility promise outside it.
"""

from __future__ import annotations

from ansible_collections.kubewin.nodes.plugins.module_utils import _versions as versions
from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight.findings import VARIABLES, Findings

WINDOWS_MIN_VNI, WINDOWS_PORT = 4096, 4789
# Windows keeps 3 addresses at a block's start and 1 at its end (Calico's limitations page)
WINDOWS_RESERVED_PER_BLOCK = 4
# Calico minor -> {build: (name, minimum update revision)}
CALICO_WINDOWS_BUILDS = {
    (3, 31): {17763: ("Windows Server 2019", 1432), 20348: ("Windows Server 2022", 169)},
}
KUBESPRAY_CALICO_FILE = "group_vars/k8s_cluster/k8s-net-calico.yml"
RERUN = ("in the kubespray inventory (%s) and re-run kubespray's network plugin role (cluster.yml --tags network)"
         % KUBESPRAY_CALICO_FILE)
NOT_YET = ("kubewin.nodes cannot install Calico's Windows components yet (its Calico support is being built, "
           "issue 24), so it changed nothing")


def _calico_minor(version):
    ver = versions.leading(version)
    return (ver[0], ver[1]) if ver else None


def _check_build(f, calico, windows_build):
    """Whether Calico (this cluster's version) supports this Windows build."""
    version = calico.get("version")
    minor = _calico_minor(version)
    build = versions.windows_build(windows_build)
    table = CALICO_WINDOWS_BUILDS.get(minor)
    if table is None:
        known = ", ".join("%d.%d" % m for m in sorted(CALICO_WINDOWS_BUILDS))
        unknown = "of unknown version (no ClusterInformation calicoVersion, no image tag)"
        f.fail("calico_version", "the cluster runs Calico %s; which Windows Server builds that version supports is "
                                 "not known here (known: Calico %s), so Windows nodes are refused: run a Calico "
                                 "version listed (kubespray's calico_version)" % (version or unknown, known))
        return None
    if build is None:
        return None  # check_windows_build names an unreadable build
    if build not in table:
        listed = ", ".join("%s (%d)" % (table[b][0], b) for b in sorted(table))
        f.fail(None, "this host runs Windows build %d, which Calico %s does not support on Windows nodes (Calico's "
                     "requirements list %s): use one of those" % (build, version, listed))
        return None
    name, min_ubr = table[build]
    ubr = versions.windows_update_revision(windows_build)
    if ubr is None:
        f.warn(None, "this host's Windows version (%s) has no update revision, so whether it has the update Calico %s "
                     "needs on %s (build %d.%d or later) was not checked"
               % (windows_build, version, name, build, min_ubr))
    elif ubr < min_ubr:
        f.fail(None, "this host runs Windows build %d.%d, below the %d.%d Calico %s needs on %s (Calico's "
                     "requirements): install the latest cumulative update on this host" % (
                         build, ubr, build, min_ubr, version, name))
        return None
    return "Windows build %d.%s (%s, Calico %s supports it from update %d.%d)" % (
        build, "?" if ubr is None else ubr, name, version, build, min_ubr)


def check_calico(calico, windows_build=None):
    """Failures for each Calico setting Windows nodes cannot run, then the refusal that installation is not
    available yet, listing what is fine and what is not. ``calico``: k8s_join_info's ``calico`` result."""
    f = Findings("calico")
    fine = []
    origins = calico.get("origins") or {}
    ref = "%s/%s" % (calico.get("namespace"), calico.get("name"))
    fine.append("Calico %s found (%s)" % (calico.get("version") or "(version unknown)", origins.get("version")
                                          or "DaemonSet %s" % ref))

    datastore = calico.get("datastore")
    if datastore != "kubernetes":
        f.fail("calico_datastore", "Calico's datastore is %s (%s); Calico on Windows nodes here needs the Kubernetes "
                                   "datastore (calico_datastore: kdd, kubespray's default). kubespray documents no "
                                   "migration of a running cluster from etcd to kdd; its other settings live in etcd "
                                   "and were not read" % (datastore, origins.get("datastore")))
        return _verdict(f, fine)
    fine.append("datastore kubernetes (kdd)")

    backend = calico.get("backend")
    if backend != "vxlan":
        f.fail("calico_network_backend",
               "Calico's networking backend is %s (ConfigMap kube-system/calico-config calico_backend); Windows nodes "
               "here need VXLAN (this collection does not support BGP or policy-only): set "
               "calico_network_backend: vxlan, calico_vxlan_mode: Always and calico_ipip_mode: Never %s "
               "(kubespray's docs/CNI/calico.md describes moving a running cluster from IP-in-IP to VXLAN)"
               % (backend or "unknown", RERUN))
    else:
        fine.append("backend vxlan")

    ipam = calico.get("ipam_type")
    if ipam and ipam != "calico-ipam":
        f.fail("calico_ipam_host_local",
               "Calico's CNI uses %s IPAM (ConfigMap kube-system/calico-config cni_network_config); Calico's Windows "
               "nodes need calico-ipam: set calico_ipam_host_local: false %s" % (ipam, RERUN))
    elif ipam:
        fine.append("IPAM calico-ipam")

    vni, port = calico.get("vxlan_vni"), calico.get("vxlan_port")
    if vni is None or vni < WINDOWS_MIN_VNI:
        f.fail("calico_vxlan_vni", "Calico's VXLAN VNI is %s (%s); Windows does not support a VNI below %d: set "
                                   "calico_vxlan_vni: %d %s"
               % (vni, origins.get("vxlan_vni"), WINDOWS_MIN_VNI, WINDOWS_MIN_VNI, RERUN))
    else:
        fine.append("VXLAN VNI %d" % vni)
    if port != WINDOWS_PORT:
        f.fail("calico_vxlan_port", "Calico's VXLAN port is %s (%s); Windows VXLAN works on UDP port %d only: set "
                                    "calico_vxlan_port: %d %s"
               % (port, origins.get("vxlan_port"), WINDOWS_PORT, WINDOWS_PORT, RERUN))
    else:
        fine.append("VXLAN port %d" % port)

    if calico.get("bpf_enabled"):
        f.fail("calico_bpf_enabled", "Calico's eBPF dataplane is on (FelixConfiguration default bpfEnabled); eBPF is "
                                     "Linux-only and Windows nodes cannot join it: set calico_bpf_enabled: false %s"
               % RERUN)
    if calico.get("wireguard_enabled"):
        f.fail("calico_wireguard_enabled", "Calico's WireGuard encryption is on (FelixConfiguration default "
                                           "wireguardEnabled); Calico has no WireGuard on Windows: set "
                                           "calico_wireguard_enabled: false %s" % RERUN)
    if not calico.get("bpf_enabled") and not calico.get("wireguard_enabled"):
        fine.append("no eBPF, no WireGuard")

    _check_pools(f, fine, calico.get("ippools") or [])

    if not calico.get("strict_affinity"):
        f.fail("calico_ipam_strictaffinity",
               "Calico's IPAMConfig default has strictAffinity false (%s); Calico's IPAM refuses Windows nodes without "
               "strict affinity: set calico_ipam_strictaffinity: true %s. Do not patch the IPAMConfig by hand: "
               "kubespray re-applies it from calico_ipam_strictaffinity on each run"
               % ("kubespray's default" if calico.get("ipamconfig_found") else "no IPAMConfig default, Calico's "
                                                                               "default", RERUN))
    else:
        fine.append("IPAM strictAffinity true")
    if not calico.get("auto_allocate_blocks", True):
        f.fail("calico_ipam_autoallocateblocks",
               "Calico's IPAMConfig default has autoAllocateBlocks false; a Windows node needs an IPAM block of its "
               "own: set calico_ipam_autoallocateblocks: true %s" % RERUN)

    build_fine = _check_build(f, calico, windows_build)
    if build_fine:
        fine.append(build_fine)
    return _verdict(f, fine)


def _check_pools(f, fine, pools):
    enabled = [p for p in pools if not p.get("disabled")]
    v4 = [p for p in enabled if p.get("ip_version") == 4]
    if not v4:
        f.fail("calico_pool_cidr", "Calico has no enabled IPv4 IP pool (%s); Windows nodes are IPv4 only (Calico has "
                                   "no IPv6 or dual stack on Windows): give the cluster an IPv4 pool (kubespray: "
                                   "ipv4_stack: true, calico_pool_cidr)"
               % (", ".join("%s %s" % (p.get("name"), p.get("cidr")) for p in enabled) or "no enabled pool"))
        return
    bad = False
    for pool in v4:
        where = "IPPool %s (%s)" % (pool.get("name"), pool.get("cidr"))
        selector = pool.get("node_selector")
        if selector and selector.strip() != "all()":
            where += " with nodeSelector %r, which may select Windows nodes" % selector
        if pool.get("ipip_mode") != "Never":
            bad = True
            f.fail("calico_ipip_mode", "%s has ipipMode %s; Windows has no IP-in-IP: set calico_ipip_mode: Never and "
                                       "calico_vxlan_mode: Always %s (kubespray's docs/CNI/calico.md describes the "
                                       "move from IP-in-IP to VXLAN)" % (where, pool.get("ipip_mode"), RERUN))
        elif pool.get("vxlan_mode") != "Always":
            bad = True
            f.fail("calico_vxlan_mode", "%s has vxlanMode %s; Windows nodes need vxlanMode Always (%s): set "
                                        "calico_vxlan_mode: Always %s"
                   % (where, pool.get("vxlan_mode"),
                      "no cross-subnet VXLAN on Windows" if pool.get("vxlan_mode") == "CrossSubnet"
                      else "no encapsulation means BGP routing, which this collection does not support", RERUN))
        block = pool.get("block_size")
        if block is not None and 2 ** (32 - block) <= WINDOWS_RESERVED_PER_BLOCK:
            bad = True
            f.fail("calico_pool_blocksize", "%s has blockSize %d: a Windows node keeps %d addresses of its block, "
                                            "which leaves none for pods; set calico_pool_blocksize to 29 or less (26 "
                                            "is kubespray's default; only a new pool can change it)"
                   % (where, block, WINDOWS_RESERVED_PER_BLOCK))
    if not bad:
        pools = ", ".join("%s (%s, blockSize %s)" % (p.get("name"), p.get("cidr"), p.get("block_size")) for p in v4)
        fine.append("IPv4 pool%s %s with vxlanMode Always, ipipMode Never" % ("s" if len(v4) > 1 else "", pools))


def _verdict(f, fine):
    to_fix = sorted(set(x["variable"] or "this host's Windows build" for x in f.failures))
    f.fail(VARIABLES["kube_network_plugin"],
           "the cluster runs Calico: %s. Already fine for Windows nodes: %s. %s" % (
               NOT_YET, "; ".join(fine),
               "Needs fixing first (each named above): %s" % ", ".join(to_fix) if to_fix
               else "Nothing else this collection checks needs fixing: what is missing is the installation of "
                    "Calico's Windows components (Calico 3.31 documents it only through the Tigera operator, which "
                    "kubespray does not use)"))
    return f.result()
