"""The simulated Service Control Manager, NSSM and the service cmdlets as Windows has them (issue 20, findings
N5 and N6 of shared/audits/powershell-2.md): Set-Service / New-Service parameter validation from PowerShell's
Service.cs, and NSSM's restart and throttle behaviour from its source (service.cpp), seen by the collection's own
service_apply script (its start-up watch too) run through the lab's interpreter. No control plane needed."""

import os
import subprocess
from unittest import mock

import pytest
from winsim import core  # noqa: E402
from winsim.ps.winhost import execute  # noqa: E402
from winsim.ps.winhost import run_kubewin_script as run_ps  # noqa: E402

# isort: split
# winsim.core has put the stand-in ansible.windows collection on sys.path.
from ansible_collections.ansible.windows.plugins.module_utils import winsim_scm  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "plugins", "plugin_utils", "scripts")
PROXY = "C:\\k\\kube-proxy.exe --windows-service --kubeconfig=C:\\etc\\kube-proxy\\kubeconfig --network-name=cbr0"


def _put(host, win_path, data=b"x"):
    local = host.local_path(win_path)
    os.makedirs(os.path.dirname(local), exist_ok=True)
    with open(local, "wb") as f:
        f.write(data)


def _script_at(rev, name):
    """A script as it was at git revision ``rev`` (to show the lab sees a defect of older text)."""
    return subprocess.run(["git", "show", "%s:plugins/plugin_utils/scripts/%s.ps1" % (rev, name)], cwd=ROOT,
                          check=True, capture_output=True, text=True).stdout


@pytest.fixture
def host(tmp_path):
    h = core.create_host(str(tmp_path), "w")
    core.write_binary(h.local_path("C:\\k\\kube-proxy.exe"), "kube-proxy", "v1.33.2")
    _put(h, "C:\\etc\\kube-proxy\\kubeconfig")
    return h


# --- N5: Set-Service / New-Service parameter validation ------------------------------------------------
def _ps(host, text, sid="t"):
    with host.open():
        return execute(host, text, sid, {}, error_action="Stop")


@pytest.mark.parametrize("call, message", [
    # Service.cs SetServiceCommand.Description / DisplayName: [ValidateNotNullOrEmpty]
    ("Set-Service -Name svc -Description ''", "Cannot validate argument on parameter 'Description'. The argument is "
                                             "null or empty."),
    ("Set-Service -Name svc -DisplayName ''", "Cannot validate argument on parameter 'DisplayName'."),
    # Mandatory string parameters refuse '' (no [AllowEmptyString])
    ("Set-Service -Name '' -Description x", "Cannot bind argument to parameter 'Name' because it is an empty string."),
    # NewServiceCommand: BinaryPathName Mandatory, Description and DisplayName [ValidateNotNullOrEmpty]
    ("New-Service -Name other -BinaryPathName ''", "Cannot bind argument to parameter 'BinaryPathName' because it is "
                                                   "an empty string."),
    ("New-Service -Name other -BinaryPathName 'C:\\k\\x.exe' -Description ''", "parameter 'Description'"),
    ("New-Service -Name other -BinaryPathName 'C:\\k\\x.exe' -DisplayName ''", "parameter 'DisplayName'"),
])
def test_service_cmdlets_refuse_what_their_parameter_validation_refuses(host, call, message):
    with host.open():
        winsim_scm.create(host.state, "svc", "C:\\k\\kube-proxy.exe", description="before")
    answer = _ps(host, call)
    assert answer["failed"] and message in answer["error"][0]["exception"]["message"], answer["error"]
    assert answer["error"][0]["exception"]["type"] == "System.Management.Automation.ParameterBindingValidationException"
    with host.open(save=False):
        assert winsim_scm.find(host.state, "svc")["description"] == "before"  # nothing was done
        assert winsim_scm.find(host.state, "other") is None


def test_an_empty_description_failed_service_apply_after_new_service_created_the_service(host):
    """N5 as the lab now sees it: service_apply before the fix (git 047494d) created the service, then
    Set-Service -Description '' threw, leaving no recovery actions; today's script sets no empty description."""
    params = {"Name": "kube-proxy", "Action": "create", "CommandLine": PROXY, "DisplayName": "kube-proxy",
              "Description": "", "FailureActions": "restart/10000/restart/10000/restart/10000", "Run": "none"}
    with host.open():
        old = execute(host, _script_at("047494d", "service_apply"), "service_apply", params, error_action="Stop")
    assert old["failed"] and "parameter 'Description'" in old["error"][0]["exception"]["message"]
    with host.open():
        svc = winsim_scm.find(host.state, "kube-proxy")
        assert svc is not None and svc["failure_actions"] is None  # created, half configured
        winsim_scm.delete(host.state, "kube-proxy")
        new = run_ps(host, "service_apply", params, False)
        svc = winsim_scm.find(host.state, "kube-proxy")
    assert not new["failed"], new["error"]
    assert svc["failure_actions"] and svc["failure_actions_on_non_crash"] == 1


