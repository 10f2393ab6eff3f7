# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""flannel's rules for Windows nodes, in one place: the backends Windows flannel has, the VXLAN VNI and
port it needs, the defaults Linux flannel applies when net-conf.json leaves them out, and why a flannel
network cannot take Windows nodes. Used by cluster_facts (the cluster's flannel), preflight (the
inventory against the cluster), node_network and the roles (through the flannel_* filters).

Sources: flannel-io/flannel pkg/subnet/config.go (no Backend -> udp), pkg/backend/vxlan/vxlan.go (Linux:
VNI 1, port 0 meaning the kernel's 8472) and vxlan_windows.go (VNI >= 4096, UDP port 4789 only, no
DirectRouting).
"""

from __future__ import annotations

WINDOWS_BACKENDS = ("vxlan", "host-gw")
WINDOWS_VXLAN_MIN_VNI = 4096
VXLAN_MAX_VNI = 16777215
WINDOWS_VXLAN_PORT = 4789
# What Linux flannel uses when net-conf.json leaves Backend.VNI / Backend.Port out (or sets them 0).
LINUX_VXLAN_DEFAULT_VNI = 1
LINUX_VXLAN_DEFAULT_PORT = 8472
# What flannel runs when net-conf.json has no Backend at all.
DEFAULT_BACKEND = "udp"


def with_linux_defaults(backend_type, vni=None, port=None):
    """(backend, vni, port) as Linux flannel runs them: a vxlan VNI or port left out (None, or 0 for the
    port) takes flannel's Linux default. Other backends keep what they were given."""
    if backend_type == "vxlan":
        vni = LINUX_VXLAN_DEFAULT_VNI if not vni else vni
        port = LINUX_VXLAN_DEFAULT_PORT if not port else port
    return backend_type, vni, port


def vni_usable(vni):
    """Whether Windows flannel accepts this VXLAN VNI."""
    return vni is not None and WINDOWS_VXLAN_MIN_VNI <= vni <= VXLAN_MAX_VNI


def windows_problems(backend_type, vni=None, port=None, direct_routing=None):
    """Why Windows flannel could not join this flannel network, one sentence each (empty list: it can)."""
    if not backend_type:
        return ["net-conf.json has a Backend without a Type; flannel cannot start. Set Backend Type to "
                "vxlan or host-gw."]
    if backend_type not in WINDOWS_BACKENDS:
        return ["flannel backend %s is not supported on Windows; only vxlan and host-gw are (kubespray: "
                "flannel_backend_type)." % backend_type]
    problems = []
    if backend_type == "vxlan":
        if vni is not None and vni < WINDOWS_VXLAN_MIN_VNI:
            problems.append(
                "vxlan VNI is %d, but Windows flannel needs a VNI of %d or more, and Linux and Windows must use "
                "the same one: set Backend VNI to %d in net-conf.json (kubespray: flannel_vxlan_vni) and restart "
                "flannel on the Linux nodes." % (vni, WINDOWS_VXLAN_MIN_VNI, WINDOWS_VXLAN_MIN_VNI))
        if port is not None and port != WINDOWS_VXLAN_PORT:
            problems.append(
                "vxlan UDP port is %d, but Windows only uses %d: set Backend Port to %d in net-conf.json "
                "(kubespray: flannel_vxlan_port) and restart flannel on the Linux nodes."
                % (port, WINDOWS_VXLAN_PORT, WINDOWS_VXLAN_PORT))
        if direct_routing:
            problems.append("vxlan DirectRouting is not supported by Windows flannel; set it to false.")
    return problems
