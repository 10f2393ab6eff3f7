# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the node services log, and whether a service the task started stayed up.

Logs: a Windows service's stdout and stderr go nowhere, and the kubelet and kube-proxy have no
``--log-file`` since klog's flags left them (v1.37: k8s.io/component-base/logs registers only
``--logging-format``, ``-v``, ``--vmodule`` and the flush/split-stream flags). Upstream runs them
through ``kube-log-runner.exe``, which ships in every Kubernetes node release archive
(hack/lib/golang.sh ``node_targets``: ``staging/src/k8s.io/component-base/logs/kube-log-runner``,
``KUBE_NODE_BINARIES_WIN``) and writes the program's output to ``-log-file``: the kubelet and
kube-proxy services of cluster/gce/windows/k8s-node-setup.psm1 are
``kube-log-runner.exe -log-file=<logs>\\kubelet.log <node>\\kubelet.exe --windows-service ...``.
The program still answers the Service Control Manager itself (``--windows-service``).
flanneld runs under NSSM, which writes its output to ``AppStdout``/``AppStderr``.

Watching: the kubelet, kube-proxy and NSSM report SERVICE_RUNNING before they check their inputs
(kubelet: pkg/windows/service ``Execute`` reports Running at once, the CRI connection and the
bootstrap come later in cmd/kubelet/app/server.go; kube-proxy: ``initForOS`` is the first thing
``RunE`` does; NSSM: Running once CreateProcess succeeded, Paused while it throttles an
application that exits early). ``Start-Service`` therefore returns with the service Running even
when it exits a moment later and the recovery actions restart it every few seconds. So after a
start the service is watched for two restart periods: any sample that is not Running, or a new
process id (the SCM restarted it), is a failed start.

Under NSSM the service process is nssm.exe, which restarts its application itself, inside the same
service process (NSSM service.cpp: end_service takes the default AppExit action, Restart, and calls
monitor_service -> start_service again): the service's process id never changes, and the service
leaves RUNNING only for the AppThrottle time (1500 ms by default) of each restart, or, when the
application exits within that time, while NSSM throttles it (PAUSED). So for an NSSM service the watch
also samples the application's own process (the child of the service process with the application's
file name): a new child id is a restart too.
"""

from __future__ import annotations

import ntpath

from ansible_collections.kubewin.nodes.plugins.module_utils import _windows_paths as wp

# kube-log-runner rotates its file with -log-file-size (a resource.Quantity: the file is renamed to
# <name>-<time><ext> when a write would pass the size) and removes rotated files older than -log-file-age (a Go
# duration) at each rotation (kubernetes PR #127667; read in k8s.io/component-base v0.34.4, v0.35.4 and v0.37.2
# logs/kube-log-runner/kube-log-runner.go lines 48-53 and internal/logrotation/logrotation.go rotate/clean). Both
# flags are in every release read, so they are passed from the oldest of them on; an older kube-log-runner would exit
# on an unknown flag, so older releases run without rotation. There is no count: the disk a log uses is bounded by
# the size times the rotations within the age (docs/troubleshooting.md, "Reading a node's logs").
LOG_ROTATION_FROM = (1, 34)
LOG_FILE_MAX_SIZE_MB = 100
LOG_FILE_MAX_AGE_HOURS = 168

WATCH_RESTART_PERIODS = 2
WATCH_INTERVAL_MS = 1000
LOG_TAIL_LINES = 20


def log_file(service):
    return wp.LOG_FILES.get(str(service).lower())


def _positive(value, name):
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = 0
    if isinstance(value, bool) or number < 1 or str(number) != str(value).strip():
        raise ValueError("%s is %r: a whole number of at least 1 is needed" % (name, value))
    return number


def log_runner_argv(program_argv, log_path, version, log_runner=wp.KUBE_LOG_RUNNER_EXE,
                    max_size_mb=LOG_FILE_MAX_SIZE_MB, max_age_hours=LOG_FILE_MAX_AGE_HOURS):
    """``program_argv`` run through kube-log-runner writing to ``log_path`` (stdout and stderr), rotated at
    ``max_size_mb`` MiB, rotated files removed after ``max_age_hours`` (kubewin_log_file_max_size_mb and
    kubewin_log_file_max_age_hours)."""
    size = _positive(max_size_mb, "kubewin_log_file_max_size_mb")
    age = _positive(max_age_hours, "kubewin_log_file_max_age_hours")
    argv = [log_runner, "-log-file=%s" % log_path]
    if tuple(version[:2]) >= LOG_ROTATION_FROM:
        argv += ["-log-file-size=%dMi" % size, "-log-file-age=%dh" % age]
    return argv + list(program_argv)


def log_hint(service, path=None):
    """The sentence that tells the user where the service's own words are."""
    path = path or log_file(service)
    where = "its log %s" % path if path else "its output"
    return ("Read %s on the node (Get-Content -Tail 50 %s) and the System event log (Get-WinEvent -FilterHashtable "
            "@{LogName='System'; ProviderName='Service Control Manager'} -MaxEvents 20)" % (where, path or "<log>"))


def watch_seconds(restart_delay_seconds):
    """How long a started service is watched: two restart periods of its recovery actions."""
    return max(1, int(restart_delay_seconds)) * WATCH_RESTART_PERIODS


