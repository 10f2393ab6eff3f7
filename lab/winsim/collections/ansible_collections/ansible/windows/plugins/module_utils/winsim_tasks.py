# Test-lab only: the Task Scheduler of a simulated host.
"""Scheduled tasks: what the community.windows.win_scheduled_task stand-in registers, and when the lab runs them.

Registration follows the real module (community.windows win_scheduled_task.ps1, a legacy Parse-Args module): a
task is found by path and name; a new one needs at least one action ("cannot create a task with no actions ...");
the user is compared as a SID (Convert-ToSID), and ``logon_type: service_account`` takes only SYSTEM, LOCAL SERVICE
or NETWORK SERVICE; durations must be XML durations (XmlConvert.ToTimeSpan: "must be in the XML duration format");
an existing task gets only the options the task passes (RegisterTaskDefinition only when something changed); absent
deletes it; check mode changes nothing. Only what kubewin.nodes uses is simulated (boot and registration triggers
with an optional delay and repetition; exec actions, the principal, the time limit, description and enabled); any
other option or trigger type is refused, not ignored.

When a task starts (Microsoft Learn, Task Scheduler schema and trigger objects):
- boot (``run_boot_tasks``, after the SCM's boot-time starts, winsim_boot.boot_services): each enabled task with an
  enabled boot trigger starts once its trigger's delay has passed (BootTrigger.Delay: "the amount of time between
  when the system is booted and when the task is started").
- registration (``registered``, called by the stand-in when it registers or updates a task): RegistrationTrigger
  "starts a task when the task is registered or updated", after its Delay ("the amount of time between when the
  task is registered and when the task is started"); the lab runs it within the module run that registered it (the
  real Task Scheduler starts it on its own, the module does not wait). IRegistrationTrigger remarks: a restart during
  the delay loses it ("the task will not run and the delay will be lost").
- repetition: a trigger's Repetition "how often the task is run ... after the task is started": every Interval from
  the trigger's start, indefinitely without a Duration (RepetitionPattern.Duration), else until start + Duration.
  The lab's clock moves only when a script waits or a test says so (``wait``): ``run_due`` then runs each task
  whose next start has passed, once (the runs a jump of the clock skipped are not made up, and nothing else ran on
  the host meanwhile). A restart ends every repetition (the stricter choice: Microsoft Learn does not say that a
  registration trigger's repetition outlives a restart; a boot trigger starts its own again).

The lab runs a task only when its principal needs no logon: a service account with ``service_account`` logon
(Microsoft Learn, Principal.LogonType TASK_LOGON_SERVICE_ACCOUNT); any other principal is not run (the stricter
choice). Its one action must be powershell.exe ``-File <script>`` (the only kind kubewin.nodes registers): the
script file on the host runs as written through the lab's PowerShell interpreter (lab/winsim/ps), with no
parameters. Its exit code is the task's last result: 0, or 1 when a terminating error ended the script; a missing
file is powershell.exe's -196608 ("The argument '...' to the -File parameter does not exist."). Each run at boot
goes to ``boot_log``, any other to ``task_log``.
"""

from __future__ import annotations

import ntpath
import os
import re
import sys

from ansible_collections.ansible.windows.plugins.module_utils import winsim_binaries, winsim_scm
from ansible_collections.ansible.windows.plugins.module_utils.winsim_cmdline import split_command_line
from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError

SERVICE_ACCOUNTS = {"system": "S-1-5-18", "nt authority\\system": "S-1-5-18", "localsystem": "S-1-5-18",
                    "local service": "S-1-5-19", "nt authority\\local service": "S-1-5-19",
                    "network service": "S-1-5-20", "nt authority\\network service": "S-1-5-20"}
_DURATION = re.compile(r"^-?P(?=\d|T\d)(\d+Y)?(\d+M)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$")
_DURATION_PARTS = re.compile(r"(\d+(?:\.\d+)?)([YMDHS])")
POWERSHELL = "c:\\windows\\system32\\windowspowershell\\v1.0\\powershell.exe"
FILE_MISSING = -196608  # 0xFFFD0000, powershell.exe when the -File argument does not exist


def tasks(state):
    return state.setdefault("scheduled_tasks", {})


def key(path, name):
    return ntpath.join(path or "\\", name).lower()


def check_duration(option, value):
    if value is not None and not _DURATION.match(str(value)):
        raise SimError("trigger option '%s' must be in the XML duration format but was '%s'" % (option, value))


def seconds(duration):
    """An XML duration without years or months, in seconds (the lab's task delays)."""
    if not duration:
        return 0.0
    date, _, time_part = str(duration).lstrip("P").partition("T")
    total = 0.0
    for value, unit in _DURATION_PARTS.findall(date):
        if unit != "D":
            raise SimError("winsim: a task delay in years or months is not simulated (%s)" % duration)
        total += float(value) * 86400
    for value, unit in _DURATION_PARTS.findall(time_part):
        total += float(value) * {"H": 3600, "M": 60, "S": 1}[unit]
    return total


def sid(username):
    """Convert-ToSID for the accounts the lab knows (the service accounts); others are refused."""
    if username is None:
        return None
    found = SERVICE_ACCOUNTS.get(str(username).lower())
    if found is None and not str(username).upper().startswith("S-1-5-"):
        raise SimError("winsim: win_scheduled_task as user %r is not simulated (only the service accounts)" % username)
    return found or str(username).upper()


