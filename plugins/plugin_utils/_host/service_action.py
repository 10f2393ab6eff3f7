# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The read-decide-apply cycle shared by the service action plugins (one read, at most one write)."""

from __future__ import annotations

from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import service as ws
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import service_logs as sl
from ansible_collections.kubewin.nodes.plugins.plugin_utils._winremote import RemoteScriptError, run_script


class ServiceNotRunning(RemoteScriptError):
    """A service the task started did not stay running."""


def converge_service(action, task_vars, name, state, build_desired, flags_file="", watch_seconds=0,
                     log_files=(), observed=None):
    """Read the service, let ``build_desired(answer)`` return (desired, warnings), apply the plan.

    ``observed``: this service as preflight's facts read found it (facts.service_definitions), taken instead of a
    read of its own (issue 22: no remote operation for a service already as wanted). The role passes it only while
    nothing in the run has touched the service; it is used only when it is of this service and flags file.

    A service the task starts is then watched for ``watch_seconds`` (service_logs: the programs
    report Running before they check their inputs), in the same service_apply call that starts it;
    ``log_files`` are where its own words are.
    Returns the task result fields. Raises whatever build_desired or the remote calls raise.
    """
    if state == "absent" and not action._task.check_mode and not action._task.diff:
        # service_apply removes a service only if there is one and says whether there was: no read first (one
        # remote operation; check and diff mode read, to report what would change)
        reply = _apply(action, task_vars, name, {"action": "remove", "run": "none"}, {}, (0, "", []))
        removed = bool(reply.get("removed"))
        return dict(changed=removed, command_line=None, status="Absent", differences=[],
                    definition="remove" if removed else "none", run="none")
    if usable_observation(observed, name, flags_file):
        answer = observed
    else:
        answer = run_script(action, task_vars, "service_state", {"Name": name, "FlagsFile": flags_file})
    desired, warnings = ({}, []) if state == "absent" else build_desired(answer)
    plan = ws.plan_service(state, desired, answer)
    status = answer.get("status") if answer.get("exists") else "Absent"
    if plan["changed"] and not action._task.check_mode:
        log_files = [p for p in log_files if p]
        started = plan["run"] in ("start", "restart")
        # A service this task starts is watched in the same call (service_apply): also when it is not Running
        # then (NSSM pauses a service whose program keeps exiting), the watch's samples and log tails say why.
        watch = int(watch_seconds) if started and watch_seconds > 0 else 0
        child = sl.wrapped_program(ws.split_windows_command_line(desired.get("command_line") or ""),
                                   desired.get("parameters")) if watch else ""
        try:
            reply = _apply(action, task_vars, name, plan, desired, (watch, child, log_files))
        except RemoteScriptError as e:
            if not started:
                raise
            # Start-Service throws when the program exits before reporting Running (1053, 1067)
            hint = sl.log_hint(name, log_files[0] if log_files else None)
            raise RemoteScriptError("%s. %s." % (str(e).rstrip(". "), hint)) from None
        status = reply.get("status", status)
        if watch:
            watched = reply.get("watch") or {}
            failure = sl.judge_watch(name, watched, list(log_files), child)
            if failure and watched.get("error") and status == "Running":
                # started, then the watch's own read failed: the start is reported done (changed), the task fails
                # with what was sampled and what to check (a re-run would not watch it again)
                return dict(failed=True, changed=True, status=status, definition=plan["action"] or "none",
                            run=plan["run"], watch_error=watched["error"],
                            msg="%s on %s: %s" % (action.module_name, getattr(action, "host", "?"), failure))
            if failure:
                raise ServiceNotRunning(failure)
        if started and status != "Running":
            # e.g. NSSM pauses a service whose program keeps exiting: that is not a started service.
            raise ServiceNotRunning("service %s was started but is %s. %s." % (
                name, status, sl.log_hint(name, log_files[0] if log_files else None)))
    result = dict(changed=plan["changed"], command_line=desired.get("command_line"), status=status,
                  differences=plan["differences"], definition=plan["action"] or "none", run=plan["run"])
    if warnings:
        result["warnings"] = warnings
    if action._task.diff and plan["changed"]:
        result["diff"] = {"before": plan["before"], "after": plan["after"],
                          "before_header": "service %s" % name, "after_header": "service %s" % name}
    return result


def usable_observation(observed, name, flags_file):
    """Whether ``observed`` answers for service ``name`` read with ``flags_file`` (service names are not
    case-sensitive on Windows; a flags file given as '' and as None is the same)."""
    return bool(observed) and str(observed.get("name", "")).lower() == name.lower() and \
        (observed.get("flags_file") or "") == (flags_file or "")


def _apply(action, task_vars, name, plan, desired, watch):
    """One service_apply call carrying the plan and, with watch = (seconds > 0, child, log files), the watch of
    the service it starts (one remote operation)."""
    seconds, child, log_files = watch
    return run_script(action, task_vars, "service_apply", {
        "Name": name,
        "Action": plan["action"],
        "CommandLine": desired.get("command_line", ""),
        "DisplayName": desired.get("display_name", ""),
        "Description": desired.get("description", ""),
        "Dependencies": desired.get("dependencies", []),
        "FailureResetSeconds": ws.FAILURE_RESET_SECONDS,
        "FailureActions": desired.get("recovery", {}).get("actions", ""),
        "Environment": desired.get("environment", []),
        "Parameters": desired.get("parameters", {}),
        "ParameterTypes": ws.parameter_types(desired.get("parameters", {})),
        "Run": plan["run"],
        "WatchSeconds": seconds,
        "WatchIntervalMs": sl.WATCH_INTERVAL_MS,
        "WatchChild": child,
        "WatchLogFiles": list(log_files),
        "WatchTailLines": sl.LOG_TAIL_LINES,
    })
