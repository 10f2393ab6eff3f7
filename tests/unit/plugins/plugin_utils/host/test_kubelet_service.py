import base64
import struct

import pytest

from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import kubelet as ks
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import service as ws

PATHS = dict(config_file="C:\\var\\lib\\kubelet\\config.yaml", kubeconfig="C:\\etc\\kubernetes\\kubelet.conf",
             bootstrap_kubeconfig="C:\\etc\\kubernetes\\bootstrap-kubelet.conf",
             cert_dir="C:\\var\\lib\\kubelet\\pki")


def go_quote(s):
    """What Go's %q does for the ASCII kubeadm writes: escape backslash and double quote."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


@pytest.mark.parametrize("text", ["", "latest", "1", "v1.x.2", None])
def test_bad_version_names_the_variable(text):
    with pytest.raises(ks.KubeletServiceError, match="kubelet_version"):
        ks.compute_flags(text)


def test_both_version_spellings_give_the_same_flags():
    assert ks.compute_flags("1.33.2") == ks.compute_flags("v1.33.2")


def test_kubeadm_flags_env_in_kubeadms_go_quoted_form():
    args = ("--container-runtime-endpoint=npipe:////./pipe/containerd-containerd "
            "--root-dir=C:\\var\\lib\\kubelet --node-labels=team=\"a b\"")
    env = ks.parse_env_file("# written by kubeadm\nKUBELET_KUBEADM_ARGS=%s\n" % go_quote(args))
    assert env["KUBELET_KUBEADM_ARGS"] == args
    flags = ks.flags_from_args(env["KUBELET_KUBEADM_ARGS"], "f")
    assert flags[1:] == [("root-dir", "C:\\var\\lib\\kubelet"), ("node-labels", "team=a b")]


def test_env_values_single_quoted_bare_and_hand_written_backslashes():
    env = ks.parse_env_file("A='x \\y'\r\nB=plain\nC=\"C:\\k\\new\"\n\n")
    assert env == {"A": "x \\y", "B": "plain", "C": "C:\\k\\new".replace("\\n", "\n")}
    # \k is not a Go escape, so a hand-written path keeps its backslash
    assert ks.parse_env_file('D="C:\\k\\kubelet"')["D"] == "C:\\k\\kubelet"


def test_env_line_without_equals_is_reported_with_its_line_number():
    with pytest.raises(ks.KubeletServiceError, match="line 2"):
        ks.parse_env_file("A=1\nnonsense\n")


def test_flags_precedence_base_then_kubeadm_then_extra_args():
    env = 'KUBELET_KUBEADM_ARGS="--hostname-override=win-1 --v=1 --node-ip=10.0.0.5"'
    flags, warnings = ks.compute_flags("v1.33.1", env, {"v": 4, "node-labels": "a=b"}, **PATHS)
    assert flags["v"] == "4" and flags["hostname-override"] == "win-1" and flags["node-labels"] == "a=b"
    assert flags["cgroups-per-qos"] == "false" and flags["enforce-node-allocatable"] == ""
    assert flags["resolv-conf"] == "" and "windows-service" in flags and flags["windows-service"] is None
    assert list(flags)[-1] == "node-labels" and warnings == []


def test_flags_removed_by_the_version_are_dropped_from_kubeadm_flags_env_with_a_warning():
    env = ('KUBELET_KUBEADM_ARGS="--container-runtime=remote --network-plugin=cni '
           '--pod-infra-container-image=registry.k8s.io/pause:3.9"')
    flags, warnings = ks.compute_flags("1.34.0", env, **PATHS)
    assert not {"container-runtime", "network-plugin", "pod-infra-container-image"} & set(flags)
    assert len(warnings) == 3 and any("removed it in 1.34" in w for w in warnings)
    old, old_warnings = ks.compute_flags("1.26.3", env, **PATHS)
    assert old["container-runtime"] == "remote" and old["pod-infra-container-image"].endswith("pause:3.9")
    assert len(old_warnings) == 1 and "--network-plugin" in old_warnings[0]  # gone since 1.24


def test_removed_flag_in_extra_args_fails_naming_it():
    with pytest.raises(ks.KubeletServiceError, match="--pod-infra-container-image.*removed in 1.34"):
        ks.compute_flags("v1.34.1", None, {"pod-infra-container-image": "pause:3.10"}, **PATHS)
    with pytest.raises(ks.KubeletServiceError, match="not a kubelet flag name"):
        ks.compute_flags("v1.33.0", None, {"--Bad Flag": 1}, **PATHS)


def test_pause_image_flag_only_below_1_27():
    assert ks.compute_flags("1.26.0", None, pod_infra_container_image="p:3.9")[0][
        "pod-infra-container-image"] == "p:3.9"
    flags, warnings = ks.compute_flags("1.27.0", None, pod_infra_container_image="p:3.9")
    assert "pod-infra-container-image" not in flags and "ignored" in warnings[0]


@pytest.mark.parametrize("arg", [
    "plain", "", "with space", 'quote"inside', "C:\\Program Files\\k\\", "trailing\\\\", '\\"', "a\tb",
    "--enforce-node-allocatable=", '--node-labels=a="b c"',
])
def test_windows_quoting_round_trips(arg):
    line = " ".join(ws.quote_windows_arg(a) for a in ["C:\\k\\kubelet.exe", arg, "--x=1"])
    assert ws.split_windows_command_line(line) == ["C:\\k\\kubelet.exe", arg, "--x=1"]


def test_split_follows_commandlinetoargvw_rules():
    assert ws.split_windows_command_line(r'a\\\"b "c d"  e\\f "g""h"') == ['a\\"b', "c d", "e\\\\f", 'g"h']


def test_command_line_is_what_the_kubelet_will_parse():
    flags = ks.compute_flags("v1.33.0", None, {"node-labels": "x=y z"}, **PATHS)[0]
    line = ks.render_command_line("C:\\Program Files\\k\\kubelet.exe", flags)
    argv = ws.split_windows_command_line(line)
    assert argv[0] == "C:\\Program Files\\k\\kubelet.exe"
    assert "--node-labels=x=y z" in argv and "--windows-service" in argv
    assert "--config=C:\\var\\lib\\kubelet\\config.yaml" in argv


def failure_blob(reset, actions):
    data = struct.pack("<5I", reset, 0, 0, len(actions), 20)
    for kind, delay in actions:
        data += struct.pack("<2I", kind, delay)
    return base64.b64encode(data).decode()


def test_failure_actions_registry_value_decodes():
    assert ws.decode_failure_actions(failure_blob(86400, [(1, 10000), (1, 10000), (0, 0)])) == {
        "reset_seconds": 86400, "actions": "restart/10000/restart/10000/none/0"}
    assert ws.decode_failure_actions(None) is None


def live_answer(desired, status="Running", **over):
    answer = {"exists": True, "status": status, "image_path": desired["command_line"], "start": 2,
              "delayed_autostart": 0, "dependencies": ["CONTAINERD"], "display_name": ks.DISPLAY_NAME,
              "description": ks.DESCRIPTION, "failure_actions": failure_blob(86400, [(1, 10000)] * 3),
              "failure_actions_on_non_crash": 1}
    answer.update(over)
    return answer


@pytest.fixture
def desired():
    flags = ks.compute_flags("v1.33.0", None, **PATHS)[0]
    return ws.desired_definition(ks.render_command_line("C:\\k\\kubelet.exe", flags), ["containerd"], 10,
                                 ks.DISPLAY_NAME, ks.DESCRIPTION)


def test_matching_service_is_left_alone_even_if_quoting_differs(desired, ):
    requoted = desired["command_line"].replace("C:\\k\\kubelet.exe", '"C:\\k\\kubelet.exe"', 1)
    plan = ws.plan_service("present", desired, live_answer(desired, image_path=requoted))
    assert not plan["changed"] and plan["action"] is None and plan["run"] == "none"


def test_missing_service_is_created_and_not_started_before_join(desired):
    plan = ws.plan_service("present", desired, {"exists": False})
    assert plan["changed"] and plan["action"] == "create" and plan["run"] == "none"


def test_changed_definition_restarts_a_running_kubelet_only(desired):
    plan = ws.plan_service("present", desired, live_answer(desired, image_path="C:\\k\\kubelet.exe --v=2"))
    assert plan["action"] == "update" and plan["run"] == "restart" and plan["differences"] == ["command_line"]
    stopped = ws.plan_service("present", desired, live_answer(desired, status="Stopped", failure_actions=None))
    assert stopped["action"] == "update" and stopped["run"] == "none" and stopped["differences"] == ["recovery"]


@pytest.mark.parametrize("over, field", [
    ({"start": 3}, "start_mode"), ({"delayed_autostart": 1}, "start_mode"),
    ({"dependencies": ["docker"]}, "dependencies"), ({"failure_actions_on_non_crash": 0}, "recovery"),
])
def test_each_part_of_the_definition_is_compared(desired, over, field):
    assert ws.plan_service("present", desired, live_answer(desired, **over))["differences"] == [field]


def test_started_stopped_and_absent(desired):
    assert ws.plan_service("started", desired, live_answer(desired, status="Stopped"))["run"] == "start"
    assert ws.plan_service("started", desired, live_answer(desired))["changed"] is False
    stop = ws.plan_service("stopped", desired, live_answer(desired))
    assert stop["run"] == "stop" and stop["action"] == "none"
    assert ws.plan_service("absent", {}, live_answer(desired))["action"] == "remove"
    assert ws.plan_service("absent", {}, {"exists": False})["changed"] is False
