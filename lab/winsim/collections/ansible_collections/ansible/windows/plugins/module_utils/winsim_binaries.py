# Test-lab only: stand-in executables on the simulated C: drive.
"""A stand-in binary is a text file whose first line is ``KUBEWIN-SIM-BINARY <tool> <version>``.

Running one (win_command, win_shell, or as a service's ImagePath) dispatches to the Python
implementation registered for ``<tool>``. Anything else fails the way Windows would.
"""

from __future__ import annotations

import hashlib
import json
import ntpath
import os
import re

from ansible_collections.ansible.windows.plugins.module_utils.winsim_cmdline import (
    render_command_line,
    split_command_line,
)
from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError

MARKER = "KUBEWIN-SIM-BINARY"
COMMANDS = {}        # tool -> fn(host, version, args, stdin) -> (rc, stdout, stderr)
SERVICE_START = {}   # tool -> fn(host, version, svc, args) -> None (Running) or another status ("Paused")
SERVICE_STOP = {}    # tool -> fn(host, version, svc)
NEEDS_PROGRAM = {"containerd"}  # tools whose implementation takes program= (the resolved path, os.Args[0])
PROCESSES = {}       # tool -> fn(host, version, args, env, cwd, svc): a plain program started by a
                     # service wrapper (NSSM); raise ProcessExit when the program exits at start-up


class ServiceStopped(SimError):
    """The service process talked to the SCM and then reported SERVICE_STOPPED before RUNNING
    (its message: why, e.g. NSSM's event log text). Start-Service fails with "Failed to start service"."""


class ProcessExit(SimError):
    """A program exited at start-up: ``code`` is its exit code, the message what it printed last."""

    def __init__(self, message, code=1):
        SimError.__init__(self, message)
        self.code = code


class ExitsAfterRunning(SimError):
    """The service process reported SERVICE_RUNNING to the SCM, then exited (or, under NSSM, its
    application exited): ``Start-Service`` succeeds, and the failure shows only later, in the
    service's status and log. The kubelet, kube-proxy and NSSM all report Running before they check
    their inputs (kubelet: k8s.io/kubernetes v1.37.2 pkg/windows/service/service.go Execute reports
    Running at once, cmd/kubelet/app/server.go connects to the CRI and bootstraps later; kube-proxy:
    cmd/kube-proxy/app/server.go calls initForOS first; NSSM: Running once CreateProcess worked).
    ``kind`` is "exit" (the process ends: SCM records exit code 1067, ERROR_PROCESS_ABORTED, and
    applies the recovery actions) or "nssm" (NSSM stays and throttles the restarts of its
    application, showing the service Paused: NSSM 2.24 README.txt, "restart throttling")."""

    def __init__(self, message, kind="exit"):
        SimError.__init__(self, message)
        self.kind = kind


def command(tool):
    def register(fn):
        COMMANDS[tool] = fn
        return fn
    return register


def marker_line(tool, version):
    return "%s %s %s\n" % (MARKER, tool, version)


def read_marker(path):
    """(tool, version) of a stand-in binary, or None if the file is not one."""
    try:
        with open(path, "rb") as f:
            first = f.readline(200).decode("ascii", "replace").split()
    except (IOError, OSError):
        return None
    if len(first) >= 3 and first[0] == MARKER:
        return first[1], first[2]
    return None


def resolve_executable(host, name, cwd=None):
    """Find an executable like Windows does: absolute path, the working directory, then Path (+.exe)."""
    candidates = []
    names = [name] if name.lower().endswith((".exe", ".cmd", ".bat")) else [name + ".exe", name]
    if re.match(r"^[A-Za-z]:[\\/]", name):
        candidates = names
    else:
        dirs = ([cwd] if cwd else []) + [d for d in (host.state.get("env", {}).get("Path") or "").split(";") if d]
        candidates = [d.rstrip("\\") + "\\" + n for d in dirs for n in names]
    for c in candidates:
        try:
            local = host.local_path(c)
        except SimError:
            continue
        if os.path.isfile(local):
            return c, local
    return None, None


