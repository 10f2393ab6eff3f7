# Test-lab only: the HNS v1 API (vmcompute.dll!HNSCall) over a host's state.
"""HNSCall(method, path, request) -> raw JSON answer text, with the rules HNS enforces.

Rules: names are unique per object kind ("network already exists"); an L2Bridge/Overlay/Transparent
network binds an adapter ("An adapter was not found" for an unknown name, or when several adapters
exist and none is named); the first such network on an adapter creates a vSwitch, which blips the
host's connectivity (recorded in ``hns.blips``; the kubewin_lab.winsim connection fails the next module
execution as unreachable, as WinRM loses the host); removing the last one removes the vSwitch and blips
again; a network with endpoints cannot be deleted; an endpoint referenced by a policy list cannot be deleted.

The blip: binding an adapter to a new Hyper-V vSwitch moves its addresses to "vEthernet (<adapter>)" and
the host is unreachable meanwhile. microsoft/SDN Kubernetes/windows/helper.v2.psm1 (CreateExternalNetwork,
also helper.psm1): "Create a L2Bridge network to trigger a vSwitch creation. Do this only once as it causes
network blip" (a permanent network named External, found again by name only); Kubernetes/flannel/start.ps1
then starts flanneld and sleeps 1-10 s between steps. How long the blip lasts is not documented; remote
operations follow each other within a second, so the lab takes the stricter view that the next one always
falls into it (deterministic, no waiting in the lab).
"""

from __future__ import annotations

import json
import uuid

TYPES = {"nat": "NAT", "l2bridge": "L2Bridge", "overlay": "Overlay", "transparent": "Transparent",
         "ics": "ICS", "private": "Private", "l2tunnel": "L2Tunnel"}
EXTERNAL = ("L2Bridge", "Overlay", "Transparent", "L2Tunnel")


class HnsFail(Exception):
    pass


def _ok(output):
    return json.dumps({"Success": True, "Output": output})


def _err(text):
    return json.dumps({"Success": False, "Error": text, "ErrorCode": 2147942487})


def _new_id():
    return str(uuid.uuid4()).upper()


def call(state, method, path, request):
    """One HNSCall. Always returns the answer text; HNS reports failures in-band."""
    hns = state.setdefault("hns", {"networks": [], "endpoints": [], "policylists": [], "vswitches": {}, "blips": []})
    try:
        parts = [p for p in path.strip().split("/") if p]
        if not parts or parts[0].lower() not in ("networks", "endpoints", "policylists"):
            raise HnsFail("HNS failed with error : The parameter is incorrect. (unknown path %s)" % path)
        kind, oid = parts[0].lower(), (parts[1] if len(parts) > 1 else None)
        method = method.upper()
        objects = hns[kind]
        if method == "GET":
            if oid is None:
                return _ok(objects)
            return _ok(_find(objects, oid, kind))
        if method == "POST" and oid is None:
            doc = json.loads(request or "{}")
            return _ok(globals()["_create_" + kind](state, hns, doc))
        if method == "DELETE" and oid is not None:
            obj = _find(objects, oid, kind)
            globals()["_check_delete_" + kind](hns, obj)
            objects.remove(obj)
            if kind == "networks":
                _drop_unused_vswitch(hns, obj)
            return _ok(None)
        raise HnsFail("HNS failed with error : The parameter is incorrect. (%s %s)" % (method, path))
    except HnsFail as e:
        return _err(str(e))
    except ValueError as e:
        return _err("HNS failed with error : The parameter is incorrect. (invalid JSON: %s)" % e)


def _find(objects, oid, kind):
    for o in objects:
        if o["ID"].lower() == oid.lower():
            return o
    raise HnsFail("HNS failed with error : Element not found. (%s %s)" % (kind, oid))


