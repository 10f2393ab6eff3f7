# Test-lab only: the Task Scheduler of a simulated host.
"""Scheduled tasks: what the community.windows.win_scheduled_task stand-in registers, and what a boot runs.

Registration follows the real module (community.windows win_scheduled_task.ps1, a legacy Parse-Args module): a
task is found by path and name; a new one needs at least one action ("cannot create a task with no actions ...");
the user is compared as a SID (Convert-ToSID), and ``logon_type: service_account`` takes only SYSTEM, LOCAL SERVICE
or NETWORK SERVICE; durations must be XML durations (XmlConvert.ToTimeSpan: "must be in the XML duration format");
an existing task gets only the options the task passes; absent deletes it; check mode changes nothing. Only what
kubewin.nodes uses is simulated (boot triggers with an optional repetition, stored only: the lab runs a task at
boot, and a test runs one with ``run_task``; exec actions, the principal, the time limit, description and
enabled); any other option or trigger type is refused, not ignored.

At boot (``run_boot_tasks``, after the SCM's boot-time starts, winsim_boot.boot_services): each enabled task with an
enabled boot trigger starts once its trigger's delay has passed (Microsoft Learn, BootTrigger.Delay: "the amount of
time between when the system is booted and when the task is started"). The lab runs a task only when its principal
needs no logon: a service account with ``service_account`` logon (Microsoft Learn, Principal.LogonType
TASK_LOGON_SERVICE_ACCOUNT); any other principal is not run (the stricter choice). Its one action must be
powershell.exe ``-File <script>`` (the only kind kubewin.nodes registers): the script file on the host runs as
written through the lab's PowerShell interpreter (lab/winsim/ps), with no parameters. Its exit code is the task's
last result: 0, or 1 when a terminating error ended the script; a missing file is powershell.exe's -196608
("The argument '...' to the -File parameter does not exist."). Each run goes to ``boot_log``.
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


def run_boot_tasks(host):
    """The boot-triggered tasks, each after its delay (see the module docstring)."""
    st = host.state
    booted = winsim_scm.clock(host)
    due = []
    for task in tasks(st).values():
        if task.get("enabled") is False:
            continue
        for trigger in task["triggers"]:
            if trigger["type"] == "boot" and trigger.get("enabled") is not False:
                due.append((seconds(trigger.get("delay")), task["key"]))
    for delay, task_key in sorted(due):
        task = tasks(st)[task_key]
        wait = booted + delay - winsim_scm.clock(host)
        if wait > 0:
            winsim_scm.advance(host, wait)
        entry = {"task": task["key"], "at": winsim_scm.clock(host)}
        if task.get("logon_type") != "service_account" or task.get("sid") not in SERVICE_ACCOUNTS.values():
            entry.update(result=None, error="not run: its principal needs a logon")
        else:
            entry["result"], entry["error"] = run_task(host, task)
        task["last_run"] = entry
        st.setdefault("boot_log", []).append(entry)
