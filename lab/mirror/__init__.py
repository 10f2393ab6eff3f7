"""The lab's loopback download mirror: stand-in Windows node binaries laid out like upstream.

    build(root)            write the tree (idempotent; byte-identical on every build)
    serve(root, port)      serve it on 127.0.0.1 (blocking); start_server() for a background thread
    ForwardProxy           a small HTTP forward proxy for proxy tests

See layout.py for the paths and checksum formats, README.md for the commands.
"""

import gzip
import hashlib
import http.server
import io
import json
import os
import re
import shutil
import sys
import tarfile
import threading
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
LAB = os.path.dirname(HERE)
REPO = os.path.dirname(LAB)
if LAB not in sys.path:
    sys.path.insert(0, LAB)

from mirror import layout  # noqa: E402

DEFAULT_PORT = 18080
DEFAULT_ROOT = os.path.join(LAB, "_run", "mirror")


def port():
    return int(os.environ.get("LAB_MIRROR_PORT") or DEFAULT_PORT)


def root():
    return os.environ.get("LAB_MIRROR_ROOT") or DEFAULT_ROOT


def docroot(mirror_root):
    return os.path.join(mirror_root, "www")


def _env_list(name):
    value = os.environ.get(name)
    if value is None:
        return None
    return [v for v in re.split(r"[\s,]+", value) if v]


ROLE_DEFAULTS = (os.path.join(REPO, "roles", "kubewin", "defaults", "main.yml"),
                 os.path.join(REPO, "roles", "defaults", "defaults", "main.yml"))  # shared defaults, then the old place


def _role_default(var):
    """A version from the roles' shared defaults, if the file says one (plain 'var: value')."""
    for path in ROLE_DEFAULTS:
        try:
            with open(path) as f:
                for line in f:
                    m = re.match(r"^%s:\s*['\"]?(v?[0-9][^'\"\s#]*)" % re.escape(var), line)
                    if m:
                        return m.group(1)
        except OSError:
            pass
    return None


def _uniq(values):
    out = []
    for v in values:
        if v and v not in out:
            out.append(v)
    return out


def kubernetes_versions():
    """LAB_MIRROR_KUBE_VERSIONS, else the lab's default version plus every built _cache/<version>."""
    override = _env_list("LAB_MIRROR_KUBE_VERSIONS")
    if override is not None:
        return override
    versions = []
    try:
        with open(os.path.join(LAB, "controlplane", "VERSION")) as f:
            versions.append(f.read().strip())
    except OSError:
        pass
    cache = os.path.join(LAB, "_cache")
    if os.path.isdir(cache):
        versions += sorted(d for d in os.listdir(cache) if re.match(r"^v\d+\.\d+\.\d+", d)
                           and os.path.isdir(os.path.join(cache, d)))
    return _uniq(versions)


def versions():
    return {
        "kubernetes": kubernetes_versions(),
        "flannel": _env_list("LAB_MIRROR_FLANNEL_VERSIONS")
        or _uniq([_role_default("kubewin_flannel_version")] + list(layout.DEFAULT_FLANNEL_VERSIONS)),
        "cni": _env_list("LAB_MIRROR_CNI_VERSIONS")
        or _uniq([_role_default("kubewin_cni_plugins_version")] + list(layout.DEFAULT_CNI_VERSIONS)),
        "flannel_cni": _env_list("LAB_MIRROR_FLANNEL_CNI_VERSIONS")
        or _uniq([_role_default("kubewin_flannel_cni_plugin_version")] + list(layout.DEFAULT_FLANNEL_CNI_VERSIONS)),
        "sdn_cni": _env_list("LAB_MIRROR_SDN_CNI_VERSIONS")
        or _uniq([_role_default("kubewin_sdn_cni_version")] + list(layout.DEFAULT_SDN_CNI_VERSIONS)),
        "windows_exporter": _env_list("LAB_MIRROR_WINDOWS_EXPORTER_VERSIONS")
        or _uniq([_role_default("kubewin_windows_exporter_version")] + list(layout.DEFAULT_WINDOWS_EXPORTER_VERSIONS)),
        "containerd": _env_list("LAB_MIRROR_CONTAINERD_VERSIONS")
        or _uniq([_role_default("kubewin_containerd_version")] + list(layout.DEFAULT_CONTAINERD_VERSIONS)),
        "crictl": _env_list("LAB_MIRROR_CRICTL_VERSIONS") or [_role_default("kubewin_crictl_version")],
    }


# --- building ----------------------------------------------------------------------------------
def stand_in(tool, version):
    """The bytes of a stand-in binary, written by winsim's own helper (first line: the marker)."""
    import tempfile

    from winsim import core  # imported late: it pulls in the simulator
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, tool)
        core.write_binary(path, tool, version)
        with open(path, "rb") as f:
            return f.read()


