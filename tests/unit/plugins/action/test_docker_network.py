"""kubewin.nodes.win_docker_network (review-s6 D1): Docker's network host is made through Docker, since a running
dockerd does not see an HNS network made beside it; the decisions on the controller, the host faked."""

import json

from remote_host import RemoteHost

from ansible_collections.kubewin.nodes.plugins.action.win_docker_network import ActionModule

CLI = "C:\\Program Files\\Docker\\docker.exe"


class FakeDocker:
    """docker_state / docker_apply over a list of names; hns_state / hns_calls over HNS networks."""

    def __init__(self, names=(), hns=(), running=True):
        self.names, self.hns, self.running = list(names), list(hns), running
        self.host = RemoteHost({"docker_state": self.state, "docker_apply": self.apply, "hns_state": self.hns_state,
                                "hns_calls": self.hns_calls})

    def state(self, params):
        if not self.running:
            return {"cli": CLI, "names": None, "error": "docker network ls exited with code 1: error during connect"}
        return {"cli": CLI, "names": list(self.names), "error": None}

    def apply(self, params):
        if params["Action"] == "create":
            self.names.append(params["Name"])
        else:
            self.names.remove(params["Name"])
        return {"cli": CLI, "code": 0, "output": ["0123abcd"]}

    def hns_state(self, params):
        def ok(items):
            return json.dumps({"Success": True, "Output": items})
        return {"networks": ok(self.hns), "endpoints": ok([]), "policylists": ok([])}

    def hns_calls(self, params):
        for call in params["Calls"]:
            self.hns = [n for n in self.hns if n["ID"] != call["path"].rstrip("/").rsplit("/", 1)[-1]]
        return {"responses": [json.dumps({"Success": True}) for dummy in params["Calls"]]}


def test_made_through_docker_once_then_one_read(make_action):
    fake = FakeDocker()
    first = make_action(ActionModule, {"name": "host"}, fake.host).run(task_vars={})
    assert first["changed"] and not first.get("failed") and fake.names == ["host"]
    assert [c for c in fake.host.calls if c[0] == "docker_apply"] == [
        ("docker_apply", {"Service": "docker", "Name": "host", "Action": "create"})]
    fake.host.calls.clear()
    again = make_action(ActionModule, {"name": "host"}, fake.host).run(task_vars={})
    assert not again["changed"] and fake.host.names() == ["docker_state"]


def test_an_hns_network_docker_does_not_know_is_removed_before_docker_makes_its_own(make_action):
    fake = FakeDocker(hns=[{"Name": "host", "Type": "NAT", "ID": "HNS-1"}])
    result = make_action(ActionModule, {"name": "host"}, fake.host).run(task_vars={})
    assert result["changed"] and result["removed_from_hns"] and fake.hns == [] and fake.names == ["host"]
    assert fake.host.names() == ["docker_state", "hns_state", "hns_calls", "docker_apply"]


def test_check_mode_and_diff_change_nothing(make_action):
    fake = FakeDocker()
    result = make_action(ActionModule, {"name": "host"}, fake.host, check_mode=True, diff=True).run(task_vars={})
    assert result["changed"] and fake.names == [] and fake.host.names() == ["docker_state"]
    assert result["diff"] == {"before": {}, "after": {"docker_networks": ["host"]}}


def test_absent_runs_docker_network_rm_only_when_docker_has_it(make_action):
    fake = FakeDocker(names=["nat", "host"])
    assert make_action(ActionModule, {"name": "host", "state": "absent"}, fake.host).run(task_vars={})["changed"]
    assert fake.names == ["nat"]
    assert not make_action(ActionModule, {"name": "host", "state": "absent"}, fake.host).run(task_vars={})["changed"]


def test_a_docker_that_does_not_answer_fails_the_task_naming_host_and_fix(make_action):
    fake = FakeDocker(running=False)
    result = make_action(ActionModule, {"name": "host"}, fake.host).run(task_vars={"inventory_hostname": "w1"})
    assert result["failed"] and result["msg"].startswith("win_docker_network on w1: Docker network host: cannot read")
    assert "is the docker service running?" in result["msg"]


def test_a_failed_create_is_reported_with_dockers_output(make_action):
    fake = FakeDocker()
    fake.host.handlers["docker_apply"] = lambda p: {"cli": CLI, "code": 1, "output": ["Error response from daemon: x"]}
    result = make_action(ActionModule, {"name": "host"}, fake.host).run(task_vars={"inventory_hostname": "w1"})
    assert result["failed"] and result["msg"].endswith(
        "docker network create -d nat host exited with code 1: Error response from daemon: x")
    fake.host.handlers["docker_apply"] = lambda p: {"cli": CLI, "code": None, "output": []}
    result = make_action(ActionModule, {"name": "host"}, fake.host).run(task_vars={})
    assert "docker.exe does not exist: Docker's CLI is expected beside dockerd.exe" in result["msg"]


def test_absent_without_a_docker_that_answers_removes_nothing_and_warns_so_reset_goes_on(make_action):
    """review-s7 R1: reset's removal of host stopped the reset before the HNS cleanup when Docker was stopped or
    uninstalled (and a re-run could not pass with Docker uninstalled)."""
    stopped = FakeDocker(names=["host"], running=False)
    result = make_action(ActionModule, {"name": "host", "state": "absent"}, stopped.host).run(task_vars={})
    assert not result.get("failed") and not result["changed"] and stopped.host.names() == ["docker_state"]
    assert "docker network rm host" in result["warnings"][0] and "error during connect" in result["warnings"][0]
    gone = RemoteHost({"docker_state": lambda p: {"cli": None, "names": None,
                                                  "error": "the service docker does not exist"}})
    result = make_action(ActionModule, {"name": "host", "state": "absent"}, gone).run(task_vars={})
    assert not result.get("failed") and not result["changed"]
    assert "the service docker does not exist" in result["warnings"][0]
    # present still fails: a Docker node needs the network
    assert make_action(ActionModule, {"name": "host"}, stopped.host).run(task_vars={})["failed"]
