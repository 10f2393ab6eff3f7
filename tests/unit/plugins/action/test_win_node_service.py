"""kube-proxy / flanneld services, with the Windows host faked at the _execute_module boundary."""

from remote_host import FakeScm

from ansible_collections.kubewin.nodes.plugins.action.win_node_service import ActionModule
from ansible_collections.kubewin.nodes.plugins.module_utils.win_service import split_windows_command_line

PROXY = {"name": "kube-proxy", "path": "C:\\k\\kube-proxy.exe", "dependencies": ["kubelet"],
         "args": ["--windows-service", "--hostname-override=win 1", "--network-name=cbr0"],
         "environment": {"KUBE_NETWORK": "cbr0"}}


def test_started_registers_and_starts_then_rerun_is_unchanged(make_action):
    scm = FakeScm()
    first = make_action(ActionModule, dict(PROXY), scm.host).run(task_vars={})
    assert first["changed"] and first["definition"] == "create" and first["run"] == "start"
    assert first["status"] == "Running" and scm.services["kube-proxy"]["environment"] == ["KUBE_NETWORK=cbr0"]
    assert split_windows_command_line(scm.services["kube-proxy"]["image_path"]) == [PROXY["path"]] + PROXY["args"]
    again = make_action(ActionModule, dict(PROXY), scm.host).run(task_vars={})
    assert again["changed"] is False and scm.host.names()[-1] == "service_state"


def test_environment_change_restarts_the_service_once(make_action):
    scm = FakeScm()
    make_action(ActionModule, dict(PROXY), scm.host).run(task_vars={})
    changed = make_action(ActionModule, dict(PROXY, environment={"KUBE_NETWORK": "flannel.4096"}),
                          scm.host).run(task_vars={})
    assert changed["differences"] == ["environment"] and changed["run"] == "restart"
    assert scm.services["kube-proxy"]["restarts"] == 2


def test_check_mode_registers_nothing(make_action):
    scm = FakeScm()
    result = make_action(ActionModule, dict(PROXY), scm.host, check_mode=True).run(task_vars={})
    assert result["changed"] and scm.services == {}


def test_nssm_parameters_are_compared_by_the_values_the_task_sets(make_action):
    scm = FakeScm()
    flanneld = {"name": "flanneld", "path": "C:\\k\\nssm.exe",
                "parameters": {"Application": "C:\\k\\flanneld.exe", "AppEnvironmentExtra": ["NODE_NAME=win-1"]}}
    assert make_action(ActionModule, dict(flanneld), scm.host).run(task_vars={})["changed"]
    scm.services["flanneld"]["parameters"]["AppExit"] = "Restart"  # NSSM keeps its own values there too
    assert make_action(ActionModule, dict(flanneld), scm.host).run(task_vars={})["changed"] is False
    moved = dict(flanneld, parameters={"Application": "D:\\k\\flanneld.exe",
                                       "AppEnvironmentExtra": ["NODE_NAME=win-1"]})
    assert make_action(ActionModule, moved, scm.host).run(task_vars={})["differences"] == ["parameters"]


def test_a_service_that_does_not_stay_running_fails_the_task(make_action):
    scm = FakeScm()
    scm.after_start = "Paused"  # what NSSM shows while its program keeps exiting
    result = make_action(ActionModule, dict(PROXY), scm.host).run(task_vars={"inventory_hostname": "win-1"})
    assert result["failed"] and "kube-proxy on win-1" in result["msg"] and "is Paused" in result["msg"]
