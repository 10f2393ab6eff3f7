# Test-lab only: the Service Control Manager over a host's state.
"""Services with SCM semantics: create/delete (a running service is only marked for deletion),
start (dependencies first; a missing dependency is error 1075), stop (dependents stop first when
forced), start modes, and the registry values SCM keeps (ImagePath, DependOnService, FailureActions
as a SERVICE_FAILURE_ACTIONS blob, FailureActionsOnNonCrashFailures, Description, DisplayName)."""

from __future__ import annotations

import base64
import datetime
import struct
import time

from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError

START_MODES = {"boot": 0, "system": 1, "auto": 2, "automatic": 2, "delayed": 2, "manual": 3, "demand": 3,
               "disabled": 4}
ACTION_TYPES = {"none": 0, "restart": 1, "reboot": 2, "run": 3}


def find(state, name):
    svc = state["services"].get(str(name).lower())
    if svc is None:
        # DisplayName also resolves, as Get-Service -Name falls back to it
        for s in state["services"].values():
            if s["display_name"].lower() == str(name).lower():
                return s
    return svc


def require(state, name):
    svc = find(state, name)
    if svc is None:
        raise SimError("OpenService FAILED 1060: The specified service does not exist as an installed service. (%s)"
                       % name)
    return svc


def create(state, name, image_path, display_name="", start=2, dependencies=None, description=""):
    existing = state["services"].get(name.lower())
    if existing is not None:
        if existing["pending_delete"]:
            raise SimError("CreateService FAILED 1072: The specified service has been marked for deletion. (%s)" % name)
        raise SimError("Service '%s' cannot be created because a service with that name already exists" % name)
    state["services"][name.lower()] = {
        "name": name, "display_name": display_name or name, "description": description, "image_path": image_path,
        "start": start, "delayed_autostart": 0, "dependencies": list(dependencies or []), "environment": [],
        "object_name": "LocalSystem", "status": "Stopped", "failure_actions": None,
        "failure_actions_on_non_crash": None, "pending_delete": False, "last_error": None,
        # values under HKLM\SYSTEM\CurrentControlSet\Services\<name>\Parameters (NSSM reads its
        # configuration there); the key goes with the service when it is deleted
        "parameters": {},
    }
    return state["services"][name.lower()]


def delete(state, name):
    svc = require(state, name)
    if svc["pending_delete"]:
        raise SimError("[SC] DeleteService FAILED 1072: The specified service has been marked for deletion.")
    if svc["status"] == "Stopped" and not _held(state, svc):
        del state["services"][svc["name"].lower()]
    else:
        svc["pending_delete"] = True  # SCM removes it once it stops and no other handle is open


def _held(state, svc):
    """Whether another program holds a handle to the service open (a test's state["open_service_handles"]: services.msc,
    a monitoring agent). Microsoft Learn, DeleteService: the database entry "is not removed until all open handles to
    the service have been closed by calls to the CloseServiceHandle function, and the service is not running";
    meanwhile CreateService of that name fails with ERROR_SERVICE_MARKED_FOR_DELETE (1072)."""
    return svc["name"].lower() in [n.lower() for n in state.get("open_service_handles") or []]


def dependents(state, name):
    return [s for s in state["services"].values() if name.lower() in [d.lower() for d in s["dependencies"]]]


# --- time, process ids and services that exit after reporting Running --------------------------
# A program that fails after SERVICE_RUNNING exits this long after its start (the kubelet and
# kube-proxy check the runtime, kubeconfig and bootstrap files within their first second).
EXIT_AFTER_SECONDS = 1.0


def clock(host):
    """The host's time: wall-clock time plus what scripts waited for (service_watch does not sleep,
    it moves the host's clock on)."""
    return time.time() + float(host.state.get("clock_offset") or 0)


def advance(host, seconds):
    host.state["clock_offset"] = float(host.state.get("clock_offset") or 0) + float(seconds)
    refresh(host)


