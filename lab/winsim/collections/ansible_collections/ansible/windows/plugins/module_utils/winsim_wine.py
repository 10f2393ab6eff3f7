# Test-lab only: the real Windows kubelet.exe / kube-proxy.exe, run under Wine to validate a command line.
"""Real Windows binaries under Wine (lab/README.md, "Wine").

``lab/bin/lab-build`` builds ``kubelet.exe``, ``kube-proxy.exe`` and ``kubeadm.exe`` with
``GOOS=windows`` from the lab's own Go module and flags for each version the lab serves
(``_cache/<version>/win/``) and a Wine prefix (``_cache/wine/prefix``). When a simulated host starts
the kubelet or kube-proxy service, the command line the SCM would run is first run through the real
binary of that version, which parses and validates its flags, feature gates and config file, and is
stopped before it touches HNS, the container runtime or the API server:

- kubelet (k8s.io/kubernetes v1.37.2 cmd/kubelet/app/server.go, NewKubeletCommand RunE): flag parse,
  feature gates, ``ValidateKubeletFlags``, ``loadConfigFile`` (+ drop-ins), ``SetFromMap`` of the
  file's gates, ``ValidateKubeletConfiguration``, ``UnsecuredDependencies``; then ``Run`` calls
  ``initForOS`` first (server.go:549), which with ``--windows-service`` calls
  ``service.InitServiceWithShutdown`` (pkg/windows/service/service.go: ``svc.Run`` =
  StartServiceCtrlDispatcher). A process the SCM did not start cannot connect to the service
  controller (ERROR_FAILED_SERVICE_CONTROLLER_CONNECT, 1063; Wine's advapi32 gives the same), so the
  kubelet exits with ``failed OS init: Service controller connect failed.`` (Wine's text for 1063,
  after Wine's dispatcher waits about 10 s): everything before it passed. Faster, when the command
  line sets no ``--windows-priorityclass``: ``--windows-priorityclass=<not a class>`` is appended,
  and ``initForOS`` stops at once at its first line (init_windows.go getPriorityValue: ``unknown
  priority class``), the same point. Any other ending (another error, or still running at the
  timeout) is a failure: the stricter choice.
  ``UnsecuredDependencies`` writes a self-signed serving certificate into ``--cert-dir`` when the
  config names none; that happens in the throw-away C: below, not on the simulated host.
- kube-proxy (cmd/kube-proxy/app/server.go RunE, options.go Run): flags (feature gates are checked
  while parsing), ``initForOS``, ``Complete`` (reads ``--config``), logging, ``Validate``, then
  ``Run`` returns right after writing ``--write-config-to`` (before platformCleanup, the API client
  and HNS). So the command line runs with ``--windows-service=false --write-config-to=<file>``
  appended (pflag: the last value wins) and passes when it exits 0 having written the file.

Each run gets a throw-away Wine prefix: the lab prefix's registry files, ``C:\\Windows`` linked to
the lab prefix's, and on C: only the files the command line reads (copied from the simulated host).
Results are memoised by content in ``_cache/wine/results`` (the binaries do not change once built).
"""

from __future__ import annotations

import hashlib
import json
import ntpath
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError

STOP_CLASS = "WINSIM_STOP_AT_INIT_FOR_OS"
KUBELET_REACHED_RUN_FAST = "failed OS init: unknown priority class %s," % STOP_CLASS
KUBELET_REACHED_RUN = "failed OS init: Service controller connect failed."
WINE_ENV = {"WINEDEBUG": "-all", "WINEDLLOVERRIDES": "bcryptprimitives=n;mscoree,mshtml="}
TIMEOUT = 120


class WineUnavailable(Exception):
    pass


def binary(cache, version, program):
    """The Windows build of program (kubelet, kube-proxy, kubeadm of a Kubernetes version; flanneld
    of a flannel version; windows_exporter of its release) for version, or None."""
    if not cache:
        return None
    if program == "flanneld":  # not under _cache/v*: the mirror takes those for Kubernetes versions
        path = os.path.join(cache, "flannel", version, "flanneld.exe")
    elif program == "windows_exporter":
        path = os.path.join(cache, "windows_exporter", version, "windows_exporter.exe")
    else:
        path = os.path.join(cache, version, "win", program + ".exe")
    prefix = os.path.join(cache, "wine", "prefix", "system.reg")
    if os.path.isfile(path) and os.path.isfile(prefix) and shutil.which("wine"):
        return path
    return None


