# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The support bundle on the controller: what is read from a Windows node, the files it makes of the answer
(redacted), and the one archive per run with its index."""

from __future__ import annotations

import datetime
import io
import json
import ntpath
import os
import re
import shutil
import stat
import tarfile
import tempfile

from ansible_collections.kubewin.nodes.plugins.module_utils import _windows_paths as wp
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import runtime_cni, runtimes
from ansible_collections.kubewin.nodes.plugins.plugin_utils._redact import redact

SCHEMA = "kubewin.nodes/support-bundle/v1"
EVENT_LOGS = ("System", "Application")
# Never read, whatever a directory holds: kubeconfigs, token files, keys and the kubelet's certificates (its client
# certificate file holds its private key: kubelet-client-current.pem), and everything under a pki directory.
_CREDENTIAL_NAME = re.compile(r"(?i)(kubeconfig|\.conf$|token|\.key$|\.pem$|\.pfx$|\.p12$|secret|password|credential)")
_CREDENTIAL_DIR = re.compile(r"(?i)\\(pki|ssl|certs?)(\\|$)")
# Named *.conf, but KubeletConfiguration drop-ins (kubelet --config-dir) and CNI network configurations: no credential.
_CONF_DIRS = (wp.KUBELET_DROPIN_DIR, runtime_cni.CONTAINERD_DEFAULT_CONF_DIR, runtime_cni.CRI_DOCKERD_DEFAULT_CONF_DIR)


def is_credential(path):
    """Whether ``path`` (a Windows path) may hold a credential, so the bundle never reads it."""
    directory, name = ntpath.split(path)
    if _CREDENTIAL_DIR.search(directory + "\\"):
        return True
    if name.lower().endswith(".conf") and any(directory.lower() == d.lower() for d in _CONF_DIRS):
        return False
    return bool(_CREDENTIAL_NAME.search(name))


def selection(container_runtime, network_services):
    """{what: [Windows paths]} the node_bundle script reads, by the kind of file (the index says which is which)."""
    services = ["kubelet"] + (["flanneld", "kube-proxy"] if network_services else [])
    logs = [wp.LOG_FILES[s] for s in services]
    logs += [wp.LOG_DIRS["flanneld"] + "\\kube-log-runner.log"] if network_services else []
    config = [wp.KUBELET_CONFIG, wp.KUBEADM_FLAGS, runtime_cni.RUNTIME_CONFIG_FILES[container_runtime]]
    if network_services:
        config += [wp.FLANNEL_NET_CONF, wp.FLANNEL_SUBNET_FILE]
    return {"logs": logs, "config": config,
            "config_dirs": [wp.KUBELET_DROPIN_DIR, runtime_cni.CNI_CONF_DIRS[container_runtime]],
            "listings": [wp.LOG_ROOT] + [wp.LOG_DIRS[s] for s in services]
            + ([wp.CONTAINERD_LOG_DIR] if container_runtime == "containerd" else [])}


def script_parameters(container_runtime, network_services, max_lines, max_kib, max_events):
    """The node_bundle script's parameters."""
    runtime = runtimes.RUNTIMES[container_runtime]
    services = list(dict.fromkeys([runtime["service"], runtime["cri_service"], "kubelet"]))
    services += ["flanneld", "kube-proxy"] if network_services else []
    chosen = selection(container_runtime, network_services)
    files = chosen["logs"] + chosen["config"]
    bad = [p for p in files if is_credential(p)]
    if bad:
        raise ValueError("the support bundle would read %s, which may hold a credential" % ", ".join(bad))
    # dockerd writes its log to the Application log under its service's name as the event source (moby
    # cmd/dockerd/service_windows.go); containerd registers no event source and writes only to its --log-file, if its
    # service was registered with one (the collection's is: C:\var\log\containerd\containerd.log), and discards its
    # log otherwise (cmd/containerd/command/service_windows.go, 1.5 to 2.x; review-s8 W3): no event read for it.
    return {"Files": files, "Dirs": chosen["config_dirs"], "Listings": chosen["listings"], "Services": services,
            "EventLogs": list(EVENT_LOGS), "MaxLines": int(max_lines), "MaxChars": int(max_kib) * 1024,
            "MaxEvents": int(max_events), "RuntimeService": runtime["service"],
            "RuntimeEventSource": "" if container_runtime == "containerd" else runtime["service"]}


def _archive_name(path):
    """A Windows path -> its name in the archive: the node's tree without the drive (var/log/kubelet/kubelet.log)."""
    drive, rest = ntpath.splitdrive(path)
    return "/".join(p for p in rest.split("\\") if p)