def _create_networks(state, hns, doc):
    name, ntype = doc.get("Name"), TYPES.get(str(doc.get("Type", "")).lower())
    if not name or not ntype:
        raise HnsFail("HNS failed with error : The parameter is incorrect. (Name and a valid Type are required)")
    refused = (state.get("hns_refuse") or {}).get(ntype)
    if refused:  # an update broke this network type (winsim_updates effects; the lab's fault, seeded by tests)
        raise HnsFail(refused)
    if any(n["Name"] == name for n in hns["networks"]):
        raise HnsFail("HNS failed with error : {Object Exists} An attempt was made to create an object and the "
                      "object name already existed. (network already exists: %s)" % name)
    adapter = None
    if ntype in EXTERNAL:
        adapters = [a["name"] for a in state.get("adapters") or []]
        wanted = doc.get("NetworkAdapterName")
        if wanted:
            adapter = next((a for a in adapters if a.lower() == wanted.lower()), None)
        elif len(adapters) == 1:
            adapter = adapters[0]
        if adapter is None:
            raise HnsFail("HNS failed with error : An adapter was not found. ")
        if adapter not in hns["vswitches"]:
            # The first external network on an adapter builds a vSwitch: the NIC drops for seconds.
            hns["vswitches"][adapter] = "vEthernet (%s)" % adapter
            hns["blips"].append({"adapter": adapter, "network": name, "pending": True})
    subnets = []
    for s in doc.get("Subnets") or []:
        subnets.append({"AddressPrefix": s.get("AddressPrefix"), "GatewayAddress": s.get("GatewayAddress", ""),
                        "Policies": s.get("Policies") or []})
    net = {"ID": _new_id(), "Name": name, "Type": ntype, "Subnets": subnets, "Flags": doc.get("Flags", 0),
           "Policies": doc.get("Policies") or [], "State": 1, "Version": 38654705666, "Resources": {}}
    if adapter:
        net["NetworkAdapterName"] = adapter
        net["ManagementIP"] = next(a["ip"] for a in state["adapters"] if a["name"] == adapter)
    hns["networks"].append(net)
    return net


def _create_endpoints(state, hns, doc):
    name = doc.get("Name")
    net_ref = doc.get("VirtualNetwork") or ""
    net = next((n for n in hns["networks"] if n["ID"].lower() == net_ref.lower()
                or n["Name"] == doc.get("VirtualNetworkName")), None)
    if net is None:
        raise HnsFail("HNS failed with error : Element not found. (network %s)"
                      % (net_ref or doc.get("VirtualNetworkName")))
    if name and any(e.get("Name") == name for e in hns["endpoints"]):
        raise HnsFail("HNS failed with error : {Object Exists} An attempt was made to create an object and the "
                      "object name already existed. (endpoint already exists: %s)" % name)
    ep = {"ID": _new_id(), "Name": name, "VirtualNetwork": net["ID"], "VirtualNetworkName": net["Name"],
          "IPAddress": doc.get("IPAddress", ""), "MacAddress": doc.get("MacAddress", "00-15-5D-AA-00-01"),
          "Policies": doc.get("Policies") or [], "IsRemoteEndpoint": bool(doc.get("IsRemoteEndpoint")),
          "SharedContainers": []}
    hns["endpoints"].append(ep)
    return ep


def _create_policylists(state, hns, doc):
    refs = doc.get("References") or []
    for r in refs:
        eid = r.rstrip("/").rsplit("/", 1)[-1]
        _find(hns["endpoints"], eid, "endpoints")
    pl = {"ID": _new_id(), "References": refs, "Policies": doc.get("Policies") or []}
    hns["policylists"].append(pl)
    return pl


# The HNS v2 load balancers (kube-proxy's: it manages them through hcsshim's hcn package, k8s.io/kubernetes v1.37.2
# pkg/proxy/winkernel/hns.go getLoadBalancer -> hcn.HostComputeLoadBalancer.Create). Their properties as hcsshim
# v0.13.0 hcn/hcnloadbalancer.go defines HostComputeLoadBalancer (ID, HostComputeEndpoints, SourceVIP, FrontendVIPs,
# PortMappings [{Protocol 6|17, InternalPort, ExternalPort, Flags}], SchemaVersion). Kept in hns.loadbalancers; what
# they look like in the v1 /policylists/ view is not read anywhere, so the v1 API does not show them here.
def _v2_query(query):
    try:
        doc = json.loads(query or "")
    except ValueError:
        doc = None
    if not isinstance(doc, dict) or (doc.get("SchemaVersion") or {}).get("Major") != 2:
        # the stricter choice: what HNS does with another query is not documented
        raise HnsFail("HcnEnumerateLoadBalancers failed with HRESULT 0x80070057: The parameter is incorrect.")


def load_balancer_ids(state, query):
    """HcnEnumerateLoadBalancers: the IDs as a JSON array of GUID strings (hcsshim unmarshals []guid.GUID)."""
    _v2_query(query)
    return json.dumps([lb["ID"] for lb in (state.get("hns") or {}).get("loadbalancers") or []])