def log_process(host, win_exe, argv):
    """Process creation as Windows audits it: Security event 4688 records the full command line when
    "Include command line in process creation events" is on (Microsoft: "Command line process auditing",
    ADMX_AuditSettings/IncludeCmdLine), readable by whoever reads that log. Kept next to ops.log, outside
    the host state, so tests can check that no secret is ever on a command line."""
    with open(os.path.join(host.dir, "processes.log"), "a") as f:
        f.write(render_command_line([win_exe] + list(argv[1:])) + "\n")


def session_path(host):
    """The Path a program started by a module sees.

    The WinRM session's processes keep the environment the session started with; a change to the machine
    Path (win_path, win_environment) reaches new logons only (ansible.windows win_path/win_environment
    notes: "will need restarting to pick up new environment settings"). The stricter model: the machine
    environment as of the last boot (``env_boot``), unless the task sets ``Path`` through Ansible's
    ``environment`` keyword, which the PowerShell exec wrapper applies to the module process and so to
    the programs it starts. Here that reaches the module as a process variable named Path in any case
    but all-upper ``PATH``, which is the controller's own Linux variable.
    """
    for k, v in os.environ.items():
        if k.lower() == "path" and k != "PATH":
            return v
    from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import INITIAL_PATH
    return (host.state.get("env_boot") or {}).get("Path", INITIAL_PATH)


# PATHEXT of Windows Server (cmd's default order).
PATHEXT = (".com", ".exe", ".bat", ".cmd")


def look_path(host, name, path_value):
    """Go's exec.LookPath on Windows (os/exec/lp_windows.go, Go >= 1.19): ``name`` plus each PATHEXT
    extension in each Path directory; the current directory is not searched (ErrDot).
    Returns (windows path, local path) or (None, None)."""
    for d in (path_value or "").split(";"):
        d = d.strip().strip('"')
        if not d:
            continue
        for ext in ("",) if name.lower().endswith(PATHEXT) else PATHEXT:
            c = d.rstrip("\\") + "\\" + name + ext
            try:
                local = host.local_path(c)
            except SimError:
                continue
            if os.path.isfile(local):
                return c, local
    return None, None


def run(host, argv, cwd=None, stdin=None, shell="cmd"):
    """Run argv[0] with argv[1:]; returns (rc, stdout, stderr)."""
    win, local = resolve_executable(host, argv[0], cwd)
    if local is not None:
        log_process(host, win, argv)
    if local is None:
        if shell == "powershell":
            return 1, "", ("%s : The term '%s' is not recognized as the name of a cmdlet, function, script file, or "
                           "operable program.\r\n" % (argv[0], argv[0]))
        return 1, "", "'%s' is not recognized as an internal or external command,\r\noperable program or batch " \
                  "file.\r\n" \
            % argv[0]
    marker = read_marker(local)
    if marker is None:
        raise SimError("winsim: %s is not a stand-in binary (first line must be '%s <tool> <version>')" % (win, MARKER))
    tool, version = marker
    impl = COMMANDS.get(tool)
    if impl is None:
        raise SimError("winsim: no implementation for stand-in binary %s (%s %s)" % (win, tool, version))
    host.fault("exec:" + tool)
    if tool in NEEDS_PROGRAM:
        return impl(host, version, list(argv[1:]), stdin, program=win)
    return impl(host, version, list(argv[1:]), stdin)


def service_process_start(host, svc):
    """What happens when SCM launches a service's ImagePath."""
    argv = split_command_line(svc["image_path"] or "")
    if not argv:
        raise SimError("2: The system cannot find the file specified.")
    win, local = resolve_executable(host, argv[0])
    if local is None:
        raise SimError("2: The system cannot find the file specified. (%s)" % argv[0])
    log_process(host, win, argv)
    marker = read_marker(local)
    if marker is None:
        raise SimError("193: %s is not a valid Win32 application." % win)
    tool, version = marker
    host.fault("service:" + svc["name"].lower())
    fn = SERVICE_START.get(tool)
    if fn is None:
        # A program that does not talk to the SCM: SCM gives up waiting for it.
        raise SimError("1053: The service did not respond to the start or control request in a timely fashion.")
    return fn(host, version, svc, argv[1:])