# --- N6: NSSM restarting its application, and the start-up watch ----------------------------------------
NSSM_PARAMS = {"Application": "C:\\k\\kube-proxy.exe",
               "AppParameters": "--kubeconfig=C:\\etc\\kube-proxy\\kubeconfig --network-name=cbr0"}


def _nssm_service(host, name="demo", exit_after=None, **settings):
    """An NSSM service whose application exits ``exit_after`` seconds after each start (None: it keeps running)."""
    core.write_binary(host.local_path("C:\\k\\nssm.exe"), "nssm", "2.24")
    params = dict(NSSM_PARAMS, **settings)
    types = {k: "DWord" if isinstance(v, int) else "String" for k, v in params.items()}
    with host.open():
        if exit_after:
            host.state.setdefault("app_exit_after", {})[name] = exit_after
        reply = run_ps(host, "service_apply", {"Name": name, "Action": "create", "CommandLine": "C:\\k\\nssm.exe",
                                               "DisplayName": name, "Description": "d", "Parameters": params,
                                               "ParameterTypes": types, "Run": "start"}, False)
    assert not reply["failed"], reply["error"]
    return reply


# The start-up watch is the one service_apply runs in the call that starts a service (issue 22; it was the script
# service_watch until 1b0bad9): the NSSM model is watched with today's text, restarting the service it watches (review
# s4 L1). Older service_watch texts are still run where a test shows what they missed.
def _watch(host, text=None, child="kube-proxy.exe", name="demo", seconds=20):
    if text is None:
        params = {"Name": name, "Action": "none", "Run": "restart", "WatchSeconds": seconds, "WatchIntervalMs": 1000,
                  "WatchChild": child, "WatchLogFiles": [], "WatchTailLines": 5}
        with host.open():
            answer = run_ps(host, "service_apply", params, False)
        assert not answer["failed"], answer["error"]
        assert answer["result"]["watch"]["error"] is None
        return answer["result"]["watch"]
    params = {"Name": name, "Seconds": seconds, "IntervalMs": 1000, "LogFiles": [], "TailLines": 5}
    with host.open():  # an older text has no Child parameter
        answer = execute(host, text, "service_watch", params, error_action="Stop")
    assert not answer["failed"], answer["error"]
    return answer["result"]


@pytest.fixture
def frozen():
    """The host's clock moves only by what scripts wait for (Start-Sleep, Start-Service): the samples are exact."""
    with mock.patch.object(winsim_scm.time, "time", return_value=1.9e9):
        yield


def test_an_application_that_fails_after_seconds_is_restarted_by_nssm_and_the_watch_sees_it(host, frozen):
    """N6: the application exits 5 s after each start, longer than AppThrottle (500 ms here), so NSSM restarts it at
    once inside the same nssm.exe process (service.cpp l.2110-2115) and reports START_PENDING only for 500 ms: the
    old watch, sampling the service every second, never lands in those windows and passed it; the watch that also
    samples the application's process sees the new process id."""
    from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import service_logs as sl

    _nssm_service(host, exit_after=5, AppThrottle=500)
    old = _watch(host, _script_at("047494d", "service_watch"))
    assert {s["status"] for s in old["samples"]} == {"Running"} and len({s["pid"] for s in old["samples"]}) == 1
    assert sl.judge_watch("demo", old, []) is None  # the miss the audit describes
    new = _watch(host)
    assert len({s["pid"] for s in new["samples"]}) == 1  # nssm.exe itself never changes
    assert len({s["child"] for s in new["samples"] if s["child"]}) >= 4  # 20 s, a new application every 5 s
    msg = sl.judge_watch("demo", new, [], "kube-proxy.exe")
    assert "its program kube-proxy.exe exited and NSSM started it again" in msg, msg


