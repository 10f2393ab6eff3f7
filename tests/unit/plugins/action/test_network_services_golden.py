"""flanneld's and kube-proxy's service command lines and kube-proxy's source VIP reservation, as node_preflight
(kubewin_node_spec.flanneld_argv), win_host_service (kube_proxy) and win_host_files (source_vip_reservation) make them:
byte for byte what the network role rendered before through the filters kube_log_runner, kube_proxy_args and
source_vip_reservation (network_services_golden.json was rendered from the role's own expressions through them, on
ansible-core 2.18 and 2.19 alike, in the commit that added it), so a re-run on a node set up before changes nothing."""

import base64
import json
from pathlib import Path

import pytest
from remote_host import FakeScm, RemoteHost

from ansible_collections.kubewin.nodes.plugins.action.win_host_files import ActionModule as FilesAction
from ansible_collections.kubewin.nodes.plugins.action.win_host_service import ActionModule as ServiceAction
from ansible_collections.kubewin.nodes.plugins.plugin_utils import _preflight as preflight
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import service as ws

GOLDEN = json.loads((Path(__file__).parent / "network_services_golden.json").read_text())
IDS = [c["id"] for c in GOLDEN]


@pytest.mark.parametrize("case", GOLDEN, ids=IDS)
def test_preflight_makes_flanneld_s_command_line_byte_for_byte(case):
    c = case["inputs"]
    inputs = dict(deployment_mode="services", kube_version=c["given"] or None, server_version=c["server"],
                  values={"kubewin_log_file_max_size_mb": c["max_size_mb"],
                          "kubewin_log_file_max_age_hours": c["max_age_hours"]})
    argv, failures = preflight.flanneld_argv(inputs, {"name": c["node_name"], "ip": c["ip"]})
    assert failures == [] and argv == case["flanneld_argv"]


def proxy_task(case):
    c = case["inputs"]
    return {"name": "kube-proxy", "path": "C:\\k\\kube-proxy.exe", "dependencies": ["flanneld"],
            "display_name": "kube-proxy",
            "kube_proxy": {"node_name": c["node_name"], "cluster_cidr": c["pods_subnet"], "backend": c["backend"],
                           "vni": c["vni"], "pod_cidr": c["pod_cidr"], "version": case["kube_version"],
                           "log_file_max_size_mb": c["max_size_mb"], "log_file_max_age_hours": c["max_age_hours"]}}


@pytest.mark.parametrize("case", GOLDEN, ids=IDS)
def test_win_host_service_registers_kube_proxy_s_command_line_byte_for_byte(make_action, case):
    scm = FakeScm()
    result = make_action(ServiceAction, proxy_task(case), scm.host).run(task_vars={})
    assert result["changed"] and not result.get("failed"), result.get("msg")
    assert scm.services["kube-proxy"]["image_path"] == ws.render_command_line(case["kube_proxy_argv"])
    assert ws.split_windows_command_line(scm.services["kube-proxy"]["image_path"]) == case["kube_proxy_argv"]
    # kube-log-runner's file is where a failed start's words are (the role gave it as log_files before)
    assert scm.host.calls[-1][1]["WatchLogFiles"] == ["C:\\var\\log\\kube-proxy\\kube-proxy.log"]


def test_a_kube_proxy_registered_from_the_filters_output_is_left_as_it_is(make_action):
    """A node the role set up before: its service has the filters' command line, and the run changes nothing."""
    case = GOLDEN[0]
    scm = FakeScm()
    old = {"name": "kube-proxy", "path": case["kube_proxy_argv"][0], "args": case["kube_proxy_argv"][1:],
           "log_files": ["C:\\var\\log\\kube-proxy\\kube-proxy.log"], "dependencies": ["flanneld"],
           "display_name": "kube-proxy"}
    assert make_action(ServiceAction, old, scm.host).run(task_vars={})["changed"]
    again = make_action(ServiceAction, proxy_task(case), scm.host).run(task_vars={})
    assert again["changed"] is False and again["definition"] == "none", again


@pytest.mark.parametrize("case", GOLDEN, ids=IDS)
def test_win_host_files_writes_the_source_vip_reservation_byte_for_byte(make_action, case):
    c = case["inputs"]
    calls = []
    host = RemoteHost({"files_state": lambda p: calls.append(p) or {}, "node_sync": lambda p: calls.append(p) or {}})
    result = make_action(FilesAction, {"source_vip_reservation": {
        "pod_cidr": c["pod_cidr"], "backend": c["backend"], "vni": c["vni"]}}, host).run(task_vars={})
    want = case["source_vip_reservation"]
    assert result["changed"] and result["written"] == [want["path"]]
    assert calls[1]["Files"] == [{"path": want["path"], "sddl": "",
                                  "content": base64.b64encode(want["content"].encode("utf-8")).decode("ascii")}]


def test_the_golden_cases_cover_both_backends_rotation_on_and_off_and_the_versions_asked_for():
    assert {c["inputs"]["backend"] for c in GOLDEN} == {"vxlan", "host-gw"}
    assert {"v1.37.2", "v1.33.2", "v1.33.7"} <= {c["kube_version"] for c in GOLDEN}
    rotated = ["-log-file-age" in " ".join(c["kube_proxy_argv"]) for c in GOLDEN]
    assert True in rotated and False in rotated
    assert any(any(a.startswith("--source-vip=") for a in c["kube_proxy_argv"]) for c in GOLDEN)


def test_flanneld_s_command_line_only_in_services_mode_and_only_with_the_node_s_address():
    assert preflight.flanneld_argv({"deployment_mode": "hostprocess", "kube_version": "v1.37.2"},
                                   {"ip": "192.0.2.20"}) == (None, [])
    argv, failures = preflight.flanneld_argv({"deployment_mode": "services", "kube_version": "v1.37.2"}, {"ip": None})
    assert argv is None and [(f["check"], f["variable"]) for f in failures] == [
        ("network_adapter", "kubewin_network_adapter")]
    # without the values, the defaults of kubewin_log_file_max_size_mb and _age_hours
    argv, failures = preflight.flanneld_argv({"deployment_mode": "services", "server_version": "v1.37.2"},
                                             {"ip": "192.0.2.20"})
    assert failures == [] and argv[2:4] == ["-log-file-size=100Mi", "-log-file-age=168h"]