def service_process_stop(host, svc):
    # What the service ran (kube-proxy, NSSM's application) ends with it; what it did stays.
    (host.state.get("processes") or {}).pop(svc["name"].lower(), None)
    argv = _argv(svc)
    if not argv:
        return
    win, local = resolve_executable(host, argv[0])
    marker = read_marker(local) if local else None
    if marker and marker[0] in SERVICE_STOP:
        SERVICE_STOP[marker[0]](host, marker[1], svc)


def locked_files(host):
    """Local paths (on the simulated drive) of files that cannot be deleted now: the programs of
    running services (and of what NSSM runs for them) and the output files NSSM holds open."""
    locked = set()

    def add(win_path):
        try:
            locked.add(os.path.normcase(os.path.abspath(host.local_path(win_path))))
        except SimError:
            pass
    for svc in (host.state.get("services") or {}).values():
        if svc.get("status") == "Stopped":
            continue
        argv = _argv(svc)
        if argv:
            win, local = resolve_executable(host, argv[0])
            if win:
                add(win)
            # kube-log-runner's command runs as long as it does: its program is in use too
            marker = read_marker(local) if local else None
            child = next((a for a in argv[1:] if not a.startswith("-")), None)
            # containerd holds its --log-file open without FILE_SHARE_DELETE (Go syscall.Open shares read and write)
            if marker and marker[0] == "containerd" and containerd_log_file(argv[1:]):
                add(containerd_log_file(argv[1:]))
            if marker and marker[0] == "kube-log-runner" and child:
                child_win, _ = resolve_executable(host, child)
                if child_win:
                    add(child_win)
    # a pod sandbox keeps its shim running (containerd starts one containerd-shim-runhcs-v1.exe per pod, which keeps
    # running when containerd stops: containerd core/runtime/v2/shim_windows.go, "containerd daemon can reconnect
    # to the shim log stream if it is restarted"; docs/runtime-v2.md), and so does a shim that has not exited yet
    if shims(host):
        add(CONTAINERD_SHIM)
    for name, proc in (host.state.get("processes") or {}).items():
        if proc.get("application") and proc.get("state") == "running":
            add(str(proc["application"]))
            # under NSSM, kube-log-runner's command and its log file are in use too
            for key in ("command", "log_file"):
                if (proc.get("log_runner") or {}).get(key):
                    add(str(proc["log_runner"][key]))
        svc = (host.state.get("services") or {}).get(name) or {}
        if proc.get("wrapper") == "nssm":
            for key, value in (svc.get("parameters") or {}).items():
                if key.lower() in ("appstdout", "appstderr") and value and proc.get("state") == "running":
                    add(str(value))
    return locked


def shared_write_files(host):
    """Local paths of the files in use (locked_files) whose holder shares them for reading and writing: the --log-file
    of a running containerd (Go's syscall.Open: FILE_SHARE_READ | FILE_SHARE_WRITE), which another process may read,
    write and truncate, but not rename or delete."""
    out = set()
    for svc in (host.state.get("services") or {}).values():
        argv = _argv(svc) if svc.get("status") != "Stopped" else []
        if argv and ntpath.basename(argv[0]).lower() == "containerd.exe" and containerd_log_file(argv[1:]):
            out.add(os.path.normcase(os.path.abspath(host.local_path(containerd_log_file(argv[1:])))))
    return out


def _argv(svc):
    return split_command_line(svc["image_path"] or "")


# --- system services and runtimes: start/stop only ------------------------------------------
def _plain_service(host, version, svc, args):
    return None