def _entry(name, what, source, text=None, error=None, truncated=False, lines=None):
    return {"file": name, "what": what, "source": source, "text": text, "error": error, "truncated": truncated,
            "lines": lines}


def _json(value):
    return json.dumps(value, indent=2, sort_keys=True, default=str) + "\n"


def _read(name, what, source, answer):
    answer = answer or {}
    if answer.get("error") or answer.get("text") is None:
        return _entry(None, what, source, error=answer.get("error") or "not read")
    return _entry(name, what, source, answer["text"] + "\n" if answer["text"] else "", None,
                  bool(answer.get("truncated")), answer.get("lines"))


def host_files(answer, params, cluster):
    """The bundle's entries for one host from the node_bundle answer, the script's ``params`` and the ``cluster``'s
    view ({node, events}: kubernetes.core.k8s_info results), every text redacted."""
    chosen_logs = set(p.lower() for p in params["Files"] if p.lower().endswith(".log"))
    out = []
    for path in params["Files"]:
        what = "log (last lines)" if path.lower() in chosen_logs else "configuration"
        out.append(_read("node/" + _archive_name(path), what, path, (answer.get("files") or {}).get(path)))
    for directory in params["Dirs"]:
        listing = (answer.get("dirs") or {}).get(directory) or {}
        if listing.get("error"):
            out.append(_entry(None, "configuration directory", directory, error=listing["error"]))
        for name, read in sorted((listing.get("entries") or {}).items()):
            source = directory + "\\" + name
            if is_credential(source):
                out.append(_entry(None, "configuration", source, error="not collected: may hold a credential"))
                continue
            out.append(_read("node/" + _archive_name(source), "configuration", source, read))
    listings = dict((d, (answer.get("listings") or {}).get(d) or {}) for d in params["Listings"])
    out.append(_entry("node/log-files.json", "the files in the log directories (rotated logs included)",
                      ", ".join(params["Listings"]), _json(listings)))
    out.append(_entry("node/services.json", "the node services' states and definitions (registry)",
                      ", ".join(params["Services"]), _json(answer.get("services") or {})))
    hns_error = answer.get("hns_error")
    for kind in ("networks", "endpoints", "policylists"):
        raw = (answer.get("hns") or {}).get(kind)
        out.append(_entry("node/hns/%s.json" % kind, "HNS %s (GET /%s/)" % (kind, kind), "HNS", _hns(raw),
                          None if raw is not None else "not collected: %s" % (hns_error or "no answer")))
    for log in params["EventLogs"]:
        out.append(_events("node/events/%s.json" % log, "the newest %s event log records" % log, "Get-WinEvent",
                           (answer.get("events") or {}).get(log)))
    runtime = answer.get("runtime") or {}
    service = params.get("RuntimeService")
    if params.get("RuntimeEventSource"):
        out.append(_events("node/runtime/events.json", "the newest Application log records of the %s event source"
                           % params["RuntimeEventSource"], "Get-WinEvent", runtime.get("events")))
    if runtime.get("log_file"):
        out.append(_read("node/runtime/" + ntpath.basename(runtime["log_file"]), "log (last lines)",
                         runtime["log_file"] + " (%s --log-file)" % service, runtime.get("log")))
    config_file = runtime.get("config_file")
    if config_file and is_credential(config_file):
        out.append(_entry(None, "configuration", config_file, error="not collected: may hold a credential"))
    elif config_file and config_file.lower() not in (p.lower() for p in params["Files"]):
        out.append(_read("node/runtime/" + ntpath.basename(config_file), "configuration",
                         config_file + " (the %s service's --config)" % service, runtime.get("config")))
    for key, what in (("node", "the Node (conditions, addresses, capacity)"), ("events", "the Node's events")):
        result = (cluster or {}).get(key) or {}
        ok = not result.get("failed") and "resources" in result
        out.append(_entry("cluster/%s.json" % key, what, "Kubernetes API", _json(result.get("resources")) if ok
                          else None, None if ok else "not collected: %s" % (result.get("msg") or "not read")))
    return [_redacted(e) for e in out]


def _events(name, what, source, events):
    """An event log read (Read-Events' answer): a file {records, note}; no records is an empty list, not an error."""
    events = events or {"error": "not read"}
    if events.get("error"):
        return _entry(None, what, source, error="not collected: %s" % events["error"])
    return _entry(name, what, source, _json({"records": events.get("records") or [], "note": events.get("note")}))


def _hns(raw):
    if raw is None:
        return None
    try:
        return _json(json.loads(raw))
    except ValueError:
        return raw


