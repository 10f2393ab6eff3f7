"""service_apply watches what it started in the same call (issue 22: the start and its start-up watch are one remote
operation), through the lab's interpreter: the samples are those service_watch takes (NSSM restarting its
application inside a running service is seen by the child's process id, shared/audits/powershell-2.md N6), and a
call that starts nothing, or is asked for no watch, watches nothing. No control plane needed."""

import os
from unittest import mock

import pytest
from winsim import core  # noqa: E402
from winsim.ps.winhost import run_kubewin_script as run_ps  # noqa: E402

# isort: split
# winsim.core has put the stand-in ansible.windows collection on sys.path.
from ansible_collections.ansible.windows.plugins.module_utils import winsim_scm  # noqa: E402

# as test_winsim_services' NSSM service
APP = {"Application": "C:\\k\\kube-proxy.exe",
       "AppParameters": "--kubeconfig=C:\\etc\\kube-proxy\\kubeconfig --network-name=cbr0", "AppThrottle": 500}
WATCH = {"WatchSeconds": 20, "WatchIntervalMs": 1000, "WatchChild": "kube-proxy.exe",
         "WatchLogFiles": ["C:\\var\\log\\kubelet\\demo.log"], "WatchTailLines": 5}


@pytest.fixture
def host(tmp_path):
    h = core.create_host(str(tmp_path), "w")
    core.write_binary(h.local_path("C:\\k\\kube-proxy.exe"), "kube-proxy", "v1.33.2")
    core.write_binary(h.local_path("C:\\k\\nssm.exe"), "nssm", "2.24")
    local = h.local_path("C:\\etc\\kube-proxy\\kubeconfig")
    os.makedirs(os.path.dirname(local), exist_ok=True)
    with open(local, "w") as f:
        f.write("x")
    # the host's clock moves only by what the script waits for (Start-Sleep, Start-Service): exact samples
    with mock.patch.object(winsim_scm.time, "time", return_value=1.9e9):
        yield h


def _apply(host, exit_after=None, **params):
    base = {"Name": "demo", "Action": "create", "CommandLine": "C:\\k\\nssm.exe", "DisplayName": "demo",
            "Description": "d", "Parameters": APP, "ParameterTypes": {k: "DWord" if isinstance(v, int) else "String"
                                                                     for k, v in APP.items()},
            "Run": "start"}
    with host.open():
        if exit_after:
            host.state.setdefault("app_exit_after", {})["demo"] = exit_after
        answer = run_ps(host, "service_apply", dict(base, **params), False)
    assert not answer["failed"], answer["error"]
    return answer["result"]


def test_a_start_with_watch_seconds_is_watched_in_the_same_call(host):
    from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import service_logs as sl

    result = _apply(host, exit_after=5, **WATCH)
    watch = result["watch"]
    assert result["status"] == "Running"
    assert watch["samples"][-1]["ms"] >= 20000 and len(watch["samples"]) >= 20
    assert len({s["pid"] for s in watch["samples"]}) == 1  # nssm.exe itself
    assert len({s["child"] for s in watch["samples"] if s["child"]}) >= 4  # a new application every 5 s
    assert watch["log_tail"] == {"C:\\var\\log\\kubelet\\demo.log": None}  # no such file
    msg = sl.judge_watch("demo", watch, [], "kube-proxy.exe")
    assert "its program kube-proxy.exe exited and NSSM started it again" in msg, msg


def test_a_service_that_stays_up_passes_the_watch(host):
    from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import service_logs as sl

    watch = _apply(host, **WATCH)["watch"]
    assert {s["status"] for s in watch["samples"]} == {"Running"}
    assert sl.judge_watch("demo", watch, [], "kube-proxy.exe") is None


@pytest.mark.parametrize("params", [{}, dict(WATCH, Run="none"), dict(WATCH, WatchSeconds=0)])
def test_no_watch_without_a_start_or_without_watch_seconds(host, params):
    result = _apply(host, **params)
    assert result["watch"] == {}  # nothing sampled