def _runtime_start(pipe):
    def start(host, version, svc, args):
        if "--run-service" not in args:
            raise SimError("1053: The service did not respond to the start or control request in a timely fashion.")
        pipes = host.state.setdefault("pipes", [])
        if pipe not in pipes:
            pipes.append(pipe)
    return start


def _runtime_stop(pipe):
    def stop(host, version, svc):
        pipes = host.state.setdefault("pipes", [])
        if pipe in pipes:
            pipes.remove(pipe)
    return stop


for _tool in ("svchost", "vmcompute"):
    SERVICE_START[_tool] = _plain_service
def _containerd_start(host, version, svc, args):
    """containerd needs the Host Compute Service of the Containers feature (its runhcs shim calls HCS: Microsoft
    Learn, "Prepare Windows operating system containers"). What containerd does at start without it is not
    documented: the stricter choice here, the service does not start."""
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_features
    if winsim_features.feature_state(host.state, "Containers") != "Installed":
        raise SimError("1067: The process terminated unexpectedly. (winsim: the Containers feature is %s; containerd "
                       "needs it installed and the host restarted)"
                       % winsim_features.feature_state(host.state, "Containers"))
    log = containerd_log_file(args)
    if log is not None:
        _containerd_open_log(host, version, log)
    _runtime_start(r"\\.\pipe\containerd-containerd")(host, version, svc, args)
    # the runtime's version the kubelet reports is the one running now: the kubelet asks the CRI (Version) at each
    # node status update (k8s.io/kubernetes pkg/kubelet/nodestatus/setters.go VersionInfo), so a containerd upgraded
    # under the same service shows its new release
    if svc.get("name") == "containerd" and (host.state.get("runtime") or {}).get("name") == "containerd":
        host.state["runtime"]["version"] = str(version).lstrip("v")


def _iso(seconds):
    import datetime
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def containerd_log_file(args):
    """containerd's --log-file (urfave/cli: ``--log-file value`` or ``--log-file=value``), None without one."""
    for i, a in enumerate(args):
        if a.startswith("--log-file="):
            return a.split("=", 1)[1]
        if a == "--log-file" and i + 1 < len(args):
            return args[i + 1]
    return None


def _containerd_open_log(host, version, path):
    """--run-service with --log-file (cmd/containerd/command/service_windows.go registerUnregisterService):
    ``os.OpenFile(logFileFlag, O_APPEND|O_CREATE|O_WRONLY)``, which does not make the directory; an error ends
    containerd ("open log file %q: %w") before it reports to the SCM, which the SCM sees as the process ending. Then
    logrus writes its start-up lines there (text format, cmd/containerd/server: "starting containerd")."""
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_scm
    local = host.local_path(path)
    if not os.path.isdir(os.path.dirname(local)):
        raise SimError("1067: The process terminated unexpectedly. (winsim: containerd: open log file %s: The "
                       "system cannot find the path specified.)" % json.dumps(path))
    with open(local, "a", encoding="utf-8") as f:
        f.write('time="%s" level=info msg="starting containerd" version=v%s\n'
                % (_iso(winsim_scm.clock(host)), str(version).lstrip("v")))


SERVICE_START["containerd"] = _containerd_start
SERVICE_STOP["containerd"] = _runtime_stop(r"\\.\pipe\containerd-containerd")
SERVICE_START["cri-dockerd"] = _runtime_start(r"\\.\pipe\cri-dockerd")
SERVICE_STOP["dockerd"] = _runtime_stop(r"\\.\pipe\docker_engine")


def _dockerd_start(host, version, svc, args):
    """dockerd: its pipe, then its network store against HNS (winsim_docker.daemon_start)."""
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_docker
    _runtime_start(r"\\.\pipe\docker_engine")(host, version, svc, args)
    winsim_docker.daemon_start(host)


SERVICE_START["dockerd"] = _dockerd_start


def _fake_commit(tool, version, length=40):
    """A stable stand-in for the git commit a release binary reports."""
    return hashlib.sha1(("%s %s" % (tool, version)).encode()).hexdigest()[:length]