def tgz(members, dot_prefix, dirs=()):
    """A reproducible .tgz: members [(name, bytes)], owner 0, mtime 0 (GNU tar -C dir . adds './'; ``dirs``: directory
    entries first, as tar of a directory writes it)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for name in (["./"] if dot_prefix else []) + list(dirs):
            info = tarfile.TarInfo(name)
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 0
            tar.addfile(info)
        for name, data in members:
            info = tarfile.TarInfo(("./" if dot_prefix else "") + name)
            info.size, info.mode, info.mtime = len(data), 0o755, 0
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            tar.addfile(info, io.BytesIO(data))
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0, filename="") as gz:
        gz.write(raw.getvalue())
    return out.getvalue()


def zip_archive(members):
    """A reproducible .zip: members [(name, bytes)], every entry dated 1980-01-01 (the zip minimum),
    deflated, with its directory entries first as Windows zip tools write them."""
    import zipfile
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as z:
        dirs = []
        for name, _ in members:
            parts = name.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                d = "/".join(parts[:i]) + "/"
                if d not in dirs:
                    dirs.append(d)
        for d in dirs:
            info = zipfile.ZipInfo(d, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0x10  # MS-DOS directory attribute
            z.writestr(info, b"")
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0x20  # MS-DOS archive attribute
            z.writestr(info, data)
    return raw.getvalue()


def _write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.exists(path):
        with open(path, "rb") as f:
            if f.read() == data:
                return
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def sha512(data):
    return hashlib.sha512(data).hexdigest()


def build(mirror_root=None, served=None):
    """Write the mirror tree under <root>/www and <root>/manifest.json. Returns the manifest:
    {"files": {url path: {"sha512", "size", "checksum_path"}}, "versions": {...}}."""
    mirror_root = mirror_root or root()
    www = docroot(mirror_root)
    served = served or versions()
    files = {}

    def publish(rel, data, checksum_text):
        _write(os.path.join(www, rel), data)
        _write(os.path.join(www, rel + ".sha512"), checksum_text.encode())
        files[rel] = {"sha512": sha512(data), "size": len(data), "checksum_path": rel + ".sha512"}

    for v in served["kubernetes"]:
        for name in layout.K8S_FILES:
            data = stand_in(name[:-4], v)
            publish(layout.kubernetes_path(v, name), data, sha512(data))  # dl.k8s.io: hex only
    for v in served["flannel"]:
        data = stand_in("flanneld", v)
        publish(layout.flannel_path(v), data, "%s  flanneld.exe\n" % sha512(data))
    for v in served["cni"]:
        data = tgz([(n, stand_in(n[:-4], v)) for n in layout.cni_files(v)], dot_prefix=True)
        publish(layout.cni_path(v), data, "%s  %s\n" % (sha512(data), layout.cni_archive(v)))
    for v in served["flannel_cni"]:
        data = tgz([(n, stand_in("flannel", v)) for n in layout.FLANNEL_CNI_FILES], dot_prefix=False)
        publish(layout.flannel_cni_path(v), data, "%s  %s\n" % (sha512(data), layout.flannel_cni_archive(v)))
    for v in served.get("sdn_cni") or []:
        data = zip_archive([(n, stand_in(n[:-4], v) if n.endswith(".exe") else
                             ("# stand-in for %s of windows-container-networking %s\r\n" % (n, v)).encode())
                            for n in layout.sdn_cni_files(v)])
        publish(layout.sdn_cni_path(v), data, "%s  ./release/%s\n" % (sha512(data), layout.sdn_cni_archive(v)))
    for v in served.get("windows_exporter") or []:
        data = stand_in("windows_exporter", v)
        publish(layout.windows_exporter_path(v), data, "%s  %s\n" % (sha512(data), layout.windows_exporter_file(v)))
    def publish_sha256(rel, data, checksum_text, suffix):
        _write(os.path.join(www, rel), data)
        _write(os.path.join(www, rel + suffix), checksum_text.encode())
        files[rel] = {"sha512": sha512(data), "sha256": hashlib.sha256(data).hexdigest(), "size": len(data),
                      "checksum_path": rel + suffix}

    for v in served.get("containerd") or []:
        data = tgz([(m, stand_in(m[4:-4], v)) for m in layout.CONTAINERD_MEMBERS], dot_prefix=False, dirs=["bin/"])
        publish_sha256(layout.containerd_path(v), data,
                       "%s  %s\n" % (hashlib.sha256(data).hexdigest(), layout.containerd_archive(v)), ".sha256sum")
    for v in served.get("crictl") or []:
        data = tgz([("crictl.exe", stand_in("crictl", v))], dot_prefix=False)
        publish_sha256(layout.crictl_path(v), data, hashlib.sha256(data).hexdigest(), ".sha256")
    data = zip_archive([(m, stand_in("nssm", layout.NSSM_VERSION)) for m in layout.NSSM_MEMBERS])
    publish(layout.nssm_path(), data, "%s  %s\n" % (sha512(data), layout.NSSM_ARCHIVE))  # checksum: the mirror's own
    manifest = {"versions": served, "files": files}
    _write(os.path.join(mirror_root, "manifest.json"), (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode())
    return manifest


def ensure(path, mirror_root=None):
    """Build the mirror again when it lacks ``path`` (a lab started before the mirror served that file: the tree is
    rewritten with the same bytes for every file it had)."""
    if not os.path.isfile(os.path.join(docroot(mirror_root or root()), path)):
        build(mirror_root)


def clean(mirror_root=None):
    shutil.rmtree(mirror_root or root(), ignore_errors=True)


def role_vars(base_url, manifest):
    """Inventory variables that point the roles at the mirror (flanneld.exe, NSSM and windows_exporter pinned by URL,
    as upstream publishes no SHA-512 for them; plain http allowed, as the mirror serves no TLS)."""
    base = base_url.rstrip("/")
    out = {var: "%s/%s" % (base, layout.BASES[key][1]) for key, var in layout.ROLE_VARS.items()}
    out["kubewin_allow_insecure_downloads"] = True
    flannel_v = manifest["versions"]["flannel"][0] if manifest["versions"]["flannel"] else None
    pins = {}
    if flannel_v:
        path = layout.flannel_path(flannel_v)
        pins["%s/%s" % (base, path)] = manifest["files"][path]["sha512"]
    if layout.nssm_path() in manifest["files"]:
        pins["%s/%s" % (base, layout.nssm_path())] = manifest["files"][layout.nssm_path()]["sha512"]
    exporter_v = (manifest["versions"].get("windows_exporter") or [None])[0]
    if exporter_v and layout.windows_exporter_path(exporter_v) in manifest["files"]:
        path = layout.windows_exporter_path(exporter_v)
        pins["%s/%s" % (base, path)] = manifest["files"][path]["sha512"]
    if pins:
        out["kubewin_checksums"] = pins
    return out


# --- serving -----------------------------------------------------------------------------------
class _Handler(http.server.SimpleHTTPRequestHandler):
    log_file = None

    def log_message(self, fmt, *args):
        stream = self.log_file or sys.stderr
        stream.write("%s - %s\n" % (self.address_string(), fmt % args))
        stream.flush()


def make_server(mirror_root=None, listen_port=None, host="127.0.0.1", log=None):
    www = docroot(mirror_root or root())
    if not os.path.isdir(www):
        raise SystemExit("mirror: %s does not exist; run 'mirror build' first" % www)
    handler = type("Handler", (_Handler,), {"log_file": log})

    def factory(*args, **kwargs):
        return handler(*args, directory=www, **kwargs)

    http.server.ThreadingHTTPServer.allow_reuse_address = True
    return http.server.ThreadingHTTPServer((host, port() if listen_port is None else listen_port), factory)


def serve(mirror_root=None, listen_port=None):
    server = make_server(mirror_root, listen_port, log=sys.stdout)
    print("mirror: serving %s on http://127.0.0.1:%d" % (docroot(mirror_root or root()), server.server_address[1]),
          flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def start_server(mirror_root, listen_port=0, log=None):
    """Serve in a daemon thread (tests); returns (server, base_url). Stop with server.shutdown()."""
    server = make_server(mirror_root, listen_port, log=log or open(os.devnull, "w"))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, "http://127.0.0.1:%d" % server.server_address[1]


class ForwardProxy(object):
    """An HTTP forward proxy on 127.0.0.1 for tests: requests for host ``alias`` (e.g.
    mirror.kubewin.test, which no resolver knows) go to ``upstream`` (http://127.0.0.1:PORT).
    ``requests`` lists the absolute URLs it was asked for."""

    def __init__(self, upstream, alias="mirror.kubewin.test"):
        self.requests = []
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, fmt, *args):
                pass

            def do_GET(self):
                proxy.requests.append(self.path)
                parsed = urllib.parse.urlsplit(self.path)
                if parsed.hostname != alias:
                    self.send_error(502, "proxy only knows %s" % alias)
                    return
                target = upstream.rstrip("/") + parsed.path
                try:
                    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
                    with opener.open(target, timeout=30) as r:
                        body, status = r.read(), r.status
                except urllib.error.HTTPError as e:
                    body, status = e.read(), e.code
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()
