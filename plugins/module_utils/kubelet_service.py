# -*- coding: utf-8 -*-
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Decisions about the native ``kubelet`` Windows service: its command line and definition.

The kubelet runs as a real service (``--windows-service``), not behind NSSM or a wrapper script.
Because a service has a static command line, the flags kubeadm writes at join time into
``kubeadm-flags.env`` are read from the node and folded into that command line here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import re
import struct

SERVICE_ARGSPEC = dict(
    name=dict(type="str", default="kubelet"),
    state=dict(type="str", default="present", choices=["present", "started", "stopped", "absent"]),
    kubelet_version=dict(type="str"),
    kubelet_path=dict(type="str", default="C:\\k\\kubelet.exe"),
    config_file=dict(type="str", default="C:\\var\\lib\\kubelet\\config.yaml"),
    kubeconfig=dict(type="str", default="C:\\etc\\kubernetes\\kubelet.conf"),
    bootstrap_kubeconfig=dict(type="str", default="C:\\etc\\kubernetes\\bootstrap-kubelet.conf"),
    cert_dir=dict(type="str", default="C:\\var\\lib\\kubelet\\pki"),
    kubeadm_flags_file=dict(type="str", default="C:\\var\\lib\\kubelet\\kubeadm-flags.env"),
    container_runtime=dict(type="str", default="containerd", choices=["containerd", "docker"]),
    dependencies=dict(type="list", elements="str"),
    pod_infra_container_image=dict(type="str"),
    extra_args=dict(type="dict", default={}),
    restart_delay_seconds=dict(type="int", default=10),
)
SERVICE_REQUIRED_IF = [("state", "present", ["kubelet_version"]), ("state", "started", ["kubelet_version"]),
                       ("state", "stopped", ["kubelet_version"])]

DISPLAY_NAME = "Kubernetes kubelet"
DESCRIPTION = "Kubernetes node agent (managed by kubewin.nodes)"
FAILURE_RESET_SECONDS = 86400
START_AUTOMATIC = 2

# Flags a kubelet release removed: passing one stops that kubelet from starting.
# Older kubeadm wrote some of them into kubeadm-flags.env, so a node joined long ago carries them.
REMOVED_FLAGS = {
    "network-plugin": (1, 24),
    "cni-bin-dir": (1, 24),
    "cni-conf-dir": (1, 24),
    "cni-cache-dir": (1, 24),
    "network-plugin-mtu": (1, 24),
    "docker-endpoint": (1, 24),
    "image-pull-progress-deadline": (1, 24),
    "experimental-dockershim-root-directory": (1, 24),
    "non-masquerade-cidr": (1, 24),
    "container-runtime": (1, 27),
    "pod-infra-container-image": (1, 34),
}
# Installers pass the pause image to the kubelet only below this version (kubeadm stopped too).
PAUSE_FLAG_BELOW = (1, 27)

DEFAULT_DEPENDENCIES = {"containerd": ["containerd"], "docker": ["docker"]}

_FLAG_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")


class KubeletServiceError(Exception):
    """Input that cannot produce a working kubelet service; the message names the fix."""


def parse_version(text):
    """'v1.33.2' / '1.33.2' / '1.33' -> (1, 33, 2)."""
    m = re.match(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+].*)?$", str(text or "").strip())
    if not m:
        raise KubeletServiceError("kubelet_version %r is not a Kubernetes version like v1.33.2" % (text,))
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


_GO_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
               "\\": "\\", '"': '"', "'": "'"}


def _unquote_double(body):
    """Undo Go's %q quoting, which is how kubeadm writes kubeadm-flags.env."""
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        nxt = body[i + 1:i + 2]
        if nxt in _GO_ESCAPES:
            out.append(_GO_ESCAPES[nxt])
            i += 2
        elif nxt == "x":
            out.append(chr(int(body[i + 2:i + 4], 16)))
            i += 4
        elif nxt == "u":
            out.append(chr(int(body[i + 2:i + 6], 16)))
            i += 6
        elif nxt == "U":
            out.append(chr(int(body[i + 2:i + 10], 16)))
            i += 10
        else:  # not an escape Go writes: keep the backslash (a Windows path written by hand)
            out.append(c)
            i += 1
    return "".join(out)