def _drive_path(drive_c, win_path):
    drive, rest = ntpath.splitdrive(win_path)
    if drive.lower() != "c:":
        raise ValueError("only C: paths are mapped: %s" % win_path)
    parts = [p for p in rest.replace("/", "\\").split("\\") if p]
    return os.path.join(drive_c, *parts)


def _make_prefix(cache):
    base = os.path.join(cache, "wine")
    lab_prefix = os.path.join(base, "prefix")
    tmp_root = os.path.join(base, "tmp")
    os.makedirs(tmp_root, exist_ok=True)
    prefix = tempfile.mkdtemp(prefix="run-", dir=tmp_root)
    for name in (".update-timestamp", "system.reg", "user.reg", "userdef.reg"):
        shutil.copy(os.path.join(lab_prefix, name), os.path.join(prefix, name))
    drive_c = os.path.join(prefix, "drive_c")
    os.makedirs(os.path.join(prefix, "dosdevices"))
    os.makedirs(drive_c)
    os.symlink("../drive_c", os.path.join(prefix, "dosdevices", "c:"))
    for name in os.listdir(os.path.join(lab_prefix, "drive_c")):
        if name.lower() in ("windows", "programdata", "users"):
            os.symlink(os.path.join(lab_prefix, "drive_c", name), os.path.join(drive_c, name))
    return prefix, drive_c


# What Wine itself needs from the Unix environment; nothing else of the caller's reaches the program
# (a variable like NODE_NAME or KUBECONFIG in the test's environment would change what it does).
WINE_HOST_ENV = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "TMPDIR")


