# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Decisions about HNS (Host Networking Service) networks, endpoints and policy lists.

The remote side only returns raw HNS v1 answers and executes the calls planned here.
"""

from __future__ import annotations

import ipaddress
import json

# Option value -> the Type HNS v1 uses (and answers with).
NETWORK_TYPES = {
    "nat": "NAT",
    "l2bridge": "L2Bridge",
    "overlay": "Overlay",
    "transparent": "Transparent",
}


class HnsError(Exception):
    """HNS refused a request, or the input cannot describe a valid network."""


def parse_response(text, what):
    """Return the Output of a raw HNS v1 answer, raising HnsError with HNS's own error text."""
    try:
        answer = json.loads(text) if isinstance(text, str) else text
    except ValueError:
        raise HnsError("HNS returned an unreadable answer for %s: %r" % (what, text[:200])) from None
    if not isinstance(answer, dict) or not answer.get("Success"):
        error = answer.get("Error") if isinstance(answer, dict) else None
        raise HnsError("HNS refused %s: %s" % (what, error or "no error text"))
    output = answer.get("Output")
    return [] if output is None else output


def desired_network(name, network_type, address_prefix=None, gateway=None, adapter_name=None, vsid=None):
    """Validate the options of one network and return its normalized desired form."""
    if network_type not in NETWORK_TYPES:
        raise HnsError("type must be one of %s, got %r" % (", ".join(sorted(NETWORK_TYPES)), network_type))
    subnet = None
    if address_prefix:
        try:
            net = ipaddress.ip_network(address_prefix, strict=True)
        except ValueError as e:
            raise HnsError("address_prefix %r is not a valid network prefix: %s" % (address_prefix, e)) from None
        if gateway:
            try:
                gw = ipaddress.ip_address(gateway)
            except ValueError:
                raise HnsError("gateway %r is not an IP address" % gateway) from None
            if gw not in net:
                raise HnsError("gateway %s is outside address_prefix %s" % (gateway, address_prefix))
        subnet = {"address_prefix": str(net), "gateway": gateway or None, "vsid": vsid}
    elif gateway:
        raise HnsError("gateway needs address_prefix")
    if network_type == "overlay":
        if vsid is None:
            raise HnsError("an overlay network needs vsid (flannel uses its VNI, at least 4096)")
        if subnet is None:
            raise HnsError("an overlay network needs address_prefix (the node's pod subnet)")
    elif vsid is not None:
        raise HnsError("vsid applies to overlay networks only")
    if network_type == "l2bridge" and subnet is None:
        raise HnsError("an l2bridge network needs address_prefix")
    return {
        "name": name,
        "type": NETWORK_TYPES[network_type],
        "subnets": [subnet] if subnet else [],
        "adapter_name": adapter_name or None,
    }


def live_network(raw):
    """Normalize a network object as HNS v1 returns it."""
    subnets = []
    for s in raw.get("Subnets") or []:
        vsid = None
        for p in s.get("Policies") or []:
            if isinstance(p, str):  # some HNS versions return policies as JSON text
                p = json.loads(p)
            if p.get("Type") == "VSID":
                vsid = p.get("VSID")
        subnets.append({"address_prefix": s.get("AddressPrefix"), "gateway": s.get("GatewayAddress") or None,
                        "vsid": vsid})
    return {
        "id": raw.get("ID") or raw.get("Id"),
        "name": raw.get("Name"),
        "type": raw.get("Type"),
        "subnets": subnets,
        "adapter_name": raw.get("NetworkAdapterName") or None,
    }


def network_request(desired):
    """The JSON document for POST /networks/ (HNS v1)."""
    doc = {"Name": desired["name"], "Type": desired["type"]}
    if desired["subnets"]:
        doc["Subnets"] = []
        for s in desired["subnets"]:
            subnet = {"AddressPrefix": s["address_prefix"]}
            if s["gateway"]:
                subnet["GatewayAddress"] = s["gateway"]
            if s["vsid"] is not None:
                subnet["Policies"] = [{"Type": "VSID", "VSID": s["vsid"]}]
            doc["Subnets"].append(subnet)
    if desired["adapter_name"]:
        doc["NetworkAdapterName"] = desired["adapter_name"]
    return json.dumps(doc, sort_keys=True)


COMPARED = ("type", "address_prefix", "gateway", "adapter_name", "vsid")


def differences(desired, live, compare=COMPARED):
    """Fields of ``compare`` where the live network differs from the desired one: [(field, live, desired)].

    Only what the task specifies is compared: an unset gateway or adapter is left to HNS. Without
    address_prefix, gateway and VSID are looked up in any live subnet.
    """
    diffs = []
    if "type" in compare and desired["type"].lower() != (live["type"] or "").lower():
        diffs.append(("type", live["type"], desired["type"]))
    if "adapter_name" in compare and desired["adapter_name"] \
            and desired["adapter_name"].lower() != (live["adapter_name"] or "").lower():
        diffs.append(("adapter_name", live["adapter_name"], desired["adapter_name"]))
    live_subnets = {s["address_prefix"]: s for s in live["subnets"]}
    for s in desired["subnets"]:
        have = live_subnets.get(s["address_prefix"])
        if have is None and "address_prefix" in compare:
            diffs.append(("address_prefix", sorted(live_subnets) or None, s["address_prefix"]))
            continue
        candidates = [have] if have else list(live_subnets.values())
        if "gateway" in compare and s["gateway"] and s["gateway"] not in [c["gateway"] for c in candidates]:
            diffs.append(("gateway", [c["gateway"] for c in candidates] if not have else have["gateway"], s["gateway"]))
        if "vsid" in compare and s["vsid"] is not None and s["vsid"] not in [c["vsid"] for c in candidates]:
            diffs.append(("vsid", [c["vsid"] for c in candidates] if not have else have["vsid"], s["vsid"]))
    return diffs


