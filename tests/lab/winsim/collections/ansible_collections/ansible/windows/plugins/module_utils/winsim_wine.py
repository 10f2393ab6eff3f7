# -*- coding: utf-8 -*-
# Test-lab only: the real Windows kubelet.exe / kube-proxy.exe, run under Wine to validate a command line.
"""Real Windows binaries under Wine (tests/lab/README.md, "Wine").

``tests/lab/bin/lab-build`` builds ``kubelet.exe``, ``kube-proxy.exe`` and ``kubeadm.exe`` with
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

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import ntpath
import os
import re
import shutil
import signal
import subprocess
import tempfile

from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError

STOP_CLASS = "WINSIM_STOP_AT_INIT_FOR_OS"
KUBELET_REACHED_RUN_FAST = "failed OS init: unknown priority class %s," % STOP_CLASS
KUBELET_REACHED_RUN = "failed OS init: Service controller connect failed."
WINE_ENV = {"WINEDEBUG": "-all", "WINEDLLOVERRIDES": "bcryptprimitives=n;mscoree,mshtml="}
TIMEOUT = 120


class WineUnavailable(Exception):
    pass


def binary(cache, version, program):
    """The Windows build of program (kubelet, kube-proxy, kubeadm) for version, or None."""
    if not cache:
        return None
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


def run(cache, version, program, argv, files, timeout=TIMEOUT):
    """Run <program>.exe of version with argv under Wine, C: holding `files` ({win path: bytes}).
    Returns {"rc": exit code or None (timed out), "output": stdout+stderr, "written": {win path: bytes}}
    where written are the C: files listed in `files` with value None, read back after the run."""
    exe = binary(cache, version, program)
    if not exe:
        raise WineUnavailable("no Windows %s %s under %s (run tests/lab/bin/lab-build)" % (program, version, cache))
    key = hashlib.sha256(json.dumps([os.path.getmtime(exe), os.path.getsize(exe), program, version, argv,
                                     sorted((k, hashlib.sha256(v).hexdigest() if v is not None else None)
                                            for k, v in files.items())]).encode()).hexdigest()
    memo = os.path.join(cache, "wine", "results", key + ".json")
    if os.path.exists(memo):
        with open(memo) as f:
            return json.load(f)
    prefix, drive_c = _make_prefix(cache)
    env = dict(os.environ, WINEPREFIX=prefix, **WINE_ENV)
    env.pop("DISPLAY", None)
    try:
        for win_path, data in files.items():
            local = _drive_path(drive_c, win_path)
            os.makedirs(os.path.dirname(local), exist_ok=True)
            if data is None:
                continue
            with open(local, "wb") as f:
                f.write(data)
        proc = subprocess.Popen(["wine", exe] + list(argv), cwd=drive_c, env=env, stdin=subprocess.DEVNULL,
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