def _new_pid(state):
    state["next_pid"] = int(state.get("next_pid") or 4000) + 4
    return state["next_pid"]


def restart_delay_seconds(svc):
    """The delay of the first recovery action when it is a restart (SERVICE_FAILURE_ACTIONS), or None."""
    blob = svc.get("failure_actions")
    if not blob:
        return None
    data = base64.b64decode(blob)
    count = struct.unpack_from("<I", data, 12)[0] if len(data) >= 20 else 0
    if count < 1 or len(data) < 28:
        return None
    kind, delay = struct.unpack_from("<2I", data, 20)
    return delay / 1000.0 if kind == ACTION_TYPES["restart"] else None


# --- NSSM: how it restarts its application --------------------------------------------------------
# Read in NSSM's source (fightroad/nssm @94da0f830cf3, the 2.24 code base): nssm.h l.95
# NSSM_RESET_THROTTLE_RESTART 1500 (AppThrottle's default, ms); registry.cpp l.878-881 reads
# AppRestartDelay (default 0) and AppThrottle at every start_service (get_parameters, service.cpp
# l.1852), and override_milliseconds (registry.cpp l.653-678) takes only a REG_DWORD, anything else is
# the default. service.cpp: start_service calls throttle_restart (l.1867), then reports START_PENDING
# (l.1869), starts the application, waits on its handle for throttle_delay (l.1960: throttle reset to 0
# when the application is still running then) and reports RUNNING (l.1966), even when the application
# already exited; "if (service->restart_delay && ! service->throttle) service->throttle++" (l.1976).
# end_service (l.2036) on the application's exit takes the AppExit action, default NSSM_EXIT_RESTART
# (l.2096, nssm.h l.132; nssm.cpp exit_action_strings "Restart"): monitor_service -> start_service
# again in the same nssm.exe process (l.2110-2115), so the service's process id never changes.
# throttle_restart (l.2140-2176): the first start (throttle 0) is not delayed; otherwise throttle++ and
# the service shows SERVICE_PAUSED (l.2166) for max(AppRestartDelay, throttle_milliseconds(throttle)),
# where throttle_milliseconds(n) = 2^(min(n, 8) - 1) s (l.279-284). The lab reads no AppExit key (the
# collection never sets one): every exit is restarted.
NSSM_THROTTLE_MS = 1500
# A program that fails at its first call under NSSM (flanneld without its kubeconfig) exits this long
# after it started: within AppThrottle, so NSSM throttles it (not measured: a first file read or API call).
NSSM_FAST_EXIT_SECONDS = 0.5


def _nssm_ms(svc, name, default):
    for k, v in (svc.get("parameters") or {}).items():
        if k.lower() == name.lower():
            # REG_DWORD only (override_milliseconds); the lab stores a DWORD as an int
            return (int(v) & 0xFFFFFFFF) if isinstance(v, int) and not isinstance(v, bool) else default
    return default


def nssm_throttle_seconds(svc):
    return _nssm_ms(svc, "AppThrottle", NSSM_THROTTLE_MS) / 1000.0


def _throttle_seconds(n):
    return float(2 ** (min(n, 8) - 1))


def nssm_timeline(svc, crash, at):
    """(status, application pid or 0) of an NSSM service whose application exits ``crash["run"]``
    seconds after each start, at host time ``at`` (see above for the source of each step)."""
    throttle_delay = nssm_throttle_seconds(svc)
    restart_delay = _nssm_ms(svc, "AppRestartDelay", 0) / 1000.0
    run = max(float(crash.get("run") or NSSM_FAST_EXIT_SECONDS), 0.001)
    t, throttle, launch = crash["since"], 0, 0
    while launch < 100000:
        if throttle == 0:  # throttle_restart: "if (! service->throttle++) return;"
            throttle = 1
        else:
            throttle += 1
            pause = max(restart_delay, _throttle_seconds(throttle))
            if at < t + pause:
                return "Paused", 0
            t += pause
        app_pid = int(crash["app_pid"]) + 4 * launch
        if run > throttle_delay:
            if at < t + throttle_delay:
                return "StartPending", app_pid
            throttle = 1 if restart_delay else 0
            if at < t + run:
                return "Running", app_pid
        elif at < t + run:
            return "StartPending", app_pid  # RUNNING only for the instant before end_service restarts it
        t += run
        launch += 1
    return "Paused", 0