def _script_of(argv):
    """The -File script of a powershell.exe command line, or SimError for anything the lab does not run."""
    i = 0
    while i < len(argv):
        arg = argv[i].lower()
        if arg in ("-noprofile", "-noninteractive"):
            i += 1
        elif arg == "-executionpolicy" and i + 1 < len(argv):
            i += 2
        elif arg == "-file" and i + 1 < len(argv):
            if argv[i + 2:]:
                raise SimError("winsim: a boot task's script parameters are not simulated: %s" % argv[i + 2:])
            return argv[i + 1]
        else:
            raise SimError("winsim: powershell.exe argument %r of a scheduled task is not simulated" % argv[i])
    raise SimError("winsim: a scheduled task's powershell.exe without -File is not simulated")


def _interpreter():
    lib = os.environ.get("KUBEWIN_SIM_LIB") or os.path.abspath(os.path.join(os.path.dirname(__file__), *[".."] * 6))
    if lib not in sys.path:
        sys.path.insert(0, lib)
    from ps import interp, winhost
    return interp.PSError, winhost


def run_task(host, task):
    """Run the task's action now; returns its last result (the exit code)."""
    action = task["actions"][0]
    if len(task["actions"]) != 1 or str(action["path"]).lower() != POWERSHELL:
        raise SimError("winsim: a scheduled task whose action is not one powershell.exe is not simulated: %s"
                       % task["actions"])
    # powershell.exe splits its command line as the C runtime does (CommandLineToArgvW rules): a quoted path with blanks
    argv = split_command_line(str(action.get("arguments") or ""))
    script = _script_of(argv)
    winsim_binaries.log_process(host, action["path"], ["powershell.exe"] + argv)
    local = host.local_path(script)
    if not os.path.isfile(local):
        return FILE_MISSING, "The argument '%s' to the -File parameter does not exist." % script
    with open(local, "rb") as f:
        text = f.read().decode("utf-8-sig")
    ps_error, winhost = _interpreter()
    interp = winhost.new_interpreter(host, script)
    try:
        interp.run_script(text, {})
    except ps_error as e:
        return 1, e.record.message
    return 0, None


def _start(host, task, trigger, log, anchor=None, end=None):
    """Run ``task`` now for its ``trigger`` (an index) and note when its repetition starts it next: every interval
    from ``anchor``, the trigger's own start (now, unless this run is one of its repetitions), until ``end``."""
    st = host.state
    now = winsim_scm.clock(host)
    entry = {"task": task["key"], "at": now}
    if task.get("logon_type") != "service_account" or task.get("sid") not in SERVICE_ACCOUNTS.values():
        entry.update(result=None, error="not run: its principal needs a logon")
    else:
        entry["result"], entry["error"] = run_task(host, task)
    task["last_run"] = entry
    st.setdefault(log, []).append(entry)
    rep = task["triggers"][trigger].get("repetition") or {}
    if rep.get("interval"):
        interval = seconds(rep["interval"])
        if anchor is None:
            anchor, end = now, (now + seconds(rep["duration"]) if rep.get("duration") else None)
        next_at = anchor + (int((now - anchor) // interval) + 1) * interval
        if end is None or next_at <= end:
            task.setdefault("next_runs", {})[str(trigger)] = {"at": next_at, "anchor": anchor, "end": end}


def _enabled(task, kind):
    if task.get("enabled") is False:
        return []
    return [i for i, t in enumerate(task["triggers"]) if t["type"] == kind and t.get("enabled") is not False]


def registered(host, task):
    """The stand-in registered or updated ``task``: its registration triggers start it after their delay (the
    repetitions the earlier definition scheduled are replaced)."""
    task.pop("next_runs", None)
    for i in _enabled(task, "registration"):
        delay = seconds(task["triggers"][i].get("delay"))
        if delay:
            task.setdefault("next_runs", {})[str(i)] = {"at": winsim_scm.clock(host) + delay, "anchor": None,
                                                        "end": None}
        else:
            _start(host, task, i, "task_log")


def run_due(host):
    """Run each task whose next start (a delayed registration trigger, a repetition) has passed, once."""
    now = winsim_scm.clock(host)
    for task in list(tasks(host.state).values()):
        due = task.get("next_runs") or {}
        for i, d in sorted((int(i), d) for i, d in due.items() if d["at"] <= now):
            del due[str(i)]
            _start(host, task, i, "task_log", d["anchor"], d["end"])


def wait(host, secs):
    """Time passes on the host (nothing else happens): the tasks that fall due meanwhile run (run_due)."""
    winsim_scm.advance(host, secs)
    run_due(host)


def run_boot_tasks(host):
    """The boot-triggered tasks, each after its delay (see the module docstring). A restart ended the repetitions
    and the pending registration delays."""
    st = host.state
    booted = winsim_scm.clock(host)
    due = []
    for task in tasks(st).values():
        task.pop("next_runs", None)
        due += [(seconds(task["triggers"][i].get("delay")), task["key"], i) for i in _enabled(task, "boot")]
    for delay, task_key, i in sorted(due):
        left = booted + delay - winsim_scm.clock(host)
        if left > 0:
            winsim_scm.advance(host, left)
        _start(host, tasks(st)[task_key], i, "boot_log")
