"""A service that reports Running and exits a moment later is a failed start (service_logs.judge_watch)."""

from remote_host import FakeScm

from ansible_collections.kubewin.nodes.plugins.action.win_host_service import ActionModule as HostServiceAction
from ansible_collections.kubewin.nodes.plugins.action.win_kubelet_service import ActionModule as KubeletAction
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import service_logs as sl
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host.service import split_windows_command_line

PROXY_LOG = "C:\\var\\log\\kubelet\\kube-proxy.log"
PROXY = {"name": "kube-proxy", "path": "C:\\k\\kube-log-runner.exe",
         "args": ["-log-file=" + PROXY_LOG, "C:\\k\\kube-proxy.exe", "--windows-service"], "log_files": [PROXY_LOG]}
KUBELET = {"kubelet_version": "v1.37.2", "state": "started"}
KLOG = 'E1126 06:12:01.123456    4242 run.go:72] "command failed" err="kubeconfig missing"'


def crashed(pids, statuses, log=None, code=1067, specific=0):
    pairs = enumerate(zip(statuses, pids, strict=True))
    return {"samples": [{"ms": 1000 * i, "status": s, "pid": p} for i, (s, p) in pairs],
            "exit_code": code, "service_exit_code": specific, "log_tail": log or {}}


def test_a_started_service_that_stays_running_passes_after_one_watch(make_action):
    scm = FakeScm()
    result = make_action(HostServiceAction, dict(PROXY), scm.host).run(task_vars={})
    assert not result.get("failed") and result["status"] == "Running"
    # the start and its watch are one remote operation (issue 22)
    assert scm.host.names() == ["service_state", "service_apply"]
    watch = scm.host.calls[-1][1]
    assert watch["WatchSeconds"] == 20 and watch["WatchLogFiles"] == [PROXY_LOG]  # two restart periods of 10 s


def test_running_then_stopped_fails_with_the_services_last_words_and_its_log(make_action):
    scm = FakeScm()
    scm.watch_answer = crashed([4242, 4242, 0], ["Running", "Running", "Stopped"], {PROXY_LOG: "I1126 start\n" + KLOG})
    result = make_action(HostServiceAction, dict(PROXY), scm.host).run(task_vars={"inventory_hostname": "win-2"})
    assert result["failed"]
    msg = result["msg"]
    assert msg.startswith("win_host_service on win-2: service kube-proxy was started and reported Running,"
                          " then went Stopped within 2s")
    assert "1067" in msg and KLOG in msg and PROXY_LOG in msg


def test_a_restart_by_the_recovery_actions_is_caught_by_the_new_process_id(make_action):
    scm = FakeScm()
    scm.watch_answer = crashed([100, 100, 180, 180], ["Running"] * 4, {PROXY_LOG: KLOG})
    result = make_action(HostServiceAction, dict(PROXY), scm.host).run(task_vars={})
    assert result["failed"] and "restarted by its recovery actions (process 100, then 180)" in result["msg"]


def test_nssm_paused_names_appstderr_and_the_service_specific_code(make_action):
    scm = FakeScm()
    scm.watch_answer = crashed([7, 7], ["Running", "Paused"], {}, code=1066, specific=3)
    flanneld = {"name": "flanneld", "path": "C:\\k\\nssm.exe",
                "parameters": {"Application": "C:\\k\\flanneld.exe",
                               "AppStderr": "C:\\var\\log\\kubelet\\flanneld.log"}}
    result = make_action(HostServiceAction, flanneld, scm.host).run(task_vars={})
    assert result["failed"] and "went Paused" in result["msg"] and "service-specific error 3" in result["msg"]
    assert "C:\\var\\log\\kubelet\\flanneld.log is empty or missing" in result["msg"]
    assert scm.host.calls[-1][1]["WatchLogFiles"] == ["C:\\var\\log\\kubelet\\flanneld.log"]


def test_watch_can_be_turned_off_and_is_skipped_without_a_start(make_action):
    scm = FakeScm()
    make_action(HostServiceAction, dict(PROXY, watch_seconds=0), scm.host).run(task_vars={})
    assert "service_watch" not in scm.host.names() and scm.host.calls[-1][1]["WatchSeconds"] == 0
    make_action(HostServiceAction, dict(PROXY, state="present", name="other"), scm.host).run(task_vars={})
    assert "service_watch" not in scm.host.names() and scm.host.calls[-1][1]["WatchSeconds"] == 0


def test_kubelet_runs_under_kube_log_runner_and_a_crash_after_running_names_its_log(make_action):
    scm = FakeScm()
    scm.watch_answer = crashed([9, 0], ["Running", "Stopped"], {"C:\\var\\log\\kubelet\\kubelet.log": KLOG})
    result = make_action(KubeletAction, dict(KUBELET), scm.host).run(task_vars={"inventory_hostname": "win-1"})
    argv = split_windows_command_line(scm.services["kubelet"]["image_path"])
    assert argv[:5] == ["C:\\k\\kube-log-runner.exe", "-log-file=C:\\var\\log\\kubelet\\kubelet.log",
                        "-log-file-size=100Mi", "-log-file-age=168h", "C:\\k\\kubelet.exe"]
    assert "--windows-service" in argv
    assert result["failed"] and KLOG in result["msg"] and "C:\\var\\log\\kubelet\\kubelet.log" in result["msg"]