def start_pending_seconds(svc, crash):
    """How long a start of this NSSM service stays START_PENDING: what Start-Service waits through
    (Service.cs DoWaitForStatus waits while the status is the pending one)."""
    if crash is None:
        return nssm_throttle_seconds(svc)
    return min(max(float(crash.get("run") or NSSM_FAST_EXIT_SECONDS), 0.001), nssm_throttle_seconds(svc))


def child_process(host, svc, at=None):
    """(pid, file name) of the application NSSM runs for this service now, or None."""
    proc = (host.state.get("processes") or {}).get(svc["name"].lower()) or {}
    if proc.get("wrapper") != "nssm" or svc.get("status") == "Stopped":
        return None
    name = str(proc.get("application") or "").replace("/", "\\").rsplit("\\", 1)[-1]
    crash = svc.get("crash")
    if crash and crash.get("kind") == "nssm":
        pid = nssm_timeline(svc, crash, clock(host) if at is None else at)[1]
    else:
        pid = int(svc.get("app_pid") or 0) if proc.get("state") == "running" else 0
    return (pid, name) if pid else None


def observe(host, svc, at=None):
    """(status, pid) of a service at host time ``at`` (now by default), playing forward a service
    that exits after reporting Running: the SCM marks it Stopped when its process ends without
    reporting SERVICE_STOPPED, and its restart action starts a new process after the delay, which
    fails the same way (the SCM repeats the last action for every later failure: Microsoft Learn,
    SERVICE_FAILURE_ACTIONS structure). Under NSSM the service process stays and NSSM restarts the
    application itself (nssm_timeline)."""
    if svc is None:
        return "", 0
    crash = svc.get("crash")
    if not crash:
        return svc["status"], int(svc.get("pid") or 0) if svc["status"] != "Stopped" else 0
    now = clock(host) if at is None else at
    dt = now - crash["since"]
    if crash["kind"] == "nssm":
        return nssm_timeline(svc, crash, now)[0], crash["pid"]
    run = float(crash.get("run") or EXIT_AFTER_SECONDS)
    delay = crash.get("restart_delay")
    if delay is None:
        return ("Running", crash["pid"]) if dt < run else ("Stopped", 0)
    period = run + delay
    n = int(dt // period)
    if dt - n * period < run:
        return "Running", crash["pid"] + 4 * n
    return "Stopped", 0


def exit_codes(host, svc):
    """(Win32ExitCode, ServiceSpecificExitCode) as Win32_Service reports them now."""
    if svc is None:
        return None, None
    crash = svc.get("crash")
    if crash and crash["kind"] == "exit" and clock(host) - crash["since"] >= float(crash.get("run") or
                                                                                   EXIT_AFTER_SECONDS):
        return 1067, 0
    return int(svc.get("exit_code") or 0), int(svc.get("service_exit_code") or 0)


def refresh(host):
    """Bring the stored status of every crash-looping service to the host's current time."""
    for svc in (host.state.get("services") or {}).values():
        if svc.get("crash"):
            svc["status"], svc["pid"] = observe(host, svc)


def klog_line(message, when=None):
    """A klog error line (the format of the kubelet's and kube-proxy's output)."""
    now = datetime.datetime.utcfromtimestamp(when or time.time())
    return "E%s %s %7d run.go:72] \"command failed\" err=\"%s\"" % (
        now.strftime("%m%d"), now.strftime("%H:%M:%S.%f"), 4242, str(message).replace('"', '\\"'))


def stop(host, name, force=True):
    state = host.state
    refresh(host)
    svc = require(state, name)
    if svc["status"] == "Stopped":
        return
    running_deps = [s for s in dependents(state, svc["name"]) if s["status"] != "Stopped"]
    if running_deps and not force:
        raise SimError("Cannot stop service '%s' because it has dependent services. It can only be stopped if the "
                       "Force flag is set." % svc["name"])
    for d in running_deps:
        stop(host, d["name"], force=True)
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_binaries
    winsim_binaries.service_process_stop(host, svc)
    svc["status"] = "Stopped"
    svc["pid"] = 0
    svc.pop("crash", None)
    svc.pop("app_pid", None)
    if svc["pending_delete"] and not _held(state, svc):
        del state["services"][svc["name"].lower()]


def control_stop(host, name):
    """ControlService(SERVICE_CONTROL_STOP) as a program calls it (kubeadm's ServiceStop, golang.org/x/sys
    windows/svc/mgr Service.Control): nothing is done for a stopped service; while a running service depends
    on it, the call fails with ERROR_DEPENDENT_SERVICES_RUNNING (Microsoft Learn, ControlService: "The service
    cannot be stopped because other running services are dependent on it"); dependents are never stopped."""
    refresh(host)
    svc = require(host.state, name)
    if svc["status"] == "Stopped":
        return
    if any(s["status"] != "Stopped" for s in dependents(host.state, svc["name"])):
        raise SimError("A stop control has been sent to a service that other running services are dependent on.")
    stop(host, svc["name"], force=False)


def start(host, name, _chain=()):
    """Start a service and, first, the services it depends on (as SCM does)."""
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_binaries

    state = host.state
    refresh(host)
    svc = require(state, name)
    if svc["status"] in ("Running", "Paused", "StartPending"):
        # Paused: the service process runs (NSSM throttling its application); winsim treats a
        # start request as a no-op, as for Running (not verified against Start-Service on Windows).
        return
    if svc["pending_delete"]:
        raise SimError("Service '%s' cannot be started: 1072 The specified service has been marked for deletion."
                       % svc["name"])
    if svc["start"] == 4:
        raise SimError("Service '%s (%s)' cannot be started due to the following error: Cannot start service %s on "
                       "computer '.'. (1058: The service cannot be started, either because it is disabled or because "
                       "it has no enabled devices associated with it.)"
                       % (svc["display_name"], svc["name"], svc["name"]))
    for dep in svc["dependencies"]:
        if find(state, dep) is None or find(state, dep)["pending_delete"]:
            svc["last_error"] = 1075
            raise SimError("Service '%s (%s)' cannot be started due to the following error: Cannot start service %s "
                           "on computer '.'. (1075: The dependency service does not exist or has been marked for "
                           "deletion.)" % (svc["display_name"], svc["name"], svc["name"]))
        try:
            start(host, dep, _chain + (svc["name"],))
        except SimError as e:
            svc["last_error"] = 1068
            raise SimError("Service '%s (%s)' cannot be started due to the following error: Cannot start service %s "
                           "on computer '.'. (1068: The dependency service or group failed to start: %s)"
                           % (svc["display_name"], svc["name"], svc["name"], e)) from None
    svc.pop("crash", None)
    svc.pop("app_pid", None)
    try:
        status = winsim_binaries.service_process_start(host, svc)
    except winsim_binaries.ExitsAfterRunning as e:
        # StartService returned and Start-Service saw Running: the exit comes a moment later.
        svc["pid"] = _new_pid(state)
        svc["status"] = "Running"
        svc["last_error"] = str(e)
        svc["crash"] = {"since": clock(host), "kind": e.kind, "error": str(e), "pid": svc["pid"],
                        "restart_delay": restart_delay_seconds(svc)}
        if e.kind == "nssm":
            svc["crash"].update(app_pid=_new_pid(state), run=NSSM_FAST_EXIT_SECONDS)
            _await_start_pending(host, svc)
        return
    except winsim_binaries.ServiceStopped as e:
        # The service process connected to the SCM, then reported SERVICE_STOPPED before RUNNING
        # (NSSM when it cannot run its application): StartService succeeded, so Start-Service
        # reports its own error after waiting for Running.
        svc["status"] = "Stopped"
        svc["last_error"] = str(e)
        raise SimError("Failed to start service '%s (%s)'. (%s)" % (svc["display_name"], svc["name"], e)) from None
    except SimError as e:
        svc["status"] = "Stopped"
        svc["last_error"] = str(e)
        raise SimError("Service '%s (%s)' cannot be started due to the following error: Cannot start service %s on "
                       "computer '.'. (%s)" % (svc["display_name"], svc["name"], svc["name"], e)) from None
    # A handler may report another steady state than Running: NSSM pauses a service whose
    # application keeps exiting (throttled restarts).
    svc["status"] = status or "Running"
    svc["pid"] = _new_pid(state)
    svc["last_error"] = None
    nssm = ((state.get("processes") or {}).get(svc["name"].lower()) or {}).get("wrapper") == "nssm"
    if nssm:
        svc["app_pid"] = _new_pid(state)
    # A test's way to have the program fail later, e.g. flanneld while it creates its HNS network:
    # state["app_exit_after"] = {service name: seconds after each start}.
    exit_after = (state.get("app_exit_after") or {}).get(svc["name"].lower())
    if exit_after:
        svc["crash"] = {"since": clock(host), "kind": "nssm" if nssm else "exit", "pid": svc["pid"],
                        "error": "winsim: the program exits %ss after it started" % exit_after,
                        "restart_delay": restart_delay_seconds(svc), "run": float(exit_after),
                        "app_pid": svc.pop("app_pid", None) or _new_pid(state)}
    if nssm:
        _await_start_pending(host, svc)


def _await_start_pending(host, svc):
    """Start-Service waits while the service is START_PENDING (PowerShell Service.cs DoWaitForStatus with
    pendingStatus StartPending): NSSM reports it until its application has run AppThrottle or exited.
    Not modelled: Start-Service's own error when the status after the wait is Paused (its 2 s
    WaitForStatus rounds); the lab lets it return and the collection's watch judges what follows."""
    advance(host, start_pending_seconds(svc, svc.get("crash")))
    svc["status"], _ = observe(host, svc)


def encode_failure_actions(reset_seconds, actions):
    """SERVICE_FAILURE_ACTIONS as SCM stores it in the FailureActions value: dwResetPeriod,
    lpRebootMsg, lpCommand, cActions, lpsaActions (offset of the array), then SC_ACTION pairs."""
    blob = struct.pack("<5I", reset_seconds, 0, 0, len(actions), 20 if actions else 0)
    for kind, delay in actions:
        blob += struct.pack("<2I", ACTION_TYPES[kind], delay)
    return base64.b64encode(blob).decode("ascii")


def parse_sc_actions(text):
    """'restart/10000/restart/10000' -> [('restart', 10000), ...] as sc.exe failure actions= reads it."""
    parts = [p for p in text.split("/")]
    if len(parts) % 2:
        raise SimError("[SC] ChangeServiceConfig2 FAILED 87: The parameter is incorrect. (actions=%s)" % text)
    out = []
    for kind, delay in (parts[i:i + 2] for i in range(0, len(parts), 2)):
        kind = kind.strip().lower() or "none"
        if kind not in ACTION_TYPES or not delay.isdigit():
            raise SimError("[SC] ChangeServiceConfig2 FAILED 87: The parameter is incorrect. (actions=%s)" % text)
        out.append((kind, int(delay)))
    return out


def snapshot(svc):
    """What the service looks like to a dump (stable, no transient errors)."""
    keep = ("name", "display_name", "description", "image_path", "start", "delayed_autostart", "dependencies",
            "environment", "object_name", "status", "failure_actions", "failure_actions_on_non_crash", "pending_delete",
            "parameters")
    snap = {k: svc.get(k) for k in keep}
    snap["environment"] = list(snap["environment"] or [])
    snap["parameters"] = dict(snap["parameters"] or {})
    return snap