def _redacted(entry):
    if entry["text"]:
        entry["text"], entry["redacted"] = redact(entry["text"])
    else:
        entry["redacted"] = 0
    if entry["text"] is None:
        entry["file"] = None
    return entry


STAGING_PREFIX = "kubewin-bundle-"


def stage(host, entries, parent=None):
    """Write the texts of one host's ``entries`` into a new staging directory on the controller (mode 0700, each file
    0600) and return (the directory, the entries without their texts: ``staged``, the file's name there, and ``size``
    instead), so that the task result Ansible keeps (-v, AWX, ARA) holds no log or event text."""
    directory = tempfile.mkdtemp(prefix="%s%s-" % (STAGING_PREFIX, re.sub(r"[^A-Za-z0-9_.-]", "_", host)), dir=parent)
    rows = []
    for number, entry in enumerate(entries):
        row = dict((k, v) for k, v in entry.items() if k != "text")
        row["staged"], row["size"] = None, None
        if entry["text"] is not None:
            data = entry["text"].encode("utf-8")
            row["staged"], row["size"] = "%04d" % number, len(data)
            fd = os.open(os.path.join(directory, row["staged"]), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        rows.append(row)
    return directory, rows


def unstage(directory, rows):
    """The entries with their texts again, read from a staging directory ``stage`` made; refused (ValueError) unless
    it is a directory of this user with mode 0700 named as ``stage`` names them, so a task result cannot make the
    archive read another file."""
    if not isinstance(directory, str) or not os.path.basename(directory).startswith(STAGING_PREFIX):
        raise ValueError("%r is not a support bundle staging directory" % (directory,))
    info = os.lstat(directory)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or stat.S_IMODE(info.st_mode) != 0o700:
        raise ValueError("%s is not a staging directory of this user with mode 0700" % directory)
    entries = []
    for row in rows:
        entry = dict((k, v) for k, v in row.items() if k not in ("staged", "size"))
        entry["text"] = None
        if row.get("staged") is not None:
            if not re.match(r"^[0-9]{4}$", str(row["staged"])):
                raise ValueError("%r is not a staged file's name" % (row["staged"],))
            fd = os.open(os.path.join(directory, row["staged"]), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "rb") as f:
                entry["text"] = f.read().decode("utf-8")
        entries.append(entry)
    return entries


def remove_staging(directory):
    """Remove a staging directory once its files are in the archive (what ``unstage`` accepted only)."""
    shutil.rmtree(directory, ignore_errors=True)


def index(hosts, created):
    """The index: what each file is, from which host, and what could not be collected and why."""
    rows = []
    for host in sorted(hosts):
        for e in hosts[host]:
            rows.append({"host": host, "file": "%s/%s" % (host, e["file"]) if e["file"] else None, "what": e["what"],
                         "source": e["source"], "error": e["error"], "truncated": e["truncated"],
                         "lines": e["lines"], "redacted": e.get("redacted", 0)})
    return {"schema": SCHEMA, "created": created, "hosts": sorted(hosts), "files": rows}


def index_text(idx):
    lines = ["kubewin.nodes support bundle, %s, hosts: %s" % (idx["created"], ", ".join(idx["hosts"])), ""]
    for r in idx["files"]:
        note = r["error"] or ("truncated to the last lines" if r["truncated"] else "")
        lines.append("%-12s %-45s %s%s" % (r["host"], r["file"] or "-", r["what"], " (%s)" % note if note else ""))
    return "\n".join(lines) + "\n"


def write_archive(directory, hosts, now=None):
    """Write one .tar.gz of every host's entries ({host: [entry]}) and the index into ``directory``; returns its
    path. Every text is redacted again as it is written, so no caller can put a credential in."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    stamp = now.strftime("%Y%m%dT%H%M%SZ")
    base = "kubewin-support-bundle-" + stamp
    path = os.path.join(directory, base + ".tar.gz")
    idx = index(hosts, now.strftime("%Y-%m-%dT%H:%M:%SZ"))
    members = [("index.json", _json(idx)), ("index.txt", index_text(idx))]
    for host in sorted(hosts):
        members += [("%s/%s" % (host, e["file"]), e["text"]) for e in hosts[host] if e["file"]]
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f, tarfile.open(fileobj=f, mode="w:gz") as tar:
        for name, text in members:
            data = redact(text)[0].encode("utf-8")
            info = tarfile.TarInfo("%s/%s" % (base, name))
            info.size, info.mtime, info.mode = len(data), int(now.timestamp()), 0o600
            tar.addfile(info, io.BytesIO(data))
    return path, idx