def parse_env_file(text):
    """Parse a kubeadm-flags.env style file into {NAME: value}.

    Values may be Go-quoted ("...", kubeadm's own form), single-quoted, or bare.
    """
    values = {}
    for lineno, raw in enumerate((text or "").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if "=" not in line:
            raise KubeletServiceError("kubeadm-flags.env line %d is not NAME=value: %r" % (lineno, raw))
        name, value = line.split("=", 1)
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = _unquote_double(value[1:-1])
        elif len(value) >= 2 and value[0] == value[-1] == "'":
            value = value[1:-1]
        values[name.strip()] = value
    return values


def flags_from_args(text, source):
    """'--a=b --c' -> [('a', 'b'), ('c', None)].

    kubeadm joins '--name=value' with spaces; the value becomes part of a Windows command line, so
    it is split the way Windows splits one (double quotes group, backslashes stay).
    """
    flags = []
    for arg in split_windows_command_line(text):
        if not arg.startswith("--"):
            raise KubeletServiceError("%s: %r is not a --flag" % (source, arg))
        name, sep, value = arg[2:].partition("=")
        flags.append((name, value if sep else None))
    return flags


def _flag_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def compute_flags(version, flags_env_text=None, extra_args=None, config_file=None, kubeconfig=None,
                  bootstrap_kubeconfig=None, cert_dir=None, pod_infra_container_image=None):
    """The kubelet flags for this node, in order, and warnings for the user.

    Precedence as on Linux: base flags < kubeadm-flags.env < the user's extra_args (last wins).
    Flags the version removed are dropped from kubeadm-flags.env with a warning and refused in
    extra_args.
    """
    ver = parse_version(version)
    warnings = []
    flags = {}

    def put(name, value):
        flags.pop(name, None)  # re-insert so the flag shows where it took effect
        flags[name] = value

    put("windows-service", None)
    for name, value in (("config", config_file), ("bootstrap-kubeconfig", bootstrap_kubeconfig),
                        ("kubeconfig", kubeconfig), ("cert-dir", cert_dir)):
        if value:
            put(name, value)
    # Windows has no cgroups, and its resolver is not a resolv.conf (sig-windows-tools PrepareNode.ps1).
    put("cgroups-per-qos", "false")
    put("enforce-node-allocatable", "")
    put("resolv-conf", "")
    if pod_infra_container_image:
        if ver[:2] < PAUSE_FLAG_BELOW:
            put("pod-infra-container-image", pod_infra_container_image)
        else:
            warnings.append("pod_infra_container_image is ignored for kubelet %d.%d: from 1.27 the kubelet takes "
                            "the pause image from the container runtime's configuration" % ver[:2])

    if flags_env_text:
        env = parse_env_file(flags_env_text)
        for name, value in flags_from_args(env.get("KUBELET_KUBEADM_ARGS", ""), "kubeadm-flags.env"):
            removed = REMOVED_FLAGS.get(name)
            if removed and ver[:2] >= removed:
                warnings.append("dropped --%s from kubeadm-flags.env: kubelet %d.%d removed it in %d.%d"
                                % ((name,) + ver[:2] + removed))
                continue
            put(name, value)

    for name, value in (extra_args or {}).items():
        name = str(name)
        bare = name[2:] if name.startswith("--") else name
        if not _FLAG_NAME.match(bare):
            raise KubeletServiceError("extra_args key %r is not a kubelet flag name (use e.g. node-labels)" % name)
        removed = REMOVED_FLAGS.get(bare)
        if removed and ver[:2] >= removed:
            raise KubeletServiceError(
                "extra_args sets --%s, which kubelet %d.%d no longer accepts (removed in %d.%d); "
                "remove it from extra_args" % ((bare,) + ver[:2] + removed))
        put(bare, _flag_value(value))
    return flags, warnings


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


def render_command_line(executable, flags):
    argv = [executable] + ["--%s" % k if v is None else "--%s=%s" % (k, v) for k, v in flags.items()]
    return " ".join(quote_windows_arg(a) for a in argv)


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


def desired_definition(command_line, dependencies, restart_delay_seconds):
    return {
        "command_line": command_line,
        "start_mode": "auto",
        "dependencies": list(dependencies),
        "display_name": DISPLAY_NAME,
        "description": DESCRIPTION,
        "recovery": {"reset_seconds": FAILURE_RESET_SECONDS,
                     "actions": failure_actions_sc(restart_delay_seconds),
                     "on_non_crash_failures": True},
    }


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
    for field in ("display_name", "description", "recovery"):
        if desired[field] != live[field]:
            diffs.append(field)
    return diffs


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