def public_view(net):
    """The network as reported to the user and in diffs (no HNS internals)."""
    if net is None:
        return {}
    view = {"name": net["name"], "type": net["type"], "subnets": net["subnets"]}
    if net.get("adapter_name"):
        view["adapter_name"] = net["adapter_name"]
    if net.get("id"):
        view["id"] = net["id"]
    return view


def _ref_id(reference):
    return reference.rstrip("/").rsplit("/", 1)[-1].lower()


def removal_calls(network_ids, endpoints, policylists):
    """HNS calls that remove networks with everything attached to them.

    HNS refuses to delete an endpoint a policy list still references, and a network that still
    has endpoints, so the order is: policy lists, endpoints, networks.
    Returns (calls, summary) where summary names what goes.
    """
    ids = {i.lower() for i in network_ids}
    doomed_eps = [e for e in endpoints if (e.get("VirtualNetwork") or "").lower() in ids]
    doomed_ep_ids = {(e.get("ID") or "").lower() for e in doomed_eps}
    doomed_pls = [p for p in policylists
                  if any(_ref_id(r) in doomed_ep_ids for r in (p.get("References") or []))]
    calls = [{"method": "DELETE", "path": "/policylists/%s" % p["ID"], "request": ""} for p in doomed_pls]
    calls += [{"method": "DELETE", "path": "/endpoints/%s" % e["ID"], "request": ""} for e in doomed_eps]
    calls += [{"method": "DELETE", "path": "/networks/%s" % i, "request": ""} for i in network_ids]
    summary = {
        "policylists": [p["ID"] for p in doomed_pls],
        "endpoints": [e.get("Name") or e["ID"] for e in doomed_eps],
    }
    return calls, summary


def plan_network(desired, state, state_answer, recreate=False, compare=COMPARED):
    """Decide what to do for one network.

    ``state_answer`` is the hns_state script's result. Returns a dict with ``changed``, ``calls``
    (to execute in order), ``before``/``after`` views, ``differences`` and ``removed``; raises
    HnsError when the network drifted and ``recreate`` is false.
    """
    networks = [live_network(n) for n in parse_response(state_answer["networks"], "listing networks")]
    matches = [n for n in networks if n["name"] == desired["name"]]
    if len(matches) > 1:
        raise HnsError("%d HNS networks are named %r; remove the extras (win_hns_cleanup) and re-run"
                       % (len(matches), desired["name"]))
    live = matches[0] if matches else None
    plan = {"changed": False, "calls": [], "before": public_view(live), "after": public_view(live),
            "differences": [], "removed": {"policylists": [], "endpoints": []}, "live": live}
    if state == "absent":
        if live:
            eps = parse_response(state_answer["endpoints"], "listing endpoints")
            pls = parse_response(state_answer["policylists"], "listing policy lists")
            plan["calls"], plan["removed"] = removal_calls([live["id"]], eps, pls)
            plan["changed"], plan["after"] = True, {}
        return plan
    create = {"method": "POST", "path": "/networks/", "request": network_request(desired)}
    if live is None:
        plan.update(changed=True, calls=[create], after=public_view(dict(desired)))
        return plan
    plan["differences"] = differences(desired, live, compare)
    if not plan["differences"]:
        return plan
    if not recreate:
        raise HnsError(
            "HNS network %r differs from the task: %s. Recreating it interrupts this node's network "
            "connectivity; set recreate: true on the task to allow it."
            % (desired["name"], "; ".join("%s is %s, want %s" % d for d in plan["differences"])))
    eps = parse_response(state_answer["endpoints"], "listing endpoints")
    pls = parse_response(state_answer["policylists"], "listing policy lists")
    plan["calls"], plan["removed"] = removal_calls([live["id"]], eps, pls)
    plan["calls"].append(create)
    plan.update(changed=True, after=public_view(dict(desired)))
    return plan


def plan_cleanup(names, state_answer):
    """Plan the removal of the named networks (missing ones are fine) with their endpoints and
    policy lists. Returns (calls, removed) where removed lists networks, endpoints, policylists."""
    networks = [live_network(n) for n in parse_response(state_answer["networks"], "listing networks")]
    # In the order given: the reset role names flannel's networks first and External last, so the vSwitch
    # (and the host's network with it) goes with the last removal, as microsoft/SDN's KubeCluster.ps1 does.
    doomed = sorted((n for n in networks if n["name"] in set(names)), key=lambda n: names.index(n["name"]))
    if not doomed:
        return [], {"networks": [], "endpoints": [], "policylists": []}
    eps = parse_response(state_answer["endpoints"], "listing endpoints")
    pls = parse_response(state_answer["policylists"], "listing policy lists")
    calls, removed = removal_calls([n["id"] for n in doomed], eps, pls)
    removed["networks"] = [n["name"] for n in doomed]
    return calls, removed


def check_call_responses(calls, responses):
    """Raise HnsError naming the first call HNS refused (or that never ran)."""
    for i, call in enumerate(calls):
        if i >= len(responses):
            raise HnsError("HNS call %s %s was not run" % (call["method"], call["path"]))
        parse_response(responses[i], "%s %s" % (call["method"], call["path"]))