def load_balancer_properties(state, lb_id, query):
    """HcnOpenLoadBalancer + HcnQueryLoadBalancerProperties: the load balancer's JSON."""
    _v2_query(query)
    for lb in (state.get("hns") or {}).get("loadbalancers") or []:
        if lb["ID"].lower() == str(lb_id).lower():
            return json.dumps(lb)
    raise HnsFail("HcnOpenLoadBalancer failed with HRESULT 0x80070490: Element not found.")


def create_load_balancer(state, vip, protocol, port, target_port, source_vip=None, endpoints=()):
    """hcn AddLoadBalancer (hcsshim hcnloadbalancer.go): one frontend VIP, one port mapping."""
    lb = {"ID": _new_id(), "HostComputeEndpoints": list(endpoints), "FrontendVIPs": [vip],
          "PortMappings": [{"Protocol": protocol, "InternalPort": target_port, "ExternalPort": port}],
          "SchemaVersion": {"Major": 2, "Minor": 0}}
    if source_vip:
        lb["SourceVIP"] = source_vip
    state.setdefault("hns", {}).setdefault("loadbalancers", []).append(lb)
    return lb


def take_blip(state):
    """The vSwitch change the next remote operation runs into, marked as seen (None when there is none)."""
    for blip in (state.get("hns") or {}).get("blips") or []:
        if blip.get("pending"):
            blip["pending"] = False
            return blip
    return None


def _drop_unused_vswitch(hns, net):
    """HNS removes an adapter's vSwitch with the last external network on it (another blip)."""
    adapter = net.get("NetworkAdapterName")
    if adapter and adapter in hns["vswitches"] and not any(
            n.get("NetworkAdapterName") == adapter for n in hns["networks"]):
        del hns["vswitches"][adapter]
        hns["blips"].append({"adapter": adapter, "network": net["Name"], "removed": True, "pending": True})


def _check_delete_networks(hns, net):
    attached = [e for e in hns["endpoints"] if e["VirtualNetwork"].lower() == net["ID"].lower()]
    if attached:
        raise HnsFail("HNS failed with error : The network has endpoints attached and cannot be deleted. (%s: %s)"
                      % (net["Name"], ", ".join(e.get("Name") or e["ID"] for e in attached)))


def _check_delete_endpoints(hns, ep):
    for pl in hns["policylists"]:
        if any(r.rstrip("/").rsplit("/", 1)[-1].lower() == ep["ID"].lower() for r in pl.get("References") or []):
            raise HnsFail("HNS failed with error : The endpoint is in use by policy list %s and cannot be deleted."
                          % pl["ID"])


def _check_delete_policylists(hns, pl):
    return None


def flannel_network(state, backend="vxlan", vni=4096, pod_subnet="10.244.1.0/24", adapter=None):
    """What flanneld creates on a Windows node (flannel-io/flannel pkg/backend/*_windows.go)."""
    import ipaddress
    net = ipaddress.ip_network(pod_subnet)
    gw = str(net.network_address + 1)
    if backend == "vxlan":
        # Flags: hcn.EnableNonPersistent (8), as flannel v0.26.7 pkg/backend/vxlan/device_windows.go
        # newVXLANDevice creates it: HNS drops it at a reboot or its own restart (winsim_boot)
        req = {"Name": "flannel.%d" % vni, "Type": "Overlay", "Flags": 8,
               "Subnets": [{"AddressPrefix": pod_subnet, "GatewayAddress": gw,
                            "Policies": [{"Type": "VSID", "VSID": vni}]}]}
    else:
        # host-gw: HNS v1 POST /networks with no flags (pkg/backend/hostgw/hostgw_windows.go): it persists
        req = {"Name": "cbr0", "Type": "L2Bridge", "Subnets": [{"AddressPrefix": pod_subnet, "GatewayAddress": gw}]}
    if adapter:
        req["NetworkAdapterName"] = adapter
    answer = json.loads(call(state, "POST", "/networks/", json.dumps(req)))
    if not answer["Success"]:
        return answer
    if backend != "vxlan":  # host-gw: the bridge endpoint at .2 attached to the host
        call(state, "POST", "/endpoints/", json.dumps({"Name": "cbr0_ep", "VirtualNetwork": answer["Output"]["ID"],
                                                       "IPAddress": str(net.network_address + 2)}))
    return answer
