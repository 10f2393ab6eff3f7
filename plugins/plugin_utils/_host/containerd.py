# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""containerd as the collection installs it on a Windows host: where it goes, its configuration made from the
installed binary's own defaults, its service, and crictl's configuration (scripts containerd_state, containerd_apply).

Sources (containerd v2.1.4 unless said):
- ``containerd.exe config default`` prints the built-in defaults of every plugin (cmd/containerd/command/config.go);
  the CRI settings are, in config version 3 (2.x), ``plugins.'io.containerd.cri.v1.images'.pinned_images.sandbox``
  and ``.registry.config_path``, ``plugins.'io.containerd.cri.v1.runtime'.cni.bin_dirs`` (2.1 on; ``bin_dir``
  before, deprecated after) and ``.conf_dir`` (internal/cri/config/config.go); in version 2 (1.7)
  ``plugins."io.containerd.grpc.v1.cri".sandbox_image``, ``.registry.config_path``, ``.cni.bin_dir``/``conf_dir``.
- The default config file is ``%ProgramFiles%\\containerd\\config.toml`` (defaults/defaults_windows.go
  DefaultConfigDir), read by a service registered without ``--config``.
- ``containerd.exe --register-service`` (cmd/containerd/command/service_windows.go registerService) creates the
  service ``containerd`` (``--service-name``) for the program's absolute path with ``--run-service`` and every
  other argument given, StartAutomatic, display name "Containerd", restart twice after 15 s; it does not start it.
- Registry hosts: ``<config_path>\\<host>\\hosts.toml``, a ``:port`` written ``_port_`` (core/remotes/docker/
  config/hosts.go hostDirectory; config_windows.go hostPaths), ``_default`` for every registry (docs/hosts.md).
- Which containerd a Kubernetes version supports: containerd_support.py.
- ``crictl version`` prints ``Version:``, ``RuntimeName:``, ``RuntimeVersion:`` (containerd's release tag ``v2.1.4``:
  internal/cri/server/version.go) and ``RuntimeApiVersion:`` lines (cri-tools cmd/crictl/version.go).
- ``--log-file``: without it, ``--run-service`` sends logrus, log and os.Stderr to NUL (registerUnregisterService);
  with it, ``os.OpenFile(path, O_APPEND|O_CREATE|O_WRONLY)`` (no directory made), shared for read and write but not
  delete (syscall_windows.go Open), never rotated, no event log source (1.5 to 2.x). So the scheduled task
  kubewin-containerd-log copies and truncates it (scripts/containerd_log_rotate.ps1; an O_APPEND write goes to the
  end of the file as it is then: Microsoft Learn, CreateFileW, FILE_APPEND_DATA).
- crictl reads ``--config``, else ``CRI_CONFIG_FILE``, else ``%USERPROFILE%\\.crictl\\crictl.yaml`` on Windows
  (kubernetes-sigs/cri-tools cmd/crictl/main.go, main_windows.go): the role sets CRI_CONFIG_FILE machine-wide.

