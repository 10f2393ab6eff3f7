import json

import pytest

from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import hns


def wrap(items):
    return json.dumps({"Success": True, "Output": list(items)})


def answer(networks=(), endpoints=(), policylists=()):
    return {"networks": wrap(networks), "endpoints": wrap(endpoints), "policylists": wrap(policylists)}


def overlay(vsid=4096, prefix="10.244.3.0/24", gateway="10.244.3.1", net_id="N1", vsid_as_text=False):
    policy = {"Type": "VSID", "VSID": vsid}
    return {"ID": net_id, "Name": "flannel.4096", "Type": "Overlay", "NetworkAdapterName": "Ethernet0",
            "Subnets": [{"AddressPrefix": prefix, "GatewayAddress": gateway,
                         "Policies": [json.dumps(policy) if vsid_as_text else policy]}]}


DESIRED_OVERLAY = dict(name="flannel.4096", network_type="overlay", address_prefix="10.244.3.0/24",
                       gateway="10.244.3.1", adapter_name="Ethernet0", vsid=4096)


@pytest.mark.parametrize("kwargs, message", [
    (dict(name="x", network_type="bogus"), "type must be one of"),
    (dict(name="x", network_type="l2bridge"), "needs address_prefix"),
    (dict(name="x", network_type="overlay", address_prefix="10.0.0.0/24"), "needs vsid"),
    (dict(name="x", network_type="nat", vsid=4096), "vsid applies to overlay networks only"),
    (dict(name="x", network_type="l2bridge", address_prefix="10.0.0.1/24"), "not a valid network prefix"),
    (dict(name="x", network_type="l2bridge", address_prefix="10.0.0.0/24", gateway="10.0.1.1"), "outside"),
    (dict(name="x", network_type="nat", gateway="10.0.0.1"), "gateway needs address_prefix"),
])
def test_invalid_network_options_are_refused_with_the_reason(kwargs, message):
    with pytest.raises(hns.HnsError, match=message):
        hns.desired_network(**kwargs)


def test_network_request_is_an_hns_v1_document_with_vsid_policy():
    doc = json.loads(hns.network_request(hns.desired_network(**DESIRED_OVERLAY)))
    assert doc == {"Name": "flannel.4096", "Type": "Overlay", "NetworkAdapterName": "Ethernet0",
                   "Subnets": [{"AddressPrefix": "10.244.3.0/24", "GatewayAddress": "10.244.3.1",
                                "Policies": [{"Type": "VSID", "VSID": 4096}]}]}


def test_nat_network_without_subnet_lets_hns_choose():
    doc = json.loads(hns.network_request(hns.desired_network("host", "nat")))
    assert doc == {"Name": "host", "Type": "NAT"}


def test_missing_network_is_created():
    plan = hns.plan_network(hns.desired_network(**DESIRED_OVERLAY), "present", answer())
    assert plan["changed"] and [c["method"] for c in plan["calls"]] == ["POST"]
    assert plan["before"] == {} and plan["after"]["type"] == "Overlay"


@pytest.mark.parametrize("vsid_as_text", [False, True])
def test_matching_network_is_left_alone(vsid_as_text):
    plan = hns.plan_network(hns.desired_network(**DESIRED_OVERLAY), "present",
                            answer([overlay(vsid_as_text=vsid_as_text)]))
    assert not plan["changed"] and plan["calls"] == [] and plan["differences"] == []


def test_type_and_adapter_compare_case_insensitively():
    live = overlay()
    live["Type"], live["NetworkAdapterName"] = "overlay", "ETHERNET0"
    plan = hns.plan_network(hns.desired_network(**DESIRED_OVERLAY), "present", answer([live]))
    assert not plan["changed"]


def test_drift_fails_and_names_each_difference_unless_recreate():
    desired = hns.desired_network(**DESIRED_OVERLAY)
    with pytest.raises(hns.HnsError) as err:
        hns.plan_network(desired, "present", answer([overlay(vsid=4097, gateway="10.244.3.254")]))
    text = str(err.value)
    assert "vsid is 4097, want 4096" in text and "gateway is 10.244.3.254, want 10.244.3.1" in text
    assert "recreate: true" in text


