"""The HNS action plugins, with the Windows host faked at the _execute_module boundary."""

import json

import pytest
from remote_host import RemoteHost

from ansible_collections.kubewin.nodes.plugins.action.win_hns_cleanup import ActionModule as CleanupAction
from ansible_collections.kubewin.nodes.plugins.action.win_hns_network import ActionModule as NetworkAction


class FakeHns:
    """Just enough of HNS v1: networks created by POST answer with the new object."""

    def __init__(self, networks=(), endpoints=(), policylists=(), refuse=None):
        self.networks, self.endpoints, self.policylists = list(networks), list(endpoints), list(policylists)
        self.refuse = refuse
        self.host = RemoteHost({"hns_state": self.state, "hns_calls": self.calls})

    def state(self, params):
        def ok(items):
            return json.dumps({"Success": True, "Output": items})

        return {"networks": ok(self.networks), "endpoints": ok(self.endpoints), "policylists": ok(self.policylists)}

    def calls(self, params):
        responses = []
        for call in params["Calls"]:
            if self.refuse:
                responses.append(json.dumps({"Success": False, "Error": self.refuse}))
                break
            kind, dummy, obj_id = call["path"].strip("/").partition("/")
            if call["method"] == "POST":
                net = dict(json.loads(call["request"]), ID="ID-%d" % len(self.networks))
                self.networks.append(net)
                responses.append(json.dumps({"Success": True, "Output": net}))
            else:
                store = getattr(self, kind)
                store[:] = [o for o in store if o["ID"] != obj_id]
                responses.append(json.dumps({"Success": True}))
        return {"responses": responses}


NAT = {"name": "host", "type": "nat", "address_prefix": "172.29.0.0/20", "gateway": "172.29.0.1"}


def test_create_then_rerun_changes_nothing_and_costs_one_remote_operation(make_action):
    fake = FakeHns()
    first = make_action(NetworkAction, dict(NAT), fake.host).run(task_vars={"inventory_hostname": "win1"})
    assert first["changed"] and first["id"] == "ID-0" and first["network"]["type"] == "NAT"
    assert fake.host.names() == ["hns_state", "hns_calls"]
    second = make_action(NetworkAction, dict(NAT), fake.host).run(task_vars={})
    assert second["changed"] is False and second["id"] == "ID-0"
    assert fake.host.names() == ["hns_state", "hns_calls", "hns_state"]


def test_check_mode_reports_the_change_and_runs_no_hns_call(make_action):
    fake = FakeHns()
    result = make_action(NetworkAction, dict(NAT), fake.host, check_mode=True, diff=True).run(task_vars={})
    assert result["changed"] and fake.networks == [] and fake.host.names() == ["hns_state"]
    assert result["diff"]["before"] == {} and result["diff"]["after"]["subnets"][0]["address_prefix"] == "172.29.0.0/20"


def test_drift_fails_with_host_and_remedy_and_changes_nothing(make_action):
    fake = FakeHns(networks=[{"ID": "N", "Name": "host", "Type": "NAT",
                              "Subnets": [{"AddressPrefix": "172.30.0.0/20", "GatewayAddress": "172.30.0.1"}]}])
    result = make_action(NetworkAction, dict(NAT), fake.host).run(task_vars={"inventory_hostname": "win1"})
    assert result["failed"] and result["msg"].startswith("win_hns_network on win1: network host: ")
    assert "recreate: true" in result["msg"]
    assert fake.host.names() == ["hns_state"]
    redo = make_action(NetworkAction, dict(NAT, recreate=True), fake.host).run(task_vars={})
    assert redo["changed"] and [n["Subnets"][0]["AddressPrefix"] for n in fake.networks] == ["172.29.0.0/20"]


def test_hns_refusal_is_reported_with_hns_text(make_action):
    fake = FakeHns(refuse="An adapter was not found")
    result = make_action(NetworkAction, dict(NAT, adapter_name="Ethernet9"), fake.host).run(
        task_vars={"inventory_hostname": "win2"})
    assert result["failed"] and "win2" in result["msg"] and "An adapter was not found" in result["msg"]


def test_missing_type_for_present_fails_before_any_remote_operation(make_action):
    fake = FakeHns()
    with pytest.raises(Exception, match="type"):
        make_action(NetworkAction, {"name": "host"}, fake.host).run(task_vars={})
    assert fake.host.calls == []


def test_cleanup_removes_everything_attached_and_second_run_is_a_no_op(make_action):
    fake = FakeHns(networks=[{"ID": "N1", "Name": "cbr0", "Type": "L2Bridge"},
                             {"ID": "N2", "Name": "keep", "Type": "NAT"}],
                   endpoints=[{"ID": "E1", "Name": "cbr0_ep", "VirtualNetwork": "N1"}],
                   policylists=[{"ID": "P1", "References": ["/endpoints/E1"]}])
    first = make_action(CleanupAction, {"networks": ["cbr0", "flannel.4096"]}, fake.host).run(task_vars={})
    assert first["changed"] and first["removed"] == {"networks": ["cbr0"], "endpoints": ["cbr0_ep"],
                                                     "policylists": ["P1"]}
    assert [n["Name"] for n in fake.networks] == ["keep"] and not fake.endpoints and not fake.policylists
    second = make_action(CleanupAction, {"networks": ["cbr0", "flannel.4096"]}, fake.host).run(task_vars={})
    assert second["changed"] is False