PRIVATE to the collection: no compatibility promise outside it.
"""

from __future__ import annotations

import base64
import json
import re

from ansible_collections.kubewin.nodes.plugins.module_utils import _windows_paths as wp

try:
    import tomllib
except ImportError:  # pragma: no cover - Python < 3.11 on the controller
    tomllib = None

PROGRAM_DIR = "C:\\Program Files\\containerd"
EXE = PROGRAM_DIR + "\\bin\\containerd.exe"
CONFIG = PROGRAM_DIR + "\\config.toml"
HOSTS_DIR = PROGRAM_DIR + "\\certs.d"
CNI_BIN_DIR = PROGRAM_DIR + "\\cni\\bin"
CNI_CONF_DIR = PROGRAM_DIR + "\\cni\\conf"
CRICTL_DIR = PROGRAM_DIR + "\\crictl"
CRICTL_CONFIG = CRICTL_DIR + "\\crictl.yaml"
CRICTL = CRICTL_DIR + "\\crictl.exe"
SERVICE = "containerd"
# Where the kubelet's node log query finds ``query=containerd`` (_windows_paths LOG_ROOT: <s>\\<s>.log).
LOG_DIR = wp.CONTAINERD_LOG_DIR
LOG_FILE = wp.CONTAINERD_LOG_FILE
ROTATE_SCRIPT = PROGRAM_DIR + "\\kubewin-log-rotate.ps1"
ROTATE_SETTINGS = PROGRAM_DIR + "\\kubewin-log-rotate.json"
ROTATE_TASK = "kubewin-containerd-log"
LOG_MAX_FILES = 5
PIPE = "npipe:////./pipe/containerd-containerd"
# How long containerd_apply waits for the runtime to answer `crictl version` after it started containerd.
VERIFY_SECONDS = 60
# containerd's shim process (one per pod; the shims of other containerd namespaces too) and how long the upgrade's stop
# waits for the last to exit before the unpack (review-s9 W8: containerd does not wait for a shim to exit after its
# Shutdown RPC, core/runtime/v2/shim.go shimTask.delete)
SHIM = "containerd-shim-runhcs-v1"
SHIM_WAIT_SECONDS = 30

V2_CRI = "io.containerd.grpc.v1.cri"
V3_IMAGES = "io.containerd.cri.v1.images"
V3_RUNTIME = "io.containerd.cri.v1.runtime"

# A reference as the distribution reference grammar allows it (github.com/distribution/reference regexp.go), tag
# and digest optional: [domain[:port]/]path[:tag][@sha256:<64 hex>]. Lower-case path components.
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_LABEL = r"[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?"
_DOMAIN = r"(?:%s(?:\.%s)*|\[[0-9a-fA-F:]+\])(?::[0-9]+)?" % (_LABEL, _LABEL)
IMAGE_REFERENCE = re.compile(r"^(?:%s/)?%s(?:/%s)*(?::[\w][\w.-]{0,127})?(?:@sha256:[0-9a-f]{64})?$"
                             % (_DOMAIN, _COMPONENT, _COMPONENT))
_MIRROR_HOST = re.compile(r"^https?://[^\s/]+(?:/[^\s]*)?$")
_PREFIX = re.compile(r"^(?:_default|%s)$" % _DOMAIN)
CAPABILITIES = ("pull", "resolve", "push")


class ContainerdError(Exception):
    pass


def crictl_runtime_version(lines):
    """The RuntimeVersion ``crictl version`` printed, without the v; None when it printed none."""
    for line in lines or []:
        name, value = (str(line).split(":", 1) + [""])[:2]
        if name.strip() == "RuntimeVersion" and value.strip():
            return value.strip().lstrip("v")
    return None


def stop_problem(answer):
    """Why containerd_apply (Stop) did not leave containerd stopped, or None."""
    if answer.get("rmp_code") not in (None, 0):
        return ("`crictl rmp --all --force` exited with code %s, so containerd was not stopped (a pod's shim would "
                "keep its program in use): %s" % (answer.get("rmp_code"), " ".join(answer.get("rmp_output") or [])
                                                  or "no output"))
    if (answer.get("status") or "").lower() != "stopped":
        return "the containerd service is %s after Stop-Service, not Stopped" % answer.get("status")
    if answer.get("shims"):
        return ("%s.exe still runs (PID %s) %d s after containerd stopped, so nothing in %s\\bin was replaced (Windows "
                "cannot overwrite a running program). A pod's shim exits on its own after its removal; one that stays "
                "is most often a container of another containerd namespace than Kubernetes' k8s.io (nerdctl, buildkit: "
                "`ctr namespaces ls`, `ctr -n <namespace> tasks ls`). Stop those containers (or end the PIDs), then "
                "run playbooks/upgrade.yml again"
                % (SHIM, ", ".join(str(p) for p in answer["shims"]), SHIM_WAIT_SECONDS, PROGRAM_DIR))
    return None


def register_problem(answer, plan):
    """Why containerd_apply did not register the service or change its ImagePath (plan's register, reregister), or
    did not start again the services a restart stopped, or None."""
    if plan["reregister"] and answer.get("change_code") != 0:
        return ("changing the containerd service's ImagePath to %s (Win32_Service.Change) returned %s; the service "
                "keeps its earlier command line (without --log-file) and was not restarted: see Microsoft Learn, "
                "\"Change method of the Win32_Service class\", for the code"
                % (service_command(), answer.get("change_code")))
    if answer.get("dependent_errors"):
        return ("the services containerd's restart stopped with it did not all start again: %s; start them "
                "(Start-Service) once containerd runs" % "; ".join(answer["dependent_errors"]))
    if plan["register"] and answer.get("register_code") != 0:
        return "containerd.exe --register-service exited with code %s: %s" % (
            answer.get("register_code"), " ".join(answer.get("register_output") or []) or "no output")
    return None


def verify_problem(answer, version=None):
    """Why the runtime did not answer as containerd ``version`` after containerd_apply started it, or None."""
    if answer.get("verify_code") is None:
        return None
    out = answer.get("verify_output") or []
    if answer.get("verify_code") != 0:
        return ("containerd did not answer on %s within %d s: `crictl version` exited with code %s: %s"
                % (PIPE, VERIFY_SECONDS, answer.get("verify_code"), " ".join(out[-3:]) or "no output"))
    running = crictl_runtime_version(out)
    if version and running != str(version).lstrip("v"):
        return ("containerd answers on %s as version %s, not %s: the service runs another program than %s"
                % (PIPE, running, str(version).lstrip("v"), EXE))
    return None


def image_reference_problem(ref):
    """Why ``ref`` is not an image reference containerd can pull, or None. The name must be lower case and the tag
    at most 128 characters (distribution/reference); a name over 255 characters is refused too."""
    if not isinstance(ref, str) or not ref:
        return "it is empty"
    if len(ref.split("@")[0].rsplit(":", 1)[0]) > 255:
        return "the name is longer than 255 characters"
    if not IMAGE_REFERENCE.match(ref):
        return ("it is not an image reference ([registry[:port]/]name[:tag][@sha256:<64 hex digits>], the name in "
                "lower case)")
    return None


def registry_problems(mirrors):
    """kubespray's containerd_registries_mirrors ([{prefix, mirrors: [{host, capabilities, skip_verify}]}]): the
    problems of its entries, each naming the entry."""
    problems = []
    if not isinstance(mirrors, list):
        return ["it must be a list of {prefix, mirrors} (kubespray's containerd_registries_mirrors)"]
    for i, entry in enumerate(mirrors):
        where = "entry %d" % (i + 1)
        if not isinstance(entry, dict) or not isinstance(entry.get("mirrors"), list) or not entry.get("mirrors"):
            problems.append("%s must be {prefix: <registry>, mirrors: [{host: https://...}]}" % where)
            continue
        prefix = str(entry.get("prefix") or "")
        if not _PREFIX.match(prefix):
            problems.append("%s: prefix %r is not a registry host (docker.io, registry.local:5000) or _default"
                            % (where, prefix))
        for m in entry["mirrors"]:
            host = m.get("host") if isinstance(m, dict) else None
            if not isinstance(host, str) or not _MIRROR_HOST.match(host):
                problems.append("%s: mirror host %r must be a URL (https://mirror.example[:port][/path])"
                                % (where, host))
                continue
            caps = _capabilities(m)
            if not all(isinstance(c, str) for c in caps) or set(caps) - set(CAPABILITIES):
                problems.append("%s: capabilities of %s must be a list of %s" % (where, host, ", ".join(CAPABILITIES)))
        server = entry.get("server")
        if server is not None and (not isinstance(server, str) or not _MIRROR_HOST.match(server)):
            problems.append("%s: server %r must be a URL (https://registry.example[:port])" % (where, server))
    return problems


def _capabilities(mirror):
    """A mirror's capabilities as kubespray's hosts.toml.j2 takes them: a list, or one string (``[caps] | flatten``)."""
    caps = mirror.get("capabilities", ["pull", "resolve"])
    return [caps] if isinstance(caps, str) else list(caps) if isinstance(caps, list) else [caps]


# --- TOML ----------------------------------------------------------------------------------------------------------
def _toml_key(key):
    return key if re.match(r"^[A-Za-z0-9_-]+$", key) else json.dumps(key)


def _toml_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string: JSON's escapes are TOML's (\\, \", \uXXXX)
    if isinstance(value, list):
        return "[%s]" % ", ".join(_toml_value(v) for v in value)
    if isinstance(value, dict):  # an inline table (only inside arrays: tables are written as sections)
        return "{%s}" % ", ".join("%s = %s" % (_toml_key(k), _toml_value(v)) for k, v in value.items())
    raise ContainerdError("cannot write %r as TOML" % (value,))


def dump_toml(data):
    """TOML for the dictionary tomllib made: scalars and arrays first, then each table as its own section, in the
    order the defaults had them (dictionaries keep it)."""
    out = []

    def table(prefix, d):
        scalars = [(k, v) for k, v in d.items() if not isinstance(v, dict)]
        tables = [(k, v) for k, v in d.items() if isinstance(v, dict)]
        if prefix and (scalars or not tables):
            out.append("")
            out.append("[%s]" % ".".join(_toml_key(p) for p in prefix))
        for k, v in scalars:
            out.append("%s = %s" % (_toml_key(k), _toml_value(v)))
        for k, v in tables:
            table(prefix + [k], v)

    table([], data)
    return "\n".join(out).lstrip("\n") + "\n"


def _section(config, path, defaults_of):
    node = config
    for p in path:
        if not isinstance(node.get(p), dict):
            raise ContainerdError("the defaults of %s have no [%s] (containerd config default printed no such "
                                  "section); this containerd version is not one the collection can configure"
                                  % (defaults_of, ".".join(path)))
        node = node[p]
    return node


def render_config(default_text, sandbox_image, cni_bin_dir, cni_conf_dir, hosts_dir, defaults_of="containerd"):
    """config.toml: ``containerd.exe config default`` with the sandbox image, the CNI directories and the registry
    hosts directory set; nothing else is changed."""
    if tomllib is None:  # pragma: no cover
        raise ContainerdError("reading containerd's defaults needs Python >= 3.11 (tomllib) on the controller")
    try:
        config = tomllib.loads(default_text or "")
    except ValueError as e:
        raise ContainerdError("containerd config default printed what is not TOML (%s)" % e) from None
    version = config.get("version")
    if version == 3:
        images = _section(config, ["plugins", V3_IMAGES], defaults_of)
        images.setdefault("pinned_images", {})["sandbox"] = sandbox_image
        _section(config, ["plugins", V3_IMAGES, "registry"], defaults_of)["config_path"] = hosts_dir
        cni = _section(config, ["plugins", V3_RUNTIME, "cni"], defaults_of)
        if "bin_dirs" in cni:
            cni["bin_dirs"] = [cni_bin_dir]
            if "bin_dir" in cni:
                cni["bin_dir"] = ""
        else:
            cni["bin_dir"] = cni_bin_dir
        cni["conf_dir"] = cni_conf_dir
    elif version == 2:
        cri = _section(config, ["plugins", V2_CRI], defaults_of)
        cri["sandbox_image"] = sandbox_image
        _section(config, ["plugins", V2_CRI, "registry"], defaults_of)["config_path"] = hosts_dir
        cni = _section(config, ["plugins", V2_CRI, "cni"], defaults_of)
        cni["bin_dir"] = cni_bin_dir
        cni["conf_dir"] = cni_conf_dir
    else:
        raise ContainerdError("the defaults of %s are config version %r; the collection configures versions 2 "
                              "(containerd 1.7) and 3 (2.x)" % (defaults_of, version))
    return dump_toml(config)


def host_directory(prefix):
    """The directory name containerd looks a registry's hosts.toml up under (hostDirectory, then ':' dropped)."""
    idx = prefix.rfind(":")
    if idx > 0 and not prefix.endswith("]"):
        prefix = prefix[:idx] + "_" + prefix[idx + 1:] + "_"
    return prefix.replace(":", "")


def hosts_files(mirrors, hosts_dir=HOSTS_DIR):
    """{path: hosts.toml text} for kubespray's containerd_registries_mirrors (docs/hosts.md: ``server`` when the entry
    names one, ``[host."<url>"]`` with capabilities, skip_verify and, when set, override_path for a mirror whose URL
    carries the API path (a Harbor or Artifactory proxy project), in the order given; kubespray's hosts.toml.j2 reads
    the same fields)."""
    files = {}
    for entry in mirrors or []:
        lines = ["server = %s" % _toml_value(entry["server"]), ""] if entry.get("server") else []
        for m in entry["mirrors"]:
            lines.append("[host.%s]" % json.dumps(m["host"]))
            lines.append("  capabilities = %s" % _toml_value(_capabilities(m) or ["pull", "resolve"]))
            lines.append("  skip_verify = %s" % _toml_value(bool(m.get("skip_verify", False))))
            if m.get("override_path"):
                lines.append("  override_path = true")
            lines.append("")
        files["%s\\%s\\hosts.toml" % (hosts_dir, host_directory(str(entry["prefix"])))] = "\n".join(lines)
    return files


def crictl_yaml(endpoint=PIPE):
    """crictl.yaml pointing crictl at containerd's pipe (cri-tools docs/crictl.md's keys)."""
    return ("runtime-endpoint: %s\nimage-endpoint: %s\ntimeout: 10\n" % (endpoint, endpoint))


def register_args():
    """What ``containerd.exe`` is run with to register its service: its log to LOG_FILE."""
    return ["--register-service", "--log-file", LOG_FILE]


def service_command(exe=EXE, log_file=True):
    """The ImagePath --register-service writes: the quoted absolute program path, --run-service and the other
    arguments (golang.org/x/sys/windows/svc/mgr CreateService: EscapeArg of the path and of each argument).
    ``log_file`` False: what earlier releases of the collection registered (no --log-file: the log discarded)."""
    return '"%s" --run-service' % exe + (" --log-file %s" % LOG_FILE if log_file else "")


def rotate_settings(max_size_mb, max_files):
    """The rotation task's settings (the script reads them; no value is in its text or its command line)."""
    for name, value in (("kubewin_log_file_max_size_mb", max_size_mb),
                        ("kubewin_containerd_log_max_files", max_files)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ContainerdError("%s is %r: a whole number of at least 1 is needed" % (name, value))
    return json.dumps({"log_file": LOG_FILE, "max_size_mb": max_size_mb, "max_files": max_files},
                      sort_keys=True) + "\n"


def _b64(text):
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def plan(state, sandbox_image, mirrors, rotate_script="", log_max_size_mb=100, log_max_files=LOG_MAX_FILES,
         cni_bin_dir=CNI_BIN_DIR, cni_conf_dir=CNI_CONF_DIR):
    """What containerd_apply must do, from containerd_state's answer: {files: [{path, content}], remove: [paths],
    register, reregister (the service an earlier release registered without --log-file: its ImagePath changed in
    place, then restarted), restart, start, changed: [what changed, for the diff]}. ``rotate_script``: the text of
    scripts/containerd_log_rotate.ps1, written beside its settings."""
    if not state.get("exe_exists"):
        raise ContainerdError("%s does not exist: the containerd release archive was not unpacked there" % EXE)
    if state.get("default_code") != 0:
        raise ContainerdError("`containerd.exe config default` exited with code %s: %s" % (
            state.get("default_code"), " ".join(state.get("default_output") or []) or "no output"))
    want = {CONFIG: render_config("\n".join(state.get("default_output") or []), sandbox_image, cni_bin_dir,
                                  cni_conf_dir, HOSTS_DIR, EXE)}
    want.update(hosts_files(mirrors))
    want[CRICTL_CONFIG] = crictl_yaml()
    want[ROTATE_SCRIPT] = rotate_script
    want[ROTATE_SETTINGS] = rotate_settings(log_max_size_mb, log_max_files)
    have = state.get("files") or {}
    files = [{"path": p, "content": _b64(t)} for p, t in want.items() if have.get(p) != t]
    remove = sorted(p for p in (state.get("hosts_files") or []) if p not in want)
    service = state.get("service") or {}
    image_path = (service.get("image_path") or "").lower()
    reregister = bool(service.get("exists")) and image_path == service_command(log_file=False).lower()
    register = not service.get("exists")
    if service.get("exists") and not reregister and image_path != service_command().lower():
        raise ContainerdError(
            "the containerd service runs %s, not %s: it is another installation of containerd; remove it "
            "(containerd.exe --unregister-service, or sc.exe delete containerd) or set kubewin_containerd_install: "
            "never to keep it" % (service.get("image_path"), service_command()))
    config_changed = any(f["path"] == CONFIG or f["path"].startswith(HOSTS_DIR + "\\") for f in files) or remove
    running = (service.get("status") or "").lower() == "running"
    return {"files": files, "remove": remove, "register": register, "reregister": reregister,
            "restart": bool(config_changed or reregister) and running, "start": not running,
            "changed": [f["path"] for f in files] + remove
            + (["service %s (now with --log-file %s)" % (SERVICE, LOG_FILE)] if reregister else
               ["service %s" % SERVICE] if register else [])
            + (["service %s started" % SERVICE] if not running else [])}