def test_compare_only_the_named_fields():
    """The External network: found by name as microsoft/SDN does; a backend switch (type) or another adapter is
    drift, a subnet or gateway reported otherwise is not; the VSID only when asked (flannel's VNI 9999)."""
    desired = hns.desired_network(**DESIRED_OVERLAY)
    reported_otherwise = overlay(vsid=9999, prefix="192.168.255.0/30", gateway=None)
    plan = hns.plan_network(desired, "present", answer([reported_otherwise]), compare=["type", "adapter_name"])
    assert not plan["changed"] and plan["calls"] == [] and plan["differences"] == []
    with pytest.raises(hns.HnsError, match="differs from the task: type is L2Bridge, want Overlay"):
        hns.plan_network(desired, "present", answer([dict(reported_otherwise, Type="L2Bridge")]),
                         compare=["type", "adapter_name"])
    with pytest.raises(hns.HnsError, match="adapter_name is Ethernet1, want Ethernet0"):
        hns.plan_network(desired, "present", answer([dict(reported_otherwise, NetworkAdapterName="Ethernet1")]),
                         compare=["type", "adapter_name"])
    with pytest.raises(hns.HnsError, match=r"vsid is \[9999\], want 4096"):
        hns.plan_network(desired, "present", answer([reported_otherwise]), compare=["type", "adapter_name", "vsid"])
    with pytest.raises(hns.HnsError, match="address_prefix is .*want 10.244.3.0/24"):  # the default: every field
        hns.plan_network(desired, "present", answer([reported_otherwise]))


def test_recreate_removes_policy_lists_then_endpoints_then_network_then_creates():
    eps = [{"ID": "E1", "Name": "cbr0_ep", "VirtualNetwork": "N1"},
           {"ID": "E2", "Name": "other", "VirtualNetwork": "N9"}]
    pls = [{"ID": "P1", "References": ["/endpoints/E1"]}, {"ID": "P2", "References": ["/endpoints/E2"]}]
    plan = hns.plan_network(hns.desired_network(**DESIRED_OVERLAY), "present",
                            answer([overlay(vsid=4097)], eps, pls), recreate=True)
    assert [(c["method"], c["path"]) for c in plan["calls"]] == [
        ("DELETE", "/policylists/P1"), ("DELETE", "/endpoints/E1"), ("DELETE", "/networks/N1"),
        ("POST", "/networks/")]
    assert plan["removed"] == {"policylists": ["P1"], "endpoints": ["cbr0_ep"]}


def test_absent_is_a_no_op_when_missing_and_removes_attached_objects_when_present():
    assert not hns.plan_network({"name": "cbr0"}, "absent", answer())["changed"]
    plan = hns.plan_network({"name": "flannel.4096"}, "absent",
                            answer([overlay()], [{"ID": "E1", "VirtualNetwork": "n1"}]))
    assert [c["path"] for c in plan["calls"]] == ["/endpoints/E1", "/networks/N1"]


def test_duplicate_names_are_an_error_not_a_guess():
    with pytest.raises(hns.HnsError, match="2 HNS networks are named"):
        hns.plan_network(hns.desired_network(**DESIRED_OVERLAY), "present",
                         answer([overlay(net_id="A"), overlay(net_id="B")]))


def test_cleanup_touches_only_the_named_networks():
    nets = [overlay(net_id="N1"), {"ID": "N2", "Name": "nat", "Type": "NAT", "Subnets": []}]
    eps = [{"ID": "E1", "VirtualNetwork": "N1"}, {"ID": "E2", "VirtualNetwork": "N2"}]
    calls, removed = hns.plan_cleanup(["flannel.4096", "cbr0"], answer(nets, eps))
    assert [c["path"] for c in calls] == ["/endpoints/E1", "/networks/N1"]
    assert removed["networks"] == ["flannel.4096"]
    nothing = {"networks": [], "endpoints": [], "policylists": []}
    assert hns.plan_cleanup(["cbr0"], answer(nets, eps)) == ([], nothing)


def test_cleanup_removes_the_networks_in_the_order_given_so_external_goes_last():
    nets = [{"ID": "X", "Name": "External", "Type": "Overlay", "Subnets": []}, overlay(net_id="N1")]
    calls, removed = hns.plan_cleanup(["flannel.4096", "External"], answer(nets, []))
    assert [c["path"] for c in calls] == ["/networks/N1", "/networks/X"]
    assert removed["networks"] == ["flannel.4096", "External"]


def test_hns_refusal_text_reaches_the_user():
    calls = [{"method": "POST", "path": "/networks/", "request": "{}"}]
    with pytest.raises(hns.HnsError, match="HNS refused POST /networks/: An adapter was not found"):
        hns.check_call_responses(calls, [json.dumps({"Success": False, "Error": "An adapter was not found"})])
    with pytest.raises(hns.HnsError, match="was not run"):
        hns.check_call_responses(calls, [])


def test_the_argument_spec_offers_exactly_the_types_hns_knows():
    from ansible_collections.kubewin.nodes.plugins.module_utils import _windows_args as windows_args
    assert windows_args.HNS_NETWORK_ARGSPEC["type"]["choices"] == sorted(hns.NETWORK_TYPES)
