# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The Calico settings Windows nodes depend on, from API objects as dicts (``kubewin.nodes.k8s_join_info``'s
``calico`` result). Plain functions, no API access; what Windows cannot run is decided on the controller
(plugin_utils/_preflight/calico.py).

Sources (projectcalico/calico release-v3.31 unless said; kubespray v2.31.0, shared/fixtures/):
- calico-node's env (kubespray roles/network_plugin/calico/templates/calico-node.yml.j2): DATASTORE_TYPE
  ``kubernetes`` for kdd, none with ETCD_ENDPOINTS for etcd (Calico's default datastore is etcdv3,
  libcalico-go/lib/apiconfig); FELIX_VXLANVNI/FELIX_VXLANPORT only when the backend is vxlan. Felix takes its
  env over the datastore (felix/config/config_params.go), defaults VXLANVNI 4096 and VXLANPort 4789.
- ConfigMap kube-system/calico-config (calico-config.yml.j2): ``calico_backend``, ``etcd_endpoints`` (etcd) and
  ``cni_network_config`` with the IPAM type (``host-local`` when calico_ipam_host_local).
- crd.projectcalico.org/v1 (manifests/crds.yaml): ClusterInformation ``default`` (spec.calicoVersion, written by
  calico-node), FelixConfiguration ``default`` (bpfEnabled, wireguardEnabled, vxlanVNI, vxlanPort), IPPools
  (cidr, ipipMode, vxlanMode, blockSize, disabled, nodeSelector; an empty mode is Never, blockSize 26 for IPv4
  and 122 for IPv6 by default), IPAMConfig ``default`` (strictAffinity, autoAllocateBlocks; without the object
  Calico's IPAM runs with strictAffinity false and autoAllocateBlocks true, libcalico-go/lib/ipam).
"""

from __future__ import annotations

import ipaddress
import json

CRD_GROUP, CRD_VERSION = "crd.projectcalico.org", "v1"
CALICO_CONFIGMAP = ("kube-system", "calico-config")
FELIX_DEFAULT_VNI, FELIX_DEFAULT_PORT = 4096, 4789
DEFAULT_BLOCK_SIZE = {4: 26, 6: 122}


def not_found():
    """The ``calico`` result when no calico-node DaemonSet exists (the Calico objects are then not read)."""
    return {"found": False, "namespace": None, "name": None, "version": None}


def _env(daemonset):
    """calico-node's env as {name: value or None} (a valueFrom counts as set, value None)."""
    template = ((daemonset or {}).get("spec") or {}).get("template") or {}
    for container in (template.get("spec") or {}).get("containers") or []:
        if (container or {}).get("name") == "calico-node":
            return dict((e.get("name"), e.get("value")) for e in container.get("env") or [] if isinstance(e, dict))
    return {}


def _image_version(daemonset):
    template = ((daemonset or {}).get("spec") or {}).get("template") or {}
    for container in (template.get("spec") or {}).get("containers") or []:
        image = str((container or {}).get("image") or "")
        path, dummy, tag = image.split("@", maxsplit=1)[0].rpartition(":")
        if path.endswith("/node") and "calico" in path and tag and "/" not in tag:
            return tag
    return None


def _int(value):
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


def _ipam_type(text):
    """The IPAM plugin type of calico-config's cni_network_config (its first plugin with an ipam); None if unknown.
    kubespray's template is JSON after its own substitutions, which leave the ipam block intact."""
    try:
        doc = json.loads(text)
    except (TypeError, ValueError):
        return None
    for plugin in (doc or {}).get("plugins") or [doc]:
        ipam = (plugin or {}).get("ipam") if isinstance(plugin, dict) else None
        if isinstance(ipam, dict) and ipam.get("type"):
            return str(ipam["type"])
    return None


def _mode(value):
    return str(value) if value else "Never"


def pool_facts(pool):
    """One IPPool CRD object -> {name, cidr, ip_version, ipip_mode, vxlan_mode, block_size, disabled, node_selector}."""
    spec = (pool or {}).get("spec") or {}
    cidr = spec.get("cidr")
    try:
        version = ipaddress.ip_network(str(cidr), strict=False).version
    except ValueError:
        version = None
    block = _int(spec.get("blockSize")) if spec.get("blockSize") is not None else DEFAULT_BLOCK_SIZE.get(version)
    return {
        "name": ((pool or {}).get("metadata") or {}).get("name"),
        "cidr": cidr,
        "ip_version": version,
        "ipip_mode": _mode(spec.get("ipipMode")),
        "vxlan_mode": _mode(spec.get("vxlanMode")),
        "block_size": block,
        "disabled": bool(spec.get("disabled")),
        "node_selector": spec.get("nodeSelector") or None,
    }


def facts(daemonset, ref, configmap=None, cluster_information=None, felix=None, ippools=None, ipamconfig=None):
    """The ``calico`` result for a found calico-node DaemonSet ``ref`` (namespace/name) and the Calico objects
    read beside it (None when absent; ``ippools`` the list's items)."""
    namespace, name = ref.split("/", 1)
    env = _env(daemonset)
    data = (configmap or {}).get("data") or {}
    felix_spec = (felix or {}).get("spec") or {}
    info_spec = (cluster_information or {}).get("spec") or {}
    ipam_spec = (ipamconfig or {}).get("spec") or {}

    version, version_origin = info_spec.get("calicoVersion"), "ClusterInformation default (calicoVersion)"
    if not version:
        version, version_origin = _image_version(daemonset), "calico/node image tag of DaemonSet %s" % ref
    if "DATASTORE_TYPE" in env:
        datastore, datastore_origin = env["DATASTORE_TYPE"] or None, "env DATASTORE_TYPE of DaemonSet %s" % ref
    elif "ETCD_ENDPOINTS" in env or "etcd_endpoints" in data:
        datastore, datastore_origin = "etcdv3", "ETCD_ENDPOINTS of DaemonSet %s (calico-config etcd_endpoints)" % ref
    else:
        # no DATASTORE_TYPE: Calico's default, etcdv3
        datastore, datastore_origin = "etcdv3", "Calico's default (DaemonSet %s sets no DATASTORE_TYPE)" % ref

    def effective(env_name, felix_key, default):
        if _int(env.get(env_name)) is not None:
            return _int(env[env_name]), "env %s of DaemonSet %s" % (env_name, ref)
        if _int(felix_spec.get(felix_key)) is not None:
            return _int(felix_spec[felix_key]), "FelixConfiguration default (%s)" % felix_key
        return default, "Felix's default"

    vni, vni_origin = effective("FELIX_VXLANVNI", "vxlanVNI", FELIX_DEFAULT_VNI)
    port, port_origin = effective("FELIX_VXLANPORT", "vxlanPort", FELIX_DEFAULT_PORT)
    return {
        "found": True, "namespace": namespace, "name": name,
        "version": version,
        "origins": {"version": version_origin if version else None, "datastore": datastore_origin,
                    "vxlan_vni": vni_origin, "vxlan_port": port_origin},
        "datastore": datastore,
        "backend": data.get("calico_backend") or (env.get("CALICO_NETWORKING_BACKEND") or None),
        "ipam_type": _ipam_type(data.get("cni_network_config")),
        "vxlan_vni": vni, "vxlan_port": port,
        "bpf_enabled": bool(felix_spec.get("bpfEnabled")),
        "wireguard_enabled": bool(felix_spec.get("wireguardEnabled")),
        "ippools": [pool_facts(p) for p in ippools or []],
        "ipamconfig_found": ipamconfig is not None,
        "strict_affinity": bool(ipam_spec.get("strictAffinity", False)),
        "auto_allocate_blocks": bool(ipam_spec.get("autoAllocateBlocks", True)),
    }
