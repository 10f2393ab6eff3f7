"""What a simulated Windows node's kubelet answers at /logs/: the node log query (KEP-2258),
``kubectl get --raw "/api/v1/nodes/<node>/proxy/logs/?query=kubelet"``.

The lab's nodes are kwok Node objects, so the API server's node proxy reaches no kubelet. This module answers the
same request from the simulated host's files and the kubelet's configuration there, as the kubelet's source does
(kubernetes v1.37.2; the same code in v1.34.4-v1.36.3):

- pkg/kubelet/server/server.go line 368: /logs/ is installed only with ``enableSystemLogHandler`` (v1beta1
  defaults.go lines 279-281: true by default).
- pkg/kubelet/kubelet.go lines 1884-1916: query mode only with the NodeLogQuery gate on and
  ``enableSystemLogQuery``; otherwise /logs/ is a file server on nodeLogDir and the query string is ignored.
  In query mode: the query's parse errors -> 400; a path after /logs/ -> 406; validate() errors -> 406;
  services -> the journal; one file -> the file server on that file.
- pkg/kubelet/apis/config/validation/validation.go lines 398-403: enableSystemLogQuery without the gate, or
  without the handler, stops the kubelet (so no answer at all).
- pkg/kubelet/kubelet_server_journal.go: newNodeLogQuery (lines 125-206), validate (224-270), copyForBoot and
  heuristicsCopyFileLogs (287-437): nodeLogDir "/var/log/" (C:\\var\\log on the kubelet's drive), for a service
  <s>, <s>.log, then <s>/<s>.log, the first that is a file, else "log not found for <s>".
- pkg/kubelet/kubelet_server_journal_windows.go checkForNativeLogger: ``Get-WinEvent -ListProvider <s>``; a service
  with an event log provider is read with Get-WinEvent from the Application log instead. No service the lab runs
  registers one (the kubelet, kube-proxy and NSSM do not; neither does containerd 1.5 to 2.x, which writes only to
  its --log-file: cmd/containerd/command/service_windows.go, review-s8 W3), so every service is read from its file
  here. (dockerd registers its source, docker; the lab's Docker hosts have no node log query test.)
- featureGates: the configuration's map, then --feature-gates over it; NodeLogQuery off by default up to 1.35, on
  (GA) from 1.36 (pkg/features/kube_features.go v1.37.2 lines 1908-1912).
"""

import ntpath
import os
import re

import yaml

from winsim import core

NODE_LOG_DIR = "C:\\var\\log"
MAX_SERVICES = 4
MAX_SERVICE_LENGTH = 256
MAX_TAIL_LINES = 100000
UNSAFE_SERVICE_CHARS = re.compile(r"[^a-zA-Z\-_.:0-9@]+")
NODE_LOG_QUERY_ON_FROM = (1, 36)
KUBELET_CONFIG_API = "kubelet.config.k8s.io/v1beta1"
NOT_FOUND = (404, "404 page not found\n")


class KubeletNotRunning(core.SimError):
    """The kubelet's configuration would stop it at start-up: nothing answers."""


def _flag(argv, name):
    """The last value of --name in a pflag command line (--name=value or --name value)."""
    value = None
    for i, arg in enumerate(argv):
        if arg.startswith("--%s=" % name):
            value = arg.split("=", 1)[1]
        elif arg == "--" + name and i + 1 < len(argv):
            value = argv[i + 1]
    return value


