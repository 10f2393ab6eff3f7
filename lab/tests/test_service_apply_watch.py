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


# --- S1 (review-s4-windows): an error of the watch itself ends the watch, not the call ----------------------------
# service_apply as it was before (1b0bad9 .. 040ca88): a WMI or log read error failed the whole call after the start.
BEFORE_S1 = "040ca88"
LOG = "C:\\var\\log\\kubelet\\demo.log"


def _script_at(rev, name):
    import subprocess
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return subprocess.run(["git", "show", "%s:plugins/plugin_utils/scripts/%s.ps1" % (rev, name)], cwd=root,
                          check=True, capture_output=True, text=True).stdout


def _apply_with_fault(host, operation, text=None, **params):
    """service_apply (today's, or ``text``) with the lab fault ``operation`` set to fail_always: the answer as
    win_powershell gives it, failed or not."""
    from winsim.ps.winhost import execute

    base = {"Name": "demo", "Action": "create", "CommandLine": "C:\\k\\nssm.exe", "DisplayName": "demo",
            "Description": "d", "Parameters": APP, "ParameterTypes": {k: "DWord" if isinstance(v, int) else "String"
                                                                     for k, v in APP.items()},
            "Run": "start"}
    local = host.local_path(LOG)
    os.makedirs(os.path.dirname(local), exist_ok=True)
    with open(local, "w") as f:
        f.write("I1127 started\nE1127 failed\n")
    with host.open():
        host.state.setdefault("faults", {})[operation] = "fail_always"
        if text is None:
            from ansible_collections.kubewin.nodes.plugins.plugin_utils import _win_scripts as win_scripts
            text = win_scripts.load("service_apply")
        return execute(host, text, "service_apply", dict(base, **params), error_action="Stop", depth=8)


def test_a_log_that_vanishes_before_its_read_keeps_the_samples_and_says_so(host):
    params = dict(WATCH, WatchLogFiles=[LOG])
    old = _apply_with_fault(host, "cmdlet:get-content", _script_at(BEFORE_S1, "service_apply"), **params)
    assert old["failed"] and old["result"] == {}  # before: the started service's status and 20 samples lost
    with host.open():
        winsim_scm.stop(host, "demo", force=True)
        winsim_scm.delete(host.state, "demo")
    answer = _apply_with_fault(host, "filestream:open", **params)  # the tail is read through a FileStream (L2)
    assert not answer["failed"], answer["error"]
    result = answer["result"]
    assert result["status"] == "Running" and len(result["watch"]["samples"]) >= 20
    assert result["watch"]["log_tail"] == {LOG: None}
    assert result["watch"]["error"] == "reading %s: Exception calling \".ctor\" with \"4\" argument(s): \"Could " \
        "not find file '%s'.\"" % (LOG, LOG), result["watch"]["error"]


@pytest.mark.parametrize("wmi_class", ["win32_service", "win32_process"])
def test_a_wmi_error_in_the_watch_keeps_the_started_services_status_and_the_log_tail(host, wmi_class):
    old = _apply_with_fault(host, "cim:" + wmi_class, _script_at(BEFORE_S1, "service_apply"), **dict(
        WATCH, WatchLogFiles=[LOG]))
    assert old["failed"] and "Quota violation" in old["error"][0]["exception"]["message"]
    assert old["error"][0]["exception"]["type"] == "Microsoft.Management.Infrastructure.CimException"
    with host.open():
        assert winsim_scm.observe(host, winsim_scm.find(host.state, "demo"))[0] == "Running"  # it was started
        winsim_scm.stop(host, "demo", force=True)
        winsim_scm.delete(host.state, "demo")
    answer = _apply_with_fault(host, "cim:" + wmi_class, **dict(WATCH, WatchLogFiles=[LOG]))
    assert not answer["failed"], answer["error"]
    watch = answer["result"]["watch"]
    assert answer["result"]["status"] == "Running" and watch["samples"] == []
    assert watch["log_tail"] == {LOG: "I1127 started\nE1127 failed"}
    assert watch["error"].startswith("sampling the service after 0 ms: Quota violation"), watch["error"]