@command("containerd")
def _containerd(host, version, args, stdin, program=None):
    if args[:1] in (["--version"], ["-v"]):
        v = version.lstrip("v")
        module = "github.com/containerd/containerd" + ("/v2" if v.split(".")[0] == "2" else "")
        return 0, "containerd %s v%s %s\n" % (module, v, _fake_commit("containerd", v)), ""
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_containerd
    rc, out, err = winsim_containerd.command(host, version, args, program)
    if rc == 0 and winsim_containerd._major(version) >= 2 and _containerd_file_version(host, args) == 2:
        # containerd 2.x migrates a version 2 file in memory and says so on stderr (logrus, containerd's
        # log package writes to os.Stderr): cmd/containerd/server/config/config.go LoadConfig,
        # 'Warnf("Configuration migrated from version %d, use `containerd config migrate` to avoid
        # migration", currentVersion)' with the field t (the time the migration took)
        err += ('time="%s" level=warning msg="Configuration migrated from version 2, use `containerd config '
                'migrate` to avoid migration" t="4.536\u00b5s"\n' % _log_time(host))
    return rc, out, err


def _containerd_file_version(host, args):
    """The ``version`` of the configuration file containerd reads (``--config``/``-c``, else its default
    C:\\Program Files\\containerd\\config.toml); None without a readable file."""
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_containerd
    path = winsim_containerd.DEFAULT_CONFIG
    for i, a in enumerate(args):
        if a in ("--config", "-c") and i + 1 < len(args):
            path = args[i + 1]
        elif a.startswith("--config="):
            path = a.split("=", 1)[1]
    try:
        import tomllib
        with open(host.local_path(path), "rb") as f:
            return int(tomllib.load(f).get("version") or 1)
    except (OSError, ValueError, SimError):
        return None


def _log_time(host):
    import datetime
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f000Z")


CONTAINERD_PIPE = r"\\.\pipe\containerd-containerd"
CONTAINERD_SHIM = "C:\\Program Files\\containerd\\bin\\containerd-shim-runhcs-v1.exe"
# How long a pod's shim runs on after crictl rmp removed its sandbox. containerd's task delete sends the shim a Shutdown
# RPC and does not wait for its process (core/runtime/v2/shim.go shimTask.delete -> waitShutdown; runc-v2's Shutdown,
# cmd/containerd-shim-runc-v2/task/service.go, only starts the shutdown and returns, and the process exits after; a
# failed Shutdown logs "the shim might be leaked"). hcsshim's exit time is not known: 3 s, so a check must poll.
SHIM_EXIT_SECONDS = 3


def _shim_pid(sandbox_id):
    import zlib
    return 6000 + (zlib.crc32(str(sandbox_id).encode()) % 5000) * 4  # Windows PIDs are multiples of 4


def shims(host):
    """The containerd-shim-runhcs-v1.exe processes running now: [{pid, namespace, sandbox}]. One per pod sandbox (CRI
    pods, containerd namespace k8s.io; a test's state["sandboxes"]), plus state["shims"]: pods' shims still exiting
    (exits_at, set by rmp) and containers of other containerd namespaces (nerdctl's default, buildkit's), which
    crictl does not see and which run until their container is stopped (exits_at None)."""
    from ansible_collections.ansible.windows.plugins.module_utils.winsim_scm import clock
    now = clock(host)
    out = [{"pid": s.get("shim_pid") or _shim_pid(s["id"]), "namespace": "k8s.io", "sandbox": s["id"]}
           for s in host.state.get("sandboxes") or []]
    return out + [s for s in host.state.get("shims") or [] if s.get("exits_at") is None or s["exits_at"] > now]




def _running_containerd_version(host):
    """The release of the program the running containerd service runs (its stand-in's marker), or None."""
    svc = (host.state.get("services") or {}).get("containerd") or {}
    argv = _argv(svc) if svc.get("status") == "Running" and svc.get("image_path") else []
    _, local = resolve_executable(host, argv[0]) if argv else (None, None)
    marker = read_marker(local) if local else None
    return marker[1] if marker and marker[0] == "containerd" else None


