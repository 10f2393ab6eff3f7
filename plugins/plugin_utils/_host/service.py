# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Decisions about native Windows services (kubelet, kube-proxy, flanneld): command lines as
Windows parses them, the SCM's recovery settings, and what to change on a service."""

from __future__ import annotations

import base64
import re
import struct

FAILURE_RESET_SECONDS = 86400
START_AUTOMATIC = 2


def quote_windows_arg(arg):
    """Quote one argument so CommandLineToArgvW (and Go's os.Args) read it back unchanged."""
    if arg and not re.search(r'[\s"]', arg):
        return arg
    out, backslashes = ['"'], 0
    for c in arg:
        if c == "\\":
            backslashes += 1
            continue
        if c == '"':
            out.append("\\" * (2 * backslashes + 1) + '"')
        else:
            out.append("\\" * backslashes + c)
        backslashes = 0
    out.append("\\" * (2 * backslashes) + '"')
    return "".join(out)


def split_windows_command_line(cmd):
    """Split a command line like CommandLineToArgvW / Go's windows args parser."""
    args, i, n = [], 0, len(cmd)
    while i < n:
        while i < n and cmd[i] in " \t":
            i += 1
        if i >= n:
            break
        arg, inquote = [], False
        while i < n and (inquote or cmd[i] not in " \t"):
            if cmd[i] == "\\":
                j = i
                while j < n and cmd[j] == "\\":
                    j += 1
                count = j - i
                if j < n and cmd[j] == '"':
                    arg.append("\\" * (count // 2))
                    if count % 2:
                        arg.append('"')
                        j += 1
                    i = j
                else:
                    arg.append("\\" * count)
                    i = j
                continue
            if cmd[i] == '"':
                if inquote and i + 1 < n and cmd[i + 1] == '"':
                    arg.append('"')
                    i += 2
                    continue
                inquote = not inquote
                i += 1
                continue
            arg.append(cmd[i])
            i += 1
        args.append("".join(arg))
    return args


def render_command_line(argv):
    """Join argv into one command line that Windows splits back into the same argv."""
    return " ".join(quote_windows_arg(a) for a in argv)


def with_app_parameters(parameters, app_parameters):
    """The Parameters values with NSSM's AppParameters rendered from an argv list (None: as given).
    Raises ServiceParameterError when ``parameters`` has an AppParameters value too."""
    parameters = dict(parameters or {})
    if app_parameters is None:
        return parameters
    if any(k.lower() == "appparameters" for k in parameters):
        raise ServiceParameterError("app_parameters and an AppParameters value in parameters: give one of them")
    parameters["AppParameters"] = render_command_line(app_parameters)
    return parameters


def failure_actions_sc(delay_seconds, count=3):
    """Recovery actions in sc.exe's form: restart after ``delay_seconds``, ``count`` times."""
    return "/".join(["restart/%d" % (delay_seconds * 1000)] * count)


def decode_failure_actions(b64):
    """Decode the FailureActions registry value (SERVICE_FAILURE_ACTIONS as the SCM stores it):
    reset period, two unused pointers, the action count, a pointer, then (type, delay ms) pairs."""
    if not b64:
        return None
    data = base64.b64decode(b64)
    if len(data) < 20:
        return None
    reset, count = struct.unpack_from("<I", data, 0)[0], struct.unpack_from("<I", data, 12)[0]
    types = {0: "none", 1: "restart", 2: "reboot", 3: "run"}
    actions = []
    for i in range(count):
        if 20 + 8 * (i + 1) > len(data):
            break
        kind, delay = struct.unpack_from("<2I", data, 20 + 8 * i)
        actions.append("%s/%d" % (types.get(kind, str(kind)), delay))
    return {"reset_seconds": reset, "actions": "/".join(actions)}


def desired_definition(command_line, dependencies, restart_delay_seconds, display_name, description,
                       environment=None, parameters=None):
    """The service as it should be. ``environment`` is a dict set as the service's own environment;
    ``parameters`` are values of the service's Parameters registry key (how NSSM is configured)."""
    return {
        "command_line": command_line,
        "start_mode": "auto",
        "dependencies": list(dependencies),
        "display_name": display_name,
        "description": description,
        "environment": environment_block(environment),
        "parameters": parameter_values(parameters),
        "recovery": {"reset_seconds": FAILURE_RESET_SECONDS,
                     "actions": failure_actions_sc(restart_delay_seconds),
                     "on_non_crash_failures": True},
    }


# NSSM's settings it reads as numbers (registry.h NSSM_REG_*, read with get_number()/set_number() as
# REG_DWORD; a REG_SZ there is misread or ignored).
NSSM_DWORD_VALUES = frozenset(n.lower() for n in (
    "AppRestartDelay", "AppThrottle", "AppStopMethodSkip", "AppStopMethodConsole", "AppStopMethodWindow",
    "AppStopMethodThreads", "AppKillProcessTree", "AppRotateFiles", "AppRotateOnline", "AppRotateSeconds",
    "AppRotateBytes", "AppRotateBytesHigh", "AppRotateDelay", "AppTimestampLog", "AppNoConsole",
    "AppRedirectHook", "AppPriority")) | frozenset(
    # NSSM 2.24 registry.h: NSSM_REG_STDIO_SHARING/DISPOSITION/FLAGS, read as DWORDs after each stream's name
    ("App%s%s" % (stream, setting)).lower() for stream in ("Stdin", "Stdout", "Stderr")
    for setting in ("ShareMode", "CreationDisposition", "FlagsAndAttributes"))
_DWORD_MAX = 0xFFFFFFFF


class ServiceParameterError(ValueError):
    """A value for the service's Parameters key that cannot be stored as the program reads it."""


def check_description(description):
    """Refuse what Set-Service and New-Service refuse for -Description: an empty text. Their
    Description parameter is [ValidateNotNullOrEmpty] (PowerShell
    src/Microsoft.PowerShell.Commands.Management/commands/management/Service.cs, SetServiceCommand and
    NewServiceCommand), so on the host the call would fail after New-Service had already created the
    service, and every later run would fail the same way. Raises ServiceParameterError."""
    if description is not None and str(description) == "":
        raise ServiceParameterError(
            "description is empty, but Windows refuses an empty service description (Set-Service -Description is "
            "ValidateNotNullOrEmpty); give a text, or leave description out for the default")


def parameter_values(parameters):
    """Registry values of the Parameters key: a list becomes REG_MULTI_SZ text, a whole number (or
    true/false, or digits for a setting NSSM reads as a number) a REG_DWORD int, anything else
    REG_SZ text. Raises ServiceParameterError naming the value and what it must be."""
    values = {}
    for name, value in (parameters or {}).items():
        numeric = str(name).lower() in NSSM_DWORD_VALUES
        if isinstance(value, (list, tuple)):
            values[name] = [str(i) for i in value]
        elif isinstance(value, bool):
            values[name] = int(value)
        elif isinstance(value, int) or (numeric and isinstance(value, str) and value.strip().isdigit()):
            values[name] = int(value)
        elif numeric:
            raise ServiceParameterError(
                "parameters.%s is %r, but NSSM reads %s as a number (REG_DWORD); give a whole number from 0 to %d"
                % (name, value, name, _DWORD_MAX))
        else:
            values[name] = str(value)
        if isinstance(values[name], int) and not 0 <= values[name] <= _DWORD_MAX:
            raise ServiceParameterError("parameters.%s is %d, outside what a REG_DWORD holds (0 to %d)"
                                        % (name, values[name], _DWORD_MAX))
    return values


def parameter_types(values):
    """The registry type service_apply writes each value of parameter_values() with."""
    return {name: "DWord" if isinstance(v, int) else "MultiString" if isinstance(v, list) else "String"
            for name, v in (values or {}).items()}


def environment_block(environment):
    """{'A': 1} -> ['A=1'], sorted: the REG_MULTI_SZ 'Environment' value of a service."""
    return ["%s=%s" % (k, v) for k, v in sorted((environment or {}).items())]


def live_definition(answer):
    """The service as the service_state script reported it, in the desired form (None if absent)."""
    if not answer.get("exists"):
        return None
    start = answer.get("start")
    start_mode = {2: "auto", 3: "manual", 4: "disabled"}.get(start, str(start))
    if start == START_AUTOMATIC and answer.get("delayed_autostart"):
        start_mode = "delayed"
    failure = decode_failure_actions(answer.get("failure_actions")) or {"reset_seconds": None, "actions": ""}
    failure["on_non_crash_failures"] = bool(answer.get("failure_actions_on_non_crash"))
    return {
        "command_line": answer.get("image_path") or "",
        "start_mode": start_mode,
        "dependencies": list(answer.get("dependencies") or []),
        "display_name": answer.get("display_name") or "",
        "description": answer.get("description") or "",
        "environment": list(answer.get("environment") or []),
        "parameters": dict(answer.get("parameters") or {}),
        "recovery": failure,
    }


def definition_differences(desired, live):
    """Names of the fields that differ. The command line is compared as parsed arguments."""
    diffs = []
    if split_windows_command_line(desired["command_line"]) != split_windows_command_line(live["command_line"]):
        diffs.append("command_line")
    if desired["start_mode"] != live["start_mode"]:
        diffs.append("start_mode")
    if sorted(d.lower() for d in desired["dependencies"]) != sorted(d.lower() for d in live["dependencies"]):
        diffs.append("dependencies")
    for field in ("display_name", "description", "environment", "recovery"):
        if desired[field] != live[field]:
            diffs.append(field)
    # Only the values the task sets: a program may keep more of its own under Parameters.
    wanted = desired.get("parameters") or {}
    have = live.get("parameters") or {}
    if any(_registry_value(have.get(k)) != v for k, v in wanted.items()):
        diffs.append("parameters")
    return diffs


def _registry_value(value):
    """A value service_state read, typed as parameter_values() types it: REG_MULTI_SZ -> list of
    text, REG_DWORD (an int; RegistryKey.GetValue gives it signed) -> int 0..2^32-1, REG_SZ -> text.
    A REG_SZ "1" therefore differs from the wanted DWORD 1."""
    if isinstance(value, (list, tuple)):
        return [str(i) for i in value]
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value & _DWORD_MAX
    return None if value is None else str(value)


def plan_service(state, desired, answer):
    """Decide the service_apply call. Returns {changed, action, run, differences, before, after}
    where action is None when nothing needs to be written."""
    live = live_definition(answer)
    running = answer.get("status") == "Running"
    plan = {"changed": False, "action": None, "run": "none", "differences": [], "before": live or {},
            "after": live or {}}
    if state == "absent":
        if live is not None:
            plan.update(changed=True, action="remove", after={})
        return plan
    if live is None:
        plan.update(changed=True, action="create", after=desired, differences=["service"])
    else:
        plan["differences"] = definition_differences(desired, live)
        if plan["differences"]:
            plan.update(changed=True, action="update", after=desired)
    if state == "started":
        if not running:
            plan.update(changed=True, run="start")
        elif plan["action"]:
            plan["run"] = "restart"
    elif state == "stopped":
        if running:
            plan.update(changed=True, run="stop")
    elif running and plan["action"]:  # present: a running kubelet picks up a new definition
        plan["run"] = "restart"
    if plan["run"] != "none" and plan["action"] is None:
        plan["action"] = "none"  # only start or stop it
    return plan