def test_nssm_states_follow_its_source(host, frozen):
    """Default AppThrottle 1500 ms (nssm.h l.95): START_PENDING for 1.5 s of each restart, then RUNNING; an
    application that exits within the throttle is PAUSED for 2, 4, 8 ... s (throttle_restart, l.2140-2176); the
    Win32_Process child is there only while the application runs."""
    _nssm_service(host, exit_after=4)
    with host.open():
        svc = winsim_scm.find(host.state, "demo")
        crash = svc["crash"]
        at = crash["since"]
        states = [winsim_scm.nssm_timeline(svc, crash, at + dt)[0] for dt in (0.5, 2, 3.9, 4.5, 5.6, 8)]
    assert states == ["StartPending", "Running", "Running", "StartPending", "Running", "StartPending"]
    host2 = core.create_host(str(host.dir) + "-2", "w2")
    core.write_binary(host2.local_path("C:\\k\\kube-proxy.exe"), "kube-proxy", "v1.33.2")
    _put(host2, "C:\\etc\\kube-proxy\\kubeconfig")
    _nssm_service(host2, exit_after=1)  # within 1.5 s: throttled
    with host2.open():
        svc = winsim_scm.find(host2.state, "demo")
        crash = svc["crash"]
        at = crash["since"]
        # start 0-1 START_PENDING; paused 2 s; 3-4 START_PENDING; paused 4 s; 8-9; paused 8 s; 17-18
        got = [winsim_scm.nssm_timeline(svc, crash, at + dt) for dt in (0.5, 1.5, 3.5, 5, 8.5, 12, 17.5)]
    assert [g[0] for g in got] == ["StartPending", "Paused", "StartPending", "Paused", "StartPending", "Paused",
                                   "StartPending"]
    assert [g[1] != 0 for g in got] == [True, False, True, False, True, False, True]
    answer = _watch(host2, seconds=3)  # Start-Service waited through the first START_PENDING
    assert answer["samples"][0]["status"] == "Paused" and answer["samples"][0]["child"] == 0


def test_a_healthy_nssm_service_keeps_one_child_and_a_restart_delay_pauses_each_restart(host, frozen):
    from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import service_logs as sl

    _nssm_service(host)
    answer = _watch(host, seconds=5)
    assert {s["status"] for s in answer["samples"]} == {"Running"}
    assert len({s["child"] for s in answer["samples"]}) == 1 and answer["samples"][0]["child"]
    assert sl.judge_watch("demo", answer, [], "kube-proxy.exe") is None
    # the child is found by its parent and its file name only
    assert _watch(host, child="flanneld.exe", seconds=1)["samples"][0]["child"] == 0
    # AppRestartDelay 3000 (registry.cpp l.878): after a run longer than the throttle, "throttle++" (l.1976) makes
    # the next start wait max(3 s, 2 s) PAUSED
    with host.open():
        svc = winsim_scm.find(host.state, "demo")
        svc["parameters"]["AppRestartDelay"] = 3000
        crash = {"since": 0.0, "run": 5, "app_pid": 100, "pid": 1, "kind": "nssm"}
        assert [winsim_scm.nssm_timeline(svc, crash, t)[0] for t in (1, 4.9, 6, 8.2, 10)] == [
            "StartPending", "Running", "Paused", "StartPending", "Running"]


# --- the recovery restart between the controller's read and its write (test_kube_proxy_as_a_service) -----------
def test_a_start_with_a_new_definition_replaces_what_the_recovery_actions_restarted_meanwhile(host, frozen):
    """The controller reads a crash-looping service Stopped and plans a start with a new command line; before its
    write, the SCM's recovery action restarts the service with the OLD definition. Start-Service does nothing to a
    running service, so the old program kept crash-looping under the new definition's name: what made
    tests/lab/test_windows_modules.py::test_kube_proxy_as_a_service fail under load (kube-proxy.log empty: the
    program that ran was the old one, without kube-log-runner). service_apply now stops it first."""
    broken = "C:\\k\\kube-proxy.exe --windows-service --kubeconfig=C:\\etc\\missing --network-name=cbr0"
    params = {"Name": "kube-proxy", "Action": "create", "CommandLine": broken, "DisplayName": "kube-proxy",
              "Description": "d", "FailureActions": "restart/10000/restart/10000/restart/10000", "Run": "start"}
    for text in (_script_at("047494d", "service_apply"), None):
        with host.open():
            if winsim_scm.find(host.state, "kube-proxy"):
                winsim_scm.stop(host, "kube-proxy")
                winsim_scm.delete(host.state, "kube-proxy")
            assert not run_ps(host, "service_apply", params, False)["failed"]
            svc = winsim_scm.find(host.state, "kube-proxy")
            assert svc["crash"]  # kube-proxy exits 1 s after each start, restarted every 10 s
            winsim_scm.advance(host, 5)
            assert run_ps(host, "service_state", {"Name": "kube-proxy"}, False)["result"]["status"] == "Stopped"
            winsim_scm.advance(host, 6)  # the recovery action restarts it with the old command line
            assert winsim_scm.observe(host, svc)[0] == "Running"
            fix = dict(params, Action="update", CommandLine=PROXY)  # what the controller planned from its read
            if text is None:
                answer = run_ps(host, "service_apply", fix, False)
            else:
                answer = execute(host, text, "service_apply", fix, error_action="Stop")
            assert not answer["failed"], answer["error"]
            svc = winsim_scm.find(host.state, "kube-proxy")
            runs_new = not svc.get("crash") and svc["image_path"] == PROXY
        assert runs_new is (text is None), text is None