@command("crictl")
def _crictl(host, version, args, stdin):
    """crictl: the image commands with --config (winsim_crictl: images, inspecti, pull, rmi), the upgrade's with
    --runtime-endpoint (below). One registration: a second @command("crictl") would replace the first."""
    if args[:1] != ["--runtime-endpoint"]:
        from ansible_collections.ansible.windows.plugins.module_utils import winsim_crictl
        return winsim_crictl.command(host, version, args)
    return _crictl_endpoint(host, args)


def _crictl_endpoint(host, args):
    """crictl --runtime-endpoint <npipe> version | rmp --all --force (kubernetes-sigs/cri-tools cmd/crictl):
    version prints Version (the CRI API's 0.1.0), RuntimeName, RuntimeVersion (containerd's version.Version, the
    tag: internal/cri/server/version.go) and RuntimeApiVersion v1 (version.go); rmp --all --force stops and removes
    every pod sandbox, "Removed sandbox <id>" each (sandbox.go). Without the pipe (containerd not running) crictl
    cannot connect: the message here is the stand-in's, exit code 1 as crictl's on any error."""
    if len(args) < 3 or args[0] != "--runtime-endpoint":
        return 1, "", "winsim: crictl %s is not simulated\n" % " ".join(args)
    endpoint, sub = args[1], args[2:]
    if sub[:1] in (["--timeout"], ["-t"]) and len(sub) > 2:  # a duration per CRI call (main.go); not timed here
        sub = sub[2:]
    pipe = endpoint.replace("npipe:////./pipe/", "\\\\.\\pipe\\")
    if pipe != CONTAINERD_PIPE or pipe not in (host.state.get("pipes") or []):
        return 1, "", ('time="%s" level=fatal msg="validate service connection: validate CRI v1 runtime API for '
                       'endpoint \\"%s\\": rpc error: code = Unavailable desc = connection error"\n'
                       % (_log_time(host), endpoint))
    if sub == ["version"]:
        return 0, ("Version:  0.1.0\nRuntimeName:  containerd\nRuntimeVersion:  v%s\nRuntimeApiVersion:  v1\n"
                   % (_running_containerd_version(host) or "").lstrip("v")), ""
    if sub == ["rmp", "--all", "--force"]:
        from ansible_collections.ansible.windows.plugins.module_utils.winsim_scm import clock
        removed = host.state.pop("sandboxes", None) or []
        # each pod's shim was told to shut down and exits a little later (SHIM_EXIT_SECONDS)
        host.state["shims"] = shims(host)  # the sandboxes are gone: the shims still running
        host.state["shims"].extend(
            {"pid": s.get("shim_pid") or _shim_pid(s["id"]), "namespace": "k8s.io", "sandbox": s["id"],
             "exits_at": clock(host) + SHIM_EXIT_SECONDS} for s in removed)
        return 0, "".join("Removed sandbox %s\n" % s["id"] for s in removed), ""
    return 1, "", "winsim: crictl %s is not simulated\n" % " ".join(args)


@command("dockerd")
def _dockerd(host, version, args, stdin):
    if args[:1] in (["--version"], ["-v"]):
        v = version.lstrip("v")
        return 0, "Docker version %s, build %s\n" % (v, _fake_commit("dockerd", v, 7)), ""
    return 1, "", "winsim: dockerd %s is not simulated\n" % " ".join(args)


@command("docker")
def _docker(host, version, args, stdin):
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_docker
    return winsim_docker.cli(host, version, args)


# The Kubernetes binaries live in winsim_kube, kube-proxy/NSSM/flanneld in winsim_node, windows_exporter in
# winsim_exporter (imported for their registrations).
from ansible_collections.ansible.windows.plugins.module_utils import (  # noqa: E402,F401
    winsim_exporter,
    winsim_kube,
    winsim_node,
)