def _merge_patch(base, patch):
    """RFC 7386 JSON merge patch (jsonpatch.MergePatch, how mergeKubeletConfigurations applies a drop-in)."""
    if not isinstance(patch, dict):
        return patch
    out = dict(base) if isinstance(base, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = _merge_patch(out.get(key), value)
    return out


def _read_yaml(host, win_path, what):
    try:
        with open(host.local_path(win_path)) as f:
            return yaml.safe_load(f) or {}
    except (IOError, OSError):
        raise KubeletNotRunning("the kubelet would not start: failed to load %s %s" % (what, win_path)) from None


def kubelet_configuration(host):
    """(version tuple, effective KubeletConfiguration dict, --feature-gates value) of the kubelet service."""
    svc = (host.state.get("services") or {}).get("kubelet")
    if not svc:
        raise KubeletNotRunning("no kubelet service on %s" % host.name)
    argv = core.winsim_cmdline.split_command_line(svc.get("image_path") or "")
    exe = next((i for i, a in enumerate(argv) if ntpath.basename(a).lower() == "kubelet.exe"), None)
    if exe is None:
        raise KubeletNotRunning("the kubelet service of %s does not run kubelet.exe" % host.name)
    marker = core.winsim_binaries.read_marker(host.local_path(argv[exe]))
    if marker is None:
        raise KubeletNotRunning("%s is not a stand-in kubelet" % argv[exe])
    version = tuple(int(x) for x in re.findall(r"\d+", marker[1])[:2])
    flags = argv[exe + 1:]
    config = {}
    if _flag(flags, "config"):
        config = _read_yaml(host, _flag(flags, "config"), "the kubelet config file")
    dropins = _flag(flags, "config-dir")
    if dropins:
        local = host.local_path(dropins)
        if not os.path.isdir(local):
            raise KubeletNotRunning("the kubelet would not start: failed to walk through kubelet dropin directory %s"
                                    % dropins)
        for d, dirs, names in os.walk(local):
            dirs.sort()
            for name in sorted(names):
                if os.path.splitext(name)[1] != ".conf":
                    continue  # skipped, as mergeKubeletConfigurations does
                doc = _read_yaml(host, host.win_path(os.path.join(d, name)), "the kubelet dropin file")
                if (doc.get("apiVersion"), doc.get("kind")) != (KUBELET_CONFIG_API, "KubeletConfiguration"):
                    raise KubeletNotRunning("the kubelet would not start: kubelet dropin file %s has no "
                                            "KubeletConfiguration apiVersion/kind" % name)
                config = _merge_patch(config, doc)
    return version, config, _flag(flags, "feature-gates")


def query_mode(host):
    """(handler installed, query mode on) for the node's kubelet, raising KubeletNotRunning when its configuration
    would stop it."""
    version, config, gate_flag = kubelet_configuration(host)
    gates = dict(config.get("featureGates") or {})
    for item in (gate_flag or "").split(","):
        name, sep, value = item.partition("=")
        if sep:
            gates[name.strip()] = value.strip().lower() == "true"
    gate = gates.get("NodeLogQuery", version >= NODE_LOG_QUERY_ON_FROM)
    handler = config.get("enableSystemLogHandler", True) is not False
    query = config.get("enableSystemLogQuery", False) is True
    if query and not gate:
        raise KubeletNotRunning("the kubelet would not start: enableSystemLogQuery requires the NodeLogQuery "
                                "feature gate")
    if query and not handler:
        raise KubeletNotRunning("the kubelet would not start: enableSystemLogQuery requires enableSystemLogHandler")
    return handler, query


def _safe_open(host, relative):
    """os.OpenInRoot(nodeLogDir, name): the local path of a file or directory below C:\\var\\log, None when it is
    not there or the name leaves the root."""
    parts = [p for p in re.split(r"[\\/]+", relative) if p not in ("", ".")]
    if any(p == ".." for p in parts):
        return None
    local = host.local_path(NODE_LOG_DIR + "".join("\\" + p for p in parts))
    return local if os.path.exists(local) else None


def _file_server(host, path):
    """http.FileServer(http.Dir(nodeLogDir)) for ``path``: a file's bytes, a directory's listing, else 404."""
    local = _safe_open(host, path)
    if local is None:
        return NOT_FOUND
    if os.path.isdir(local):
        names = sorted(n + ("/" if os.path.isdir(os.path.join(local, n)) else "") for n in os.listdir(local))
        return 200, "<!doctype html>\n<meta name=\"viewport\" content=\"width=device-width\">\n<pre>\n%s</pre>\n" % (
            "".join('<a href="%s">%s</a>\n' % (n, n) for n in names))
    with open(local, errors="replace") as f:
        return 200, f.read()


def _parse(params):
    """newNodeLogQuery: (services, files, options, errors); None for services when no known parameter is set."""
    errors, services, files = [], [], []
    queries = params.get("query")
    for q in queries or []:
        if "/" in q or "\\" in q:
            files.append(q)
        elif q.strip():
            services.append(q)
    if queries is not None and not services and not files:
        errors.append("query: Invalid value: %r: may not be empty" % (queries,))
    options = {k: (params.get(k) or [""])[0] for k in ("sinceTime", "untilTime", "boot", "tailLines", "pattern")}
    options = {k: v for k, v in options.items() if v}
    for k in ("boot", "tailLines"):
        if k in options and not re.match(r"^[+-]?\d+$", options[k]):
            errors.append("%s: Invalid value: %r: invalid syntax" % (k, options[k]))
    for k in ("sinceTime", "untilTime"):
        if k in options and not re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$", options[k]):
            errors.append("%s: Invalid value: %r: invalid time format" % (k, options[k]))
    if not errors and not services and not files and not options:
        return None, files, options, errors
    return services, files, options, errors


def _validate(host, services, files, options):
    errors = []
    for s in services:
        if len(s) > MAX_SERVICE_LENGTH:
            errors.append("query: Invalid value: %r: length must be less than %d" % (s, MAX_SERVICE_LENGTH))
        elif UNSAFE_SERVICE_CHARS.search(s):
            errors.append("query: Invalid value: %r: input contains unsupported characters" % s)
    if len(services) > MAX_SERVICES:
        errors.append("query: Too many: %d: must have at most %d items" % (len(services), MAX_SERVICES))
    if not services and not files:
        errors.append("query: Required value: cannot be empty with options")
    elif services and files:
        errors.append("query: Invalid value: cannot specify a file and service")
    elif len(files) > 1:
        errors.append("query: Invalid value: cannot specify more than one file")
    elif files and options:
        errors.append("query: Invalid value: cannot specify file with options")
    elif files and _safe_open(host, files[0]) is None:
        errors.append("query: Invalid value: %r: the file is not there" % files[0])
    if "boot" in options:
        errors.append("boot: Invalid value: %s: not supported on Windows" % options["boot"])
    if "tailLines" in options and not 0 <= int(options["tailLines"]) <= MAX_TAIL_LINES:
        errors.append("tailLines: Invalid value: %s: must be between 0 and %d, inclusive"
                      % (options["tailLines"], MAX_TAIL_LINES))
    return errors


def _service_log(host, service):
    """heuristicsCopyFileLogs: <s>, <s>.log, <s>/<s>.log below C:\\var\\log, the first that is a file."""
    for name in (service, service + ".log", service + "\\" + service + ".log"):
        local = _safe_open(host, name)
        if local is not None and os.path.isfile(local):
            with open(local, errors="replace") as f:
                return f.read()
    return "\nlog not found for %s\n" % service


def serve(root, node, path="", params=None):
    """(HTTP status, body) of GET /logs/<path>?<params> on the simulated host ``node`` (``params``: {name:
    [values]}, as url.Values). Raises KubeletNotRunning when the node's kubelet would not be running."""
    host = core.Host(root, node)
    with host.open(save=False):
        handler, query = query_mode(host)
        if not handler:
            return NOT_FOUND
        if not query:
            return _file_server(host, path)
        services, files, options, errors = _parse(params or {})
        if errors:
            return 400, "[%s]\n" % ", ".join(errors)
        if services is None:
            return _file_server(host, path)
        if path not in ("", "/"):
            return 406, "path not allowed in query mode\n"
        errors = _validate(host, services, files, options)
        if errors:
            return 406, "[%s]\n" % ", ".join(errors)
        if files:
            return _file_server(host, files[0])
        if options:
            return 200, "\noptions present and query resolved to log files for %s\ntry without specifying options\n" % (
                "[%s]" % " ".join(services))
        return 200, "".join(_service_log(host, s) for s in services)
