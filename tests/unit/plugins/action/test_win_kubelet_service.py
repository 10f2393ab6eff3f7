"""The kubelet service action plugin, with the Windows host faked at the _execute_module boundary."""

import pytest
from remote_host import FakeScm

from ansible_collections.kubewin.nodes.plugins.action.win_kubelet_service import ActionModule
from ansible_collections.kubewin.nodes.plugins.module_utils import _windows_paths as wp
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import kubelet as ks

ARGS = {"kubelet_version": "v1.33.2", "extra_args": {"v": 2}}


def test_register_then_rerun_is_unchanged(make_action):
    scm = FakeScm()
    first = make_action(ActionModule, dict(ARGS), scm.host).run(task_vars={"inventory_hostname": "win1"})
    assert first["changed"] and first["definition"] == "create" and first["status"] == "Stopped"
    assert "--windows-service" in first["command_line"] and "--v=2" in first["command_line"]
    assert scm.services["kubelet"]["dependencies"] == ["containerd"]
    again = make_action(ActionModule, dict(ARGS), scm.host).run(task_vars={})
    assert again["changed"] is False and scm.host.names()[-1] == "service_state"


def test_what_kubeadm_join_writes_takes_effect_with_one_restart(make_action):
    scm = FakeScm()
    make_action(ActionModule, dict(ARGS), scm.host).run(task_vars={})
    scm.services["kubelet"]["status"] = "Running"  # kubeadm join started it
    scm.flags_env = 'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=npipe:////./pipe/containerd-containerd"\n'
    result = make_action(ActionModule, dict(ARGS), scm.host).run(task_vars={})
    assert result["changed"] and result["run"] == "restart" and result["differences"] == ["command_line"]
    assert "--container-runtime-endpoint=npipe:////./pipe/containerd-containerd" in result["command_line"]
    assert scm.services["kubelet"]["restarts"] == 1
    assert make_action(ActionModule, dict(ARGS), scm.host).run(task_vars={})["changed"] is False


def test_check_mode_and_diff_change_nothing(make_action):
    scm = FakeScm()
    result = make_action(ActionModule, dict(ARGS), scm.host, check_mode=True, diff=True).run(task_vars={})
    assert result["changed"] and scm.services == {} and scm.host.names() == ["service_state"]
    assert result["diff"]["before"] == {} and result["diff"]["after"]["start_mode"] == "auto"


def test_old_flags_in_kubeadm_flags_env_are_dropped_with_a_warning(make_action):
    scm = FakeScm('KUBELET_KUBEADM_ARGS="--container-runtime=remote --pod-infra-container-image=pause:3.9"')
    result = make_action(ActionModule, {"kubelet_version": "v1.34.0"}, scm.host).run(task_vars={})
    assert "--container-runtime=" not in result["command_line"] and "pod-infra" not in result["command_line"]
    assert len(result["warnings"]) == 2


def test_bad_extra_arg_fails_before_any_change(make_action):
    scm = FakeScm()
    result = make_action(ActionModule, {"kubelet_version": "v1.34.0", "extra_args": {"network-plugin": "cni"}},
                         scm.host).run(task_vars={"inventory_hostname": "win3"})
    assert result["failed"] and "win3" in result["msg"] and "--network-plugin" in result["msg"]
    assert scm.services == {}


def test_absent_removes_and_is_idempotent(make_action):
    scm = FakeScm()
    make_action(ActionModule, dict(ARGS), scm.host).run(task_vars={})
    assert make_action(ActionModule, {"state": "absent"}, scm.host).run(task_vars={})["changed"]
    assert scm.services == {}
    assert make_action(ActionModule, {"state": "absent"}, scm.host).run(task_vars={})["changed"] is False


@pytest.mark.parametrize("runtime, deps", [("containerd", ["containerd"]), ("docker", ["cri-dockerd"])])
def test_dependency_follows_the_runtime(make_action, runtime, deps):
    scm = FakeScm()
    make_action(ActionModule, dict(ARGS, container_runtime=runtime), scm.host).run(task_vars={})
    assert scm.services["kubelet"]["dependencies"] == deps
    assert ks.DEFAULT_DEPENDENCIES[runtime] == deps


def _observed(scm, name="kubelet", flags_file=wp.KUBEADM_FLAGS):
    """What preflight's facts read (facts.service_definitions) hands the task for this service."""
    answer = scm.state({"Name": name, "FlagsFile": "x"})
    answer.update(name=name, flags_file=flags_file)
    return answer


def test_preflights_read_of_a_service_as_wanted_costs_no_remote_operation(make_action):
    """issue 22: the no-op run's kubelet task takes preflight's read (observed) instead of a service_state call."""
    scm = FakeScm()
    make_action(ActionModule, dict(ARGS), scm.host).run(task_vars={})
    calls = len(scm.host.calls)
    result = make_action(ActionModule, dict(ARGS, observed=_observed(scm)), scm.host).run(task_vars={})
    assert result["changed"] is False and len(scm.host.calls) == calls


def test_an_observed_service_that_differs_is_brought_in_line_from_that_read(make_action):
    scm = FakeScm()
    make_action(ActionModule, dict(ARGS), scm.host).run(task_vars={})
    observed = _observed(scm)
    calls = len(scm.host.calls)
    result = make_action(ActionModule, dict(ARGS, extra_args={"v": 4}, observed=observed), scm.host).run(task_vars={})
    assert result["changed"] and "--v=4" in scm.services["kubelet"]["image_path"]
    assert scm.host.names()[calls:] == ["service_apply"]


@pytest.mark.parametrize("other", [{"name": "kube-proxy"}, {"flags_file": "C:\\elsewhere\\flags.env"}])
def test_a_read_of_another_service_or_flags_file_is_not_taken(make_action, other):
    scm = FakeScm()
    make_action(ActionModule, dict(ARGS), scm.host).run(task_vars={})
    observed = dict(_observed(scm), **other)
    calls = len(scm.host.calls)
    make_action(ActionModule, dict(ARGS, observed=observed), scm.host).run(task_vars={})
    assert scm.host.names()[calls:] == ["service_state"]