def test_kube_log_runner_rotation_only_where_it_exists():
    old = sl.log_runner_argv(["C:\\k\\kube-proxy.exe"], "C:\\l.log", (1, 33))
    new = sl.log_runner_argv(["C:\\k\\kube-proxy.exe"], "C:\\l.log", (1, 36))
    assert old == ["C:\\k\\kube-log-runner.exe", "-log-file=C:\\l.log", "C:\\k\\kube-proxy.exe"]
    assert new[2:4] == ["-log-file-size=100Mi", "-log-file-age=168h"]


def test_a_start_that_is_not_running_at_once_names_the_log():
    msg = sl.judge_watch("kubelet", {"samples": []}, ["C:\\var\\log\\kubelet\\kubelet.log"])
    assert "could not be watched" in msg and "C:\\var\\log\\kubelet\\kubelet.log" in msg


FLANNELD = {"name": "flanneld", "path": "C:\\k\\nssm.exe",
            "parameters": {"Application": "C:\\k\\flanneld.exe", "AppStderr": "C:\\var\\log\\kubelet\\flanneld.log"}}


def nssm_watch(children, statuses=None):
    """What service_watch answers for an NSSM service: nssm.exe keeps its process id, its application's changes."""
    statuses = statuses or ["Running"] * len(children)
    return {"samples": [{"ms": 1000 * i, "status": s, "pid": 7, "child": c}
                        for i, (s, c) in enumerate(zip(statuses, children, strict=True))],
            "exit_code": 0, "service_exit_code": 0, "log_tail": {}}


def test_nssm_restarting_its_application_inside_a_running_service_is_a_failed_start(make_action):
    """N6 (shared/audits/powershell-2.md): NSSM restarts flanneld inside the same nssm.exe process, so the service
    stays Running with one process id; only the application's process id shows the restart."""
    scm = FakeScm()
    scm.watch_answer = nssm_watch([31, 31, 31, 35, 35])
    result = make_action(HostServiceAction, dict(FLANNELD), scm.host).run(task_vars={"inventory_hostname": "win-1"})
    assert result["failed"], result
    assert "its program flanneld.exe exited and NSSM started it again (process 31, then 35)" in result["msg"]
    # the watch was told which child to sample: the application's file name
    assert scm.host.calls[-1][1]["WatchChild"] == "flanneld.exe"


def test_the_child_is_sampled_only_for_nssm_services(make_action):
    scm = FakeScm()
    make_action(HostServiceAction, dict(PROXY), scm.host).run(task_vars={})
    assert scm.host.calls[-1][1]["WatchChild"] == ""
    assert sl.wrapped_program(["C:\\k\\NSSM.EXE"], {"application": "C:\\k\\flanneld.exe"}) == "flanneld.exe"
    assert sl.wrapped_program(["C:\\k\\kube-log-runner.exe", "C:\\k\\kube-proxy.exe"], {}) == ""
    # review R13: CreateProcess appends .exe to a name without an extension, and Win32_Process.Name carries it
    assert sl.wrapped_program(["C:\\k\\nssm.exe"], {"Application": "C:\\k\\flanneld"}) == "flanneld.exe"
    assert sl.wrapped_program(["C:\\k\\nssm.exe"], {"Application": "C:\\k\\run.cmd"}) == "run.cmd"


def test_an_nssm_service_that_keeps_one_application_passes_and_one_without_it_fails():
    assert sl.judge_watch("flanneld", nssm_watch([31, 31, 31]), [], "flanneld.exe") is None
    msg = sl.judge_watch("flanneld", nssm_watch([31, 0, 0]), [], "flanneld.exe")
    assert "its program flanneld.exe was not running" in msg


def test_a_watch_that_could_not_finish_reports_the_start_as_done_with_what_it_sampled(make_action):
    """S1 (review-s4-windows): an error of the watch's own reads (WMI, a log rotated away) after Start-Service is not a
    failed start. Before, service_apply failed the call and the task said the start failed ("Start-Service throws
    when ..."), with no samples; now service_apply returns watch.error with what it read, and the task says the
    service was started, what was seen, that a re-run would not watch it again, and what to check."""
    scm = FakeScm()
    scm.watch_answer = dict(crashed([4242] * 5, ["Running"] * 5, {PROXY_LOG: "I1127 listening\n"}, code=0),
                            error="sampling the service after 5012 ms: Quota violation")
    result = make_action(HostServiceAction, dict(PROXY), scm.host).run(task_vars={"inventory_hostname": "win-2"})
    assert result["failed"] and result["changed"] and result["status"] == "Running", result
    msg = result["msg"]
    assert msg.startswith("win_host_service on win-2: service kube-proxy was started, but its start-up watch could "
                          "not finish (it was Running in all 5 samples of the first 4s): sampling the service after "
                          "5012 ms: Quota violation"), msg
    assert "I1127 listening" in msg and "a re-run will find it Running and not watch it again" in msg
    assert "Name='kube-proxy'" in msg and "Start-Service throws" not in msg
    assert result["watch_error"] == "sampling the service after 5012 ms: Quota violation"


def test_a_watch_error_after_samples_that_already_show_a_crash_keeps_the_crash_verdict():
    answer = dict(crashed([9, 0], ["Running", "Stopped"], {}), error="reading C:\\l.log: Cannot find path")
    msg = sl.judge_watch("kubelet", answer, [])
    assert msg.startswith("service kubelet was started and reported Running, then went Stopped within 1s"), msg
    assert msg.endswith("(Its start-up watch then stopped reading C:\\l.log: Cannot find path.)")
    nothing = sl.judge_watch("kubelet", {"samples": [], "log_tail": {}, "error": "sampling ...: Quota violation"}, [])
    assert "no sample was read" in nothing and "Quota violation" in nothing