def wrapped_program(command_line_argv, parameters):
    """The file name of the program a service wrapper runs as a child of the service process, for the
    watch: NSSM's ``Application`` (NSSM CreateProcess-es it from nssm.exe) when the service's program
    is nssm.exe; '' otherwise."""
    if not command_line_argv or ntpath.basename(str(command_line_argv[0])).lower() != "nssm.exe":
        return ""
    app = next((v for k, v in (parameters or {}).items() if str(k).lower() == "application"), None)
    if not app:
        return ""
    name = ntpath.basename(str(app))
    # NSSM starts it with CreateProcess(NULL, command line, ...) (fightroad/nssm service.cpp), which appends .exe to
    # a file name without an extension (Microsoft Learn, CreateProcessW, lpCommandLine); Win32_Process.Name has it
    return name if ntpath.splitext(name)[1] else name + ".exe"


def judge_watch(name, answer, log_paths, child=""):
    """Decide from what the start-up watch (service_apply's watch) saw whether the started service stayed up.

    ``answer``: {samples: [{ms, status, pid, child}], exit_code, service_exit_code, log_tail: {path:
    text}, error}; ``child``: the wrapped program's file name the watch sampled too (wrapped_program).
    Returns None when it stayed Running with one process (and one child), else the error text. A watch that could
    not finish (``error``: a WMI query or a log read failed on the host) never passes: what it saw is judged as
    above when that was already a failure, else watch_incomplete says so.
    """
    samples = answer.get("samples") or []
    if answer.get("error"):
        failure = judge_watch(name, dict(answer, error=None), log_paths, child) if samples else None
        if failure is None:
            return watch_incomplete(name, answer, log_paths)
        return "%s (Its start-up watch then stopped %s.)" % (failure, answer["error"])
    running = [s for s in samples if s.get("status") == "Running"]
    pids = [s.get("pid") for s in running if s.get("pid")]
    children = [s.get("child") for s in running if s.get("child")]
    bad = [s for s in samples if s.get("status") != "Running"]
    # a Running NSSM service without its application: between an exit and NSSM's restart of it
    gone = [s for s in running if child and not s.get("child")]
    if samples and not bad and len(set(pids)) <= 1 and len(set(children)) <= 1 and not gone:
        return None
    seconds = (samples[-1].get("ms", 0) / 1000.0) if samples else 0
    if not samples:
        what = "could not be watched (no status was read)"
    elif bad:
        what = "was started and reported Running, then went %s within %.0fs" % (bad[0].get("status"), seconds)
    elif len(set(pids)) > 1:
        what = "was started and reported Running, then exited and was restarted by its recovery actions " \
               "(process %s, then %s) within %.0fs" % (pids[0], pids[-1], seconds)
    elif len(set(children)) > 1:
        what = "was started and reported Running, then its program %s exited and NSSM started it again " \
               "(process %s, then %s) within %.0fs" % (child, children[0], children[-1], seconds)
    else:
        what = "was started and reported Running, then its program %s was not running within %.0fs" % (
            child, seconds)
    parts = ["service %s %s: it exits after starting" % (name, what)]
    code, specific = answer.get("exit_code"), answer.get("service_exit_code")
    if code not in (None, 0):
        detail = "last exit code %s" % code
        if code == 1066 and specific not in (None, 0):
            detail += " (service-specific error %s)" % specific
        elif code == 1067:
            detail += " (1067: the process terminated unexpectedly)"
        parts.append(detail)
    tails = answer.get("log_tail") or {}
    said = []
    for path in log_paths:
        text = (tails.get(path) or "").strip()
        if text:
            said.append("%s ends with:\n%s" % (path, "\n".join(text.splitlines()[-LOG_TAIL_LINES:])))
    if said:
        parts.append("\n".join(said))
    elif log_paths:
        parts.append("%s %s empty or missing" % (", ".join(log_paths), "is" if len(log_paths) == 1 else "are"))
    parts.append(log_hint(name, log_paths[0] if log_paths else None))
    return "; ".join(parts[:-1]) + ". " + parts[-1] + "."


def watch_incomplete(name, answer, log_paths):
    """The words for a start whose watch could not finish: the service was started (Start-Service returned) and
    was Running in every sample read, but a read of the watch itself failed on the host, so whether it stays up is
    not known. A re-run finds it Running and does not start it, so it would not be watched again: the operator
    checks it. ``answer``: service_apply's watch with its ``error``."""
    samples = answer.get("samples") or []
    if samples:
        seen = "it was Running in all %d samples of the first %.0fs" % (len(samples), samples[-1].get("ms", 0) / 1000.0)
    else:
        seen = "no sample was read"
    parts = ["service %s was started, but its start-up watch could not finish (%s): %s" % (name, seen, answer["error"])]
    tails = answer.get("log_tail") or {}
    said = ["%s ends with:\n%s" % (p, "\n".join(str(tails[p]).strip().splitlines()[-LOG_TAIL_LINES:]))
            for p in log_paths if (tails.get(p) or "").strip()]
    if said:
        parts.append("\n".join(said))
    parts.append("Whether it stays up is not known, and a re-run will find it Running and not watch it again: on the "
                 "node, check that it stays Running with one process id for a minute (Get-CimInstance Win32_Service "
                 "-Filter \"Name='%s'\" | Select-Object State, ProcessId, ExitCode, repeated) and that WMI answers "
                 "(the error above; Get-WinEvent -LogName Microsoft-Windows-WMI-Activity/Operational -MaxEvents 20)"
                 % name)
    parts.append(log_hint(name, log_paths[0] if log_paths else None))
    return "; ".join(parts[:-2]) + ". " + parts[-2] + ". " + parts[-1] + "."