# --- NSSM running kube-log-runner (flanneld's service, network role) ------------------------------------------
def test_under_nssm_kube_log_runner_writes_its_commands_output_to_its_log_file(host, frozen):
    """NSSM starts kube-log-runner, which opens -log-file and runs its command with stdout and stderr going there
    (k8s.io/component-base v0.37.2 logs/kube-log-runner/kube-log-runner.go configureAndRun); the runner's own
    lines (log.Printf/log.Fatal: stderr) go to NSSM's AppStderr. The watch's child is kube-log-runner.exe."""
    core.write_binary(host.local_path("C:\\k\\kube-log-runner.exe"), "kube-log-runner", "v1.37.2")
    os.makedirs(host.local_path("C:\\var\\log\\demo"), exist_ok=True)
    runner = ("-log-file=C:\\var\\log\\demo\\demo.log -log-file-size=100Mi -log-file-age=168h C:\\k\\kube-proxy.exe "
              "--kubeconfig=%s --network-name=cbr0")
    _nssm_service(host, Application="C:\\k\\kube-log-runner.exe",
                  AppParameters=runner % "C:\\etc\\kube-proxy\\kubeconfig", AppStderr="C:\\var\\log\\demo\\nssm.log")
    answer = _watch(host, child="kube-log-runner.exe", seconds=2)
    assert {s["status"] for s in answer["samples"]} == {"Running"} and answer["samples"][0]["child"]
    assert os.path.isfile(host.local_path("C:\\var\\log\\demo\\demo.log"))
    host2 = core.create_host(str(host.dir) + "-2", "w2")
    core.write_binary(host2.local_path("C:\\k\\kube-proxy.exe"), "kube-proxy", "v1.33.2")
    core.write_binary(host2.local_path("C:\\k\\kube-log-runner.exe"), "kube-log-runner", "v1.37.2")
    os.makedirs(host2.local_path("C:\\var\\log\\demo"), exist_ok=True)
    _nssm_service(host2, Application="C:\\k\\kube-log-runner.exe", AppParameters=runner % "C:\\etc\\missing",
                  AppStderr="C:\\var\\log\\demo\\nssm.log")
    with open(host2.local_path("C:\\var\\log\\demo\\demo.log")) as f:
        program = f.read()
    with open(host2.local_path("C:\\var\\log\\demo\\nssm.log")) as f:
        own = f.read()
    assert "C:\\etc\\missing" in program and "kube-log-runner: running command: exit status" in own, (program, own)
    assert "C:\\etc\\missing" not in own


def test_stop_service_without_force_is_refused_while_a_dependent_runs(host):
    """Issue 23 point 2 (containerd stopped after the kubelet): Stop-Service without -Force does not stop a service
    whose dependents run (PowerShell Service.cs, ServiceCannotBeStoppedWithDependents); once they are stopped, it
    does. With -Force the dependents stop first."""
    with host.open():
        winsim_scm.create(host.state, "base", "C:\\k\\kube-proxy.exe")
        winsim_scm.create(host.state, "dep", "C:\\k\\kube-proxy.exe", dependencies=["base"])
        for name in ("base", "dep"):
            winsim_scm.find(host.state, name)["status"] = "Running"
    answer = _ps(host, "Stop-Service -Name base")
    assert answer["failed"] and "because it has dependent services" in answer["error"][0]["exception"]["message"]
    assert not _ps(host, "Stop-Service -Name dep; Stop-Service -Name base")["failed"]
    with host.open(save=False):
        assert [winsim_scm.find(host.state, n)["status"] for n in ("base", "dep")] == ["Stopped", "Stopped"]