def run(cache, version, program, argv, files, timeout=TIMEOUT, env=None, cwd=None):
    """Run <program>.exe of version with argv under Wine, C: holding `files` ({win path: bytes}), with
    the environment variables `env` ({name: value}) and the current directory `cwd` (a C: path; C:\\
    when None). Returns {"rc": exit code or None (timed out), "output": stdout+stderr, "written":
    {win path: bytes}} where written are the C: files listed in `files` with value None, read back
    after the run."""
    exe = binary(cache, version, program)
    if not exe:
        raise WineUnavailable("no Windows %s %s under %s (run lab/bin/lab-build)" % (program, version, cache))
    env = dict(env or {})
    key = hashlib.sha256(json.dumps([os.path.getmtime(exe), os.path.getsize(exe), program, version, argv,
                                     sorted((k, hashlib.sha256(v).hexdigest() if v is not None else None)
                                            for k, v in files.items()), sorted(env.items()), cwd]).encode()).hexdigest()
    memo = os.path.join(cache, "wine", "results", key + ".json")
    if os.path.exists(memo):
        with open(memo) as f:
            return json.load(f)
    prefix, drive_c = _make_prefix(cache)
    env.update({k: os.environ[k] for k in WINE_HOST_ENV if k in os.environ})
    env.update(WINEPREFIX=prefix, **WINE_ENV)
    try:
        for win_path, data in files.items():
            local = _drive_path(drive_c, win_path)
            os.makedirs(os.path.dirname(local), exist_ok=True)
            if data is None:
                continue
            with open(local, "wb") as f:
                f.write(data)
        workdir = _drive_path(drive_c, cwd) if cwd else drive_c
        os.makedirs(workdir, exist_ok=True)
        proc = subprocess.Popen(["wine", exe] + list(argv), cwd=workdir, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=timeout)
            rc = proc.returncode
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            rc = None
        written = {}
        for win_path, data in files.items():
            if data is None:
                local = _drive_path(drive_c, win_path)
                if os.path.isfile(local):
                    with open(local, "rb") as f:
                        written[win_path] = f.read().decode("utf-8", "replace")
        result = {"rc": rc, "output": out.decode("utf-8", "replace"), "written": written}
    finally:
        subprocess.run(["wineserver", "-k"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=False)
        shutil.rmtree(prefix, ignore_errors=True)
    if rc is not None:
        os.makedirs(os.path.dirname(memo), exist_ok=True)
        with open(memo + ".tmp", "w") as f:
            json.dump(result, f)
        os.replace(memo + ".tmp", memo)
    return result


def flag_value(args, name):
    """The last value pflag would bind to --name (either --name=value or --name value), or None."""
    value = None
    for i, a in enumerate(args):
        if a in ("-" + name, "--" + name) and i + 1 < len(args):
            value = args[i + 1]
        elif a.startswith(("-%s=" % name, "--%s=" % name)):
            value = a.split("=", 1)[1]
    return value


def host_files(host, paths):
    """{win path: bytes} of the paths that exist on the simulated host (C: only)."""
    files = {}
    for p in paths:
        if p and re.match(r"^[Cc]:[\\/]", p):
            try:
                local = host.local_path(p)
            except SimError:
                continue
            if os.path.isfile(local):
                with open(local, "rb") as f:
                    files[p] = f.read()
    return files


def kubeconfig_files(host, win_path):
    """The C: files a kubeconfig on the simulated host names (client-go clientcmd reads them while
    building the client config; a relative path is relative to the kubeconfig's directory)."""
    import yaml

    files = host_files(host, [win_path])
    if win_path not in files:
        return files
    try:
        doc = yaml.safe_load(files[win_path]) or {}
    except yaml.YAMLError:
        return files
    named = []
    for section, item, keys in (("clusters", "cluster", ("certificate-authority",)),
                                ("users", "user", ("tokenFile", "client-certificate", "client-key"))):
        for entry in doc.get(section) or []:
            for k in keys:
                v = ((entry or {}).get(item) or {}).get(k)
                if isinstance(v, str) and v:
                    named.append(v if ntpath.isabs(v) else ntpath.join(ntpath.dirname(win_path), v))
    files.update(host_files(host, named))
    return files


# Wine's texts for Windows system error codes (its FormatMessage) differ from Windows'; the
# simulated host shows Windows' (Microsoft Learn, "System Error Codes (0-499)").
WINDOWS_MESSAGES = {"File not found.": "The system cannot find the file specified.",
                    "Path not found.": "The system cannot find the path specified.",
                    "Access denied.": "Access is denied."}


def windows_text(message):
    for wine, windows in WINDOWS_MESSAGES.items():
        message = message.replace(wine, windows)
    return message


def _tail(output, n=6):
    """The program's own error (klog's "command failed", with its multi-line ``err=<`` block, cobra's
    "Error:", a Go "panic:") if it printed one, else its last lines."""
    lines = [ln for ln in output.replace("\r\n", "\n").split("\n") if ln.strip()]
    for i in range(len(lines) - 1, -1, -1):
        ln = lines[i]
        if '"command failed"' in ln and ln.rstrip().endswith("err=<"):
            block = [ln.rstrip()[:-1]]
            for more in lines[i + 1:]:
                if more.strip() == ">":
                    break
                block.append(more.strip())
            return " ".join(block)
        if '"command failed"' in ln or ln.startswith(("Error: ", "panic: ")):
            return ln
    return "\n".join(lines[-n:])


def kubelet_validate(cache, version, argv, files):
    """None when the real kubelet accepted argv and its config (it reached Run), else its error."""
    if flag_value(argv, "windows-priorityclass") is None:
        res = run(cache, version, "kubelet", list(argv) + ["--windows-priorityclass=" + STOP_CLASS], files)
        reached = KUBELET_REACHED_RUN_FAST
    else:
        res = run(cache, version, "kubelet", argv, files)
        reached = KUBELET_REACHED_RUN
    if res["rc"] is not None and reached in res["output"]:
        return None
    if res["rc"] is None:
        return "kubelet %s under Wine did not exit within %ss; its last output:\n%s" % (version, TIMEOUT,
                                                                                         _tail(res["output"]))
    return _tail(res["output"])


KUBE_PROXY_CONFIG_OUT = "C:\\winsim-wine\\kube-proxy-effective.yaml"


def kube_proxy_validate(cache, version, argv, files):
    """(None, effective config text) when the real kube-proxy accepted argv and its config, else (error, None)."""
    files = dict(files)
    files[KUBE_PROXY_CONFIG_OUT] = None
    res = run(cache, version, "kube-proxy",
              list(argv) + ["--windows-service=false", "--write-config-to=" + KUBE_PROXY_CONFIG_OUT], files)
    written = res["written"].get(KUBE_PROXY_CONFIG_OUT)
    if res["rc"] == 0 and written:
        return None, written
    if res["rc"] is None:
        return ("kube-proxy %s under Wine did not exit within %ss; its last output:\n%s"
                % (version, TIMEOUT, _tail(res["output"]))), None
    return _tail(res["output"]), None


# --- flanneld (flannel-io/flannel main.go, pkg/subnet/kube/kube.go; v0.26.7 and v0.27.4 read) -----
# main.go's init parses the flags with Go's flag package (flag.ExitOnError, and a usage function that
# exits 0: an unknown or malformed flag prints "flag provided but not defined: -x" and the usage, and
# exits 0); main applies FLANNELD_* variables (flagutil.SetFlagsFromEnv), checks
# --subnet-lease-renew-margin, then kube.NewSubnetManager builds the client config from
# --kube-api-url/--kubeconfig-file (reading the kubeconfig and the files it names), needs NODE_NAME
# (or POD_NAME and POD_NAMESPACE), reads and parses --net-config-path (subnet.ParseConfig), checks
# --kube-annotation-prefix (newAnnotations) and then reads EVENT_QUEUE_DEPTH, before it starts the
# node informer (the first API call). EVENT_QUEUE_DEPTH set to a non-number stops it right there
# ("env EVENT_QUEUE_DEPTH=... format error"): everything before it passed.
FLANNELD_STOP = "WINSIM_STOP_BEFORE_API"
FLANNELD_REACHED = "env EVENT_QUEUE_DEPTH=%s format error" % FLANNELD_STOP
_GO_FLAG_LINE = re.compile(r"^  -(\S+)(?: (\S+))?$")
_GO_DEFAULT = re.compile(r' \(default (?:"(.*)"|(\S+))\)$')


def flanneld_flags(cache, version):
    """({name: "bool"|"int"|"str"|"slice"}, {name: default}) from the real flanneld.exe's usage
    (Go's flag.PrintDefaults: "  -name type" then the usage, "(default ...)" at its end; a bool has
    no type name, a flag.Value ("value") may be given several times: flannel's flagSlice and klog's
    -v/-vmodule/-log_backtrace_at, the last of which keep only the last value)."""
    res = run(cache, version, "flanneld", ["--help"], {})
    spec, defaults, name = {}, {}, None
    for line in res["output"].replace("\r\n", "\n").split("\n"):
        m = _GO_FLAG_LINE.match(line)
        if m:
            name, kind = m.group(1), m.group(2)
            spec[name] = {None: "bool", "int": "int", "value": "slice"}.get(kind, "str")
            continue
        d = _GO_DEFAULT.search(line)
        if name and d:
            defaults[name] = d.group(1) if d.group(1) is not None else d.group(2)
    if res["rc"] != 0 or "kube-subnet-mgr" not in spec:
        raise WineUnavailable("flanneld.exe %s --help under Wine printed no flag list: %s"
                              % (version, _tail(res["output"])))
    return spec, defaults


def flanneld_validate(cache, version, argv, files, env, cwd):
    """None when the real flanneld.exe took argv, env and the files up to its first API call, else
    (its error, its exit code)."""
    env = dict(env, EVENT_QUEUE_DEPTH=FLANNELD_STOP)
    res = run(cache, version, "flanneld", argv, files, env=env, cwd=cwd)
    out = res["output"]
    if res["rc"] is not None and FLANNELD_REACHED in out:
        return None
    if res["rc"] is None:
        return "flanneld %s under Wine did not exit within %ss; its last output:\n%s" % (version, TIMEOUT,
                                                                                         _tail(out)), None
    lines = [ln for ln in out.replace("\r\n", "\n").split("\n") if ln.strip()]
    usage = next((i for i, ln in enumerate(lines) if ln.startswith("Usage: ")), None)
    if usage:  # the flag package's own error, printed just before the usage
        return lines[usage - 1], res["rc"]
    errors = [ln.split("] ", 1)[1] for ln in lines if ln.startswith("E") and "] " in ln]
    return windows_text(errors[-1] if errors else _tail(out)), res["rc"]


# --- kubeadm.exe with a CRI pipe (lab/README.md, "Wine": how far the real kubeadm gets) ---
CRI_PIPE = "\\\\.\\pipe\\containerd-containerd"


def _start_cripipe(cripipe, prefix, drive_c, env):
    """The stand-in CRI server, serving on containerd's pipe; a start that does not get that far (seen once on a
    loaded CI machine: kubeadm then failed without a runtime) is tried once more, then raised with its output,
    so that a lab failure is not taken for the collection's."""
    for attempt in (1, 2):
        log = open(os.path.join(prefix, "cripipe-%d.log" % attempt), "w+")
        server = subprocess.Popen(["wine", cripipe, "-pipe", CRI_PIPE], cwd=drive_c, env=env,
                                  stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                  start_new_session=True)
        for _ in range(240):
            log.seek(0)
            text = log.read()
            if "serving CRI v1" in text:
                return server
            if server.poll() is not None:
                break
            time.sleep(0.5)
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()
    raise WineUnavailable("the stand-in CRI server (cripipe.exe) did not start under Wine twice; its output: %s"
                          % text[-1500:])


def kubeadm_with_cri(cache, version, argv, cri=True, timeout=300, trees=None, kubelet_version=None):
    """Run the real kubeadm.exe of version under Wine with kubelet.exe on PATH (C:\\k, for its
    KubeletVersion check) and, when cri, the stand-in CRI server (_cache/bin/cripipe.exe,
    lab/controlplane/cmd/cripipe) listening on containerd's pipe in the same Wine session.
    trees: {C: path: local directory} copied onto C: first (a simulated host's directories).
    kubelet_version: the kubelet.exe put on PATH (default: version's).
    Returns {"rc", "output", "gone": [C: paths of those trees' files and directories no longer there],
    "changed": {C: path: bytes of each file under those trees that is new or different}}.
    Not memoised: it talks to the lab's API server."""
    exe, kubelet = binary(cache, version, "kubeadm"), binary(cache, kubelet_version or version, "kubelet")
    cripipe = os.path.join(cache, "bin", "cripipe.exe")
    if not exe or not kubelet or (cri and not os.path.isfile(cripipe)):
        raise WineUnavailable("no Windows kubeadm/kubelet %s or cripipe.exe under %s (run lab/bin/lab-build)"
                              % (version, cache))
    prefix, drive_c = _make_prefix(cache)
    env = {k: os.environ[k] for k in WINE_HOST_ENV if k in os.environ}
    env.update(WINEPREFIX=prefix, WINEPATH="C:\\k", **WINE_ENV)
    server = None
    try:
        for win_path, local in (trees or {}).items():
            if os.path.isdir(local):
                shutil.copytree(local, _drive_path(drive_c, win_path))
        k = os.path.join(drive_c, "k")
        os.makedirs(k, exist_ok=True)
        os.symlink(kubelet, os.path.join(k, "kubelet.exe"))
        if cri:
            server = _start_cripipe(cripipe, prefix, drive_c, env)
        proc = subprocess.run(["wine", exe] + list(argv), cwd=drive_c, env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout, check=False)
        gone, changed = [], {}
        for win_path, local in (trees or {}).items():
            for dirpath, dirs, files in os.walk(local):
                rel = os.path.relpath(dirpath, local)
                base = win_path if rel == "." else win_path + "\\" + rel.replace("/", "\\")
                gone += [base + "\\" + n for n in dirs + files
                         if not os.path.lexists(_drive_path(drive_c, base + "\\" + n))]
            copy = _drive_path(drive_c, win_path)
            for dirpath, _dirs, files in os.walk(copy):
                rel = os.path.relpath(dirpath, copy)
                base = win_path if rel == "." else win_path + "\\" + rel.replace("/", "\\")
                for n in files:
                    with open(os.path.join(dirpath, n), "rb") as f:
                        data = f.read()
                    before = os.path.join(local, rel, n)
                    if not os.path.isfile(before) or open(before, "rb").read() != data:
                        changed[base + "\\" + n] = data
        return {"rc": proc.returncode, "output": proc.stdout.decode("utf-8", "replace"), "gone": gone,
                "changed": changed}
    finally:
        if server is not None:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        subprocess.run(["wineserver", "-k"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=False)
        shutil.rmtree(prefix, ignore_errors=True)
