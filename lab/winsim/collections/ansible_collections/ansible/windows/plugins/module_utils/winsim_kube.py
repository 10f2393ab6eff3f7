# Test-lab only: stand-in kubeadm.exe and kubelet.exe that talk to the lab's real API server.
"""kubeadm join/reset/upgrade node/version and the kubelet service, following the real steps
(cmd/kubeadm/app/cmd/phases/join, pkg/kubelet/certificate/bootstrap) closely enough that what the
collection does around them is tested against a real kube-apiserver: token discovery with JWS and
CA-pin verification, the TLS bootstrap through a CSR approved by the controller-manager, and the
Node registration (the Ready condition is the simulated kubelet's: winsim_kubelet_status)."""

from __future__ import annotations

import base64
import datetime
import hashlib
import hmac
import json
import os
import re
import shutil
import tempfile
import time

import yaml
from ansible_collections.ansible.windows.plugins.module_utils import winsim_binaries as binaries
from ansible_collections.ansible.windows.plugins.module_utils import winsim_kubelet_status, winsim_wine
from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError

ETC = "C:\\etc\\kubernetes"
KUBELET_DIR = "C:\\var\\lib\\kubelet"
ETCD_DIR = "C:\\var\\lib\\etcd"
CRI_CONTAINERD = "npipe:////./pipe/containerd-containerd"
# Flags only the Windows kubelet registers (cmd/kubelet/app/options/osflags_windows.go): the
# lab's flag list comes from a Linux kubelet's --help, which lacks them. Used only for a version
# that has no Windows kubelet.exe in the lab cache (lab-build builds it for VERSION and
# UPGRADE_FROM); otherwise the real kubelet.exe under Wine decides (winsim_wine).
WINDOWS_ONLY_FLAGS = {"windows-service", "windows-priorityclass"}


# --- small helpers --------------------------------------------------------------------------
def _read(host, win_path):
    with open(host.local_path(win_path), "rb") as f:
        return f.read()


def _write(host, win_path, data):
    local = host.local_path(win_path)
    os.makedirs(os.path.dirname(local), exist_ok=True)
    with open(local, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode("utf-8"))


def _exists(host, win_path):
    return os.path.exists(host.local_path(win_path))


def go_quote(s):
    """Go's %q for the ASCII text kubeadm writes (kubeadm-flags.env)."""
    out = ['"']
    for c in s:
        if c in '"\\':
            out.append("\\" + c)
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif ord(c) < 0x20 or ord(c) == 0x7f:
            out.append("\\x%02x" % ord(c))
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def _b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class Api(object):
    """Minimal client: bootstrap token, client certificate, or anonymous; CA-verified or not."""

    def __init__(self, server, ca_pem=None, token=None, cert_pem=None, key_pem=None):
        self.server, self.token = server.rstrip("/"), token
        self._tmp = tempfile.mkdtemp(prefix="winsim-api-")
        self.verify = False
        if ca_pem:
            self.verify = self._file("ca.crt", ca_pem)
        self.cert = None
        if cert_pem:
            self.cert = (self._file("c.crt", cert_pem), self._file("c.key", key_pem))

    def _file(self, name, data):
        path = os.path.join(self._tmp, name)
        with open(path, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())
        return path

    def close(self):
        shutil.rmtree(self._tmp, ignore_errors=True)

    def request(self, method, path, body=None, content_type="application/json"):
        import requests
        import urllib3
        urllib3.disable_warnings()
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        if body is not None:
            headers["Content-Type"] = content_type
            body = json.dumps(body)
        try:
            r = requests.request(method, self.server + path, data=body, headers=headers, verify=self.verify,
                                 cert=self.cert, timeout=15)
        except requests.RequestException as e:
            raise SimError("unable to reach the API server %s: %s" % (self.server, e)) from None
        if r.status_code >= 400:
            return r.status_code, (r.json() if r.headers.get("Content-Type", "").startswith("application/json")
                                   else {"message": r.text})
        return r.status_code, r.json()


def _kubeconfig(server, ca_pem, user):
    return yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "preferences": {},
        "clusters": [{"name": "default-cluster", "cluster": {
            "server": server, "certificate-authority-data": base64.b64encode(ca_pem).decode()}}],
        "contexts": [{"name": "default-context", "context": {
            "cluster": "default-cluster", "namespace": "default", "user": "default-auth"}}],
        "current-context": "default-context",
        "users": [{"name": "default-auth", "user": user}],
    }, default_flow_style=False)


def _load_kubeconfig(host, win_path):
    """(server, ca_pem, user) of a kubeconfig on the node."""
    cfg = yaml.safe_load(_read(host, win_path))
    ctx_name = cfg.get("current-context")
    ctx = next((c["context"] for c in cfg.get("contexts") or [] if c["name"] == ctx_name), None) or {}
    cluster = next((c["cluster"] for c in cfg["clusters"] if c["name"] == ctx.get("cluster")),
                   cfg["clusters"][0]["cluster"])
    user = next((u["user"] for u in cfg.get("users") or [] if u["name"] == ctx.get("user")), {})
    ca = base64.b64decode(cluster["certificate-authority-data"]) if cluster.get("certificate-authority-data") \
        else _read(host, cluster["certificate-authority"])
    return cluster["server"], ca, user


def _api_from_kubeconfig(host, win_path):
    server, ca, user = _load_kubeconfig(host, win_path)
    if user.get("token"):
        return Api(server, ca, token=user["token"])
    if user.get("tokenFile"):
        # client-go tools/clientcmd/client_config.go (ClientConfig): with no token, a tokenFile is read
        # (os.ReadFile, an error if it cannot be) and kept as BearerTokenFile, which the transport
        # re-reads once a minute (transport/token_source.go NewCachedFileTokenSource). The first read
        # keeps the content as is (a trailing newline would be sent too); only the re-reads trim it.
        return Api(server, ca, token=_read(host, user["tokenFile"]).decode("utf-8"))
    cert = base64.b64decode(user["client-certificate-data"]) if user.get("client-certificate-data") \
        else _read(host, user["client-certificate"])
    key = base64.b64decode(user["client-key-data"]) if user.get("client-key-data") else _read(host, user["client-key"])
    return Api(server, ca, cert_pem=cert, key_pem=key)


def ca_pins(ca_pem):
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    pins = []
    for block in re.findall(rb"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----", ca_pem, re.S):
        cert = x509.load_pem_x509_certificate(block)
        spki = cert.public_key().public_bytes(serialization.Encoding.DER,
                                              serialization.PublicFormat.SubjectPublicKeyInfo)
        pins.append("sha256:" + hashlib.sha256(spki).hexdigest())
    return pins


def _timeout(host, key, default):
    return float(host.config().get(key, default))


# --- kubeadm --------------------------------------------------------------------------------
class Out(object):
    def __init__(self):
        self.lines = []

    def __call__(self, text):
        self.lines.append(text)

    def text(self):
        return "".join(line + "\n" for line in self.lines)


def _parse_kubeadm_flags(args, known, bools=()):
    """pflag-style parsing: --name=value, --name value, booleans; unknown flags are errors."""
    flags, positional, i = {}, [], 0
    while i < len(args):
        a = args[i]
        if a.startswith("-") and a != "-":
            name, sep, value = a.lstrip("-").partition("=")
            if name not in known and name not in bools:
                raise _KubeadmExit("unknown flag: %s" % a.split("=")[0])
            if name in bools:
                flags[name] = value if sep else "true"
            elif sep:
                flags[name] = value
            else:
                if i + 1 >= len(args):
                    raise _KubeadmExit("flag needs an argument: %s" % a)
                flags[name] = args[i + 1]
                i += 1
        else:
            positional.append(a)
        i += 1
    return flags, positional


class _KubeadmExit(Exception):
    pass


@binaries.command("kubeadm")
def kubeadm(host, version, args, stdin):
    out = Out()
    warnings = []
    warn = warnings.append
    try:
        if not args:
            raise _KubeadmExit("kubeadm: easily bootstrap a secure Kubernetes cluster (no command given)")
        cmd, rest = args[0], args[1:]
        if cmd == "version":
            flags, _ = _parse_kubeadm_flags(rest, {"output", "o"})
            fmt = flags.get("output") or flags.get("o")
            if fmt == "short":
                out(version)
            else:
                out('kubeadm version: &version.Info{Major:"1", GitVersion:"%s", Platform:"windows/amd64"}' % version)
        elif cmd == "join":
            _join(host, version, rest, out, warn)
        elif cmd == "reset":
            _reset(host, version, rest, out, stdin, warn)
        elif cmd == "upgrade" and rest[:1] == ["node"]:
            _upgrade_node(host, version, rest[1:], out, warn)
        else:
            raise _KubeadmExit("unknown command %r for \"kubeadm\"" % cmd)
    except _KubeadmExit as e:
        return 1, out.text(), "".join(w + "\n" for w in warnings) + \
            "%s\nTo see the stack trace of this error execute with --v=5 or higher\n" % e
    return 0, out.text(), "".join(w + "\n" for w in warnings)


def _kubelet_version_errors(host, ignore, kubeadm_version=None):
    """The preflight checks that run `kubelet --version` (kubernetes v1.37.2
    cmd/kubeadm/app/preflight/checks.go: SystemVerificationCheck.Check and KubeletVersionCheck.Check call
    GetKubeletVersion, utils.go: execer.Command("kubelet", "--version"), a Path lookup of the kubeadm
    process). Join runs both (addCommonChecks); upgrade node runs SystemVerification (RunUpgradeChecks).
    With ``kubeadm_version``, KubeletVersion also refuses a kubelet below MinimumKubeletVersion
    (constants.go: getSkewedKubernetesVersion(-3), the kubeadm minor minus 3).
    Returns {check name: error text} for the checks that fail and are not ignored."""
    win, local = binaries.look_path(host, "kubelet", binaries.session_path(host))
    errors = {}
    if local is None:
        # k8s.io/utils/exec wraps os/exec's error; on Windows exec.ErrNotFound reads "... in %PATH%".
        why = "cannot execute 'kubelet --version': exec: \"kubelet\": executable file not found in %PATH%"
    else:
        marker = binaries.read_marker(local)
        rc, out, _err = binaries.run(host, [win, "--version"]) if marker else (1, "", "")
        m = re.match(r"^\s*Kubernetes v((0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)([-\w.+]*)?)\s*$", out or "")
        why = None
        if not (rc == 0 and m):
            why = "Unable to parse output from Kubelet: %r" % (out or "").strip()
        elif kubeadm_version:
            major, minor = _minor(kubeadm_version)
            if (int(m.group(2)), int(m.group(3))) < (major, minor - 3):
                errors["KubeletVersion"] = ("Kubelet version \"%s\" is lower than kubeadm can support. Please "
                                            "upgrade kubelet" % m.group(1))
        if why is None:
            return {k: v for k, v in errors.items() if k.lower() not in ignore and "all" not in ignore}
    errors = {name: "couldn't get kubelet version: " + why for name in ("KubeletVersion", "SystemVerification")}
    return {k: v for k, v in errors.items() if k.lower() not in ignore and "all" not in ignore}


def _minor(version):
    m = re.match(r"^v?(\d+)\.(\d+)", str(version))
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def node_local_cri_socket(version):
    """kubeadm's NodeLocalCRISocket gate (cmd/kubeadm/app/features/features.go: alpha 1.32, beta and on by
    default 1.34, GA and locked 1.36): the CRI endpoint goes to instance-config.yaml, not kubeadm-flags.env."""
    return _minor(version) >= (1, 34)


# kubeadm runs on Windows with paths built by filepath.Join from "/etc/kubernetes" (constants.KubernetesDir):
# rooted on the current drive, printed with backslashes and no drive letter. The join's CA path defaults to
# "C:/etc/kubernetes/pki/ca.crt" (apis/kubeadm/v1beta4/defaults_windows.go DefaultCACertPath), kept as written.
KUBEADM_ETC = "\\etc\\kubernetes"
KUBEADM_CA = "C:/etc/kubernetes/pki/ca.crt"
KUBEADM_KUBELET_DIR = "\\var\\lib\\kubelet"


def _check_name_file(path):
    """FileAvailableCheck.Name (preflight/checks.go): "FileAvailable-" + the path with "/" made "-"."""
    return "FileAvailable-" + path.replace("/", "-")


def _kubeadm_service_stop(host, name):
    """kubeadm's Windows ServiceStop (cmd/kubeadm/app/util/initsystem/initsystem_windows.go): nothing to do when
    the service is stopped, else a plain ControlService(SERVICE_CONTROL_STOP) -- no dependents stopped first, so
    it fails with ERROR_DEPENDENT_SERVICES_RUNNING (1051) while one runs (Microsoft Learn, ControlService)."""
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_scm
    try:
        winsim_scm.control_stop(host, name)
    except SimError as e:
        raise SimError("could not stop service %s: %s" % (name, e)) from None


def _kubeadm_service_start(host, name):
    """kubeadm's Windows ServiceStart: StartService, then up to 10 s for Running."""
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_scm
    try:
        winsim_scm.start(host, name)
    except SimError as e:
        raise SimError("could not start service %s: %s" % (name, e)) from None


def _klog_warning(text):
    """A klog warning line as kubeadm writes it to stderr."""
    now = datetime.datetime.utcnow()
    return "W%s %s    4242 kubelet.go:43] %s" % (now.strftime("%m%d"), now.strftime("%H:%M:%S.%f"), text)


JOIN_FLAGS = {"token", "discovery-token", "tls-bootstrap-token", "discovery-token-ca-cert-hash", "node-name",
              "cri-socket", "ignore-preflight-errors", "v", "config", "discovery-file", "skip-phases", "patches"}
JOIN_BOOLS = {"discovery-token-unsafe-skip-ca-verification", "dry-run"}


# Flags that may go with --config (kubernetes v1.37.2 cmd/kubeadm/app/apis/kubeadm/validation/validation.go,
# isAllowedFlag: options.CfgPath, IgnorePreflightErrors, DryRun, KubeconfigPath, NodeName, KubeconfigDir,
# UploadCerts, PrintManifest, "allow-missing-template-keys", "output", "show-managed-fields",
# "print-join-command", "rootfs", "v", "log-file", "yes", and every "skip-*"). Any other flag set with
# --config is refused by ValidateMixedArguments before anything else happens.
CONFIG_ALLOWED_FLAGS = {"config", "ignore-preflight-errors", "dry-run", "kubeconfig", "node-name", "kubeconfig-dir",
                        "upload-certs", "print-manifest", "allow-missing-template-keys", "output",
                        "show-managed-fields", "print-join-command", "rootfs", "v", "log-file", "yes"}
# util/config/common.go validateSupportedVersion (v1.37.2): versions kubeadm names as old, with the last
# kubeadm that read them; kubeadm.k8s.io/v1 is experimental and refused without --allow-experimental-api.
OLD_KUBEADM_API_VERSIONS = {"kubeadm.k8s.io/v1alpha1": "v1.11", "kubeadm.k8s.io/v1alpha2": "v1.12",
                            "kubeadm.k8s.io/v1alpha3": "v1.14", "kubeadm.k8s.io/v1beta1": "v1.15",
                            "kubeadm.k8s.io/v1beta2": "v1.22", "kubeadm.k8s.io/v1beta3": "v1.36"}
TOKEN_RE = re.compile(r"^([a-z0-9]{6})\.([a-z0-9]{16})$")
# v1beta4 JoinConfiguration fields (cmd/kubeadm/app/apis/kubeadm/v1beta4/types.go); a field outside these is
# reported by strict decoding (util/config/strict), a warning for `kubeadm join --config`
# (LoadJoinConfigurationFromFile passes strictErrors=false).
JOIN_CONFIG_FIELDS = {
    "": {"apiVersion", "kind", "dryRun", "nodeRegistration", "caCertPath", "discovery", "controlPlane", "skipPhases",
         "patches", "timeouts"},
    "discovery": {"bootstrapToken", "file", "tlsBootstrapToken"},
    "discovery.bootstrapToken": {"token", "apiServerEndpoint", "caCertHashes", "unsafeSkipCAVerification"},
    "discovery.file": {"kubeConfigPath"},
    "nodeRegistration": {"name", "criSocket", "taints", "kubeletExtraArgs", "ignorePreflightErrors", "imagePullPolicy",
                         "imagePullSerial"},
}


def _unknown_fields(doc):
    found = []
    for path, allowed in sorted(JOIN_CONFIG_FIELDS.items()):
        node = doc
        for part in [x for x in path.split(".") if x]:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict):
            found += ["%s%s" % (path + "." if path else "", k) for k in sorted(node) if k not in allowed]
    return found


def _join_config_from_file(host, path, warn):
    """kubeadm's LoadJoinConfigurationFromFile (cmd/kubeadm/app/util/config/joinconfiguration.go): read the
    file, split the YAML documents (each needs apiVersion and kind), take the JoinConfiguration, refuse an
    unsupported version, decode (unknown fields: a warning), then default and validate it."""
    try:
        text = _read(host, path).decode("utf-8")
    except (IOError, OSError):
        raise _KubeadmExit("unable to read config from \"%s\" : open %s: The system cannot find the file specified."
                           % (path, path)) from None
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as e:
        raise _KubeadmExit("error converting YAML to JSON: %s" % str(e).splitlines()[0]) from None
    join = None
    for d in docs:
        if not isinstance(d, dict) or not d.get("apiVersion") or not d.get("kind"):
            # kubeadmutil.SplitYAMLDocuments
            raise _KubeadmExit("invalid configuration: kind and apiVersion is mandatory information that must be "
                               "specified")
        if d["kind"] != "JoinConfiguration":
            continue
        gv = d["apiVersion"]
        if gv in OLD_KUBEADM_API_VERSIONS:
            raise _KubeadmExit("your configuration file uses an old API spec: \"%s\" (kind: \"JoinConfiguration\"). "
                               "Please use kubeadm %s instead and run 'kubeadm config migrate --old-config "
                               "old-config-file --new-config new-config-file', which will write the new, similar "
                               "spec using a newer API version." % (gv, OLD_KUBEADM_API_VERSIONS[gv]))
        if gv == "kubeadm.k8s.io/v1":
            raise _KubeadmExit("experimental API spec: \"%s\" (kind: \"JoinConfiguration\") is not allowed. You can "
                               "use the --allow-experimental-api flag if the command supports it." % gv)
        if gv != "kubeadm.k8s.io/v1beta4":
            # decoding fails for a version the scheme does not know; the simulation words it its own way
            raise _KubeadmExit("winsim: no kind \"JoinConfiguration\" is registered for version \"%s\"" % gv)
        for field in _unknown_fields(d):
            warn("W0101 00:00:00.000000    1234 strict.go:54] error unmarshaling configuration "
                 "schema.GroupVersionKind{Group:\"kubeadm.k8s.io\", Version:\"v1beta4\", Kind:\"JoinConfiguration\"}: "
                 "strict decoding error: unknown field \"%s\"" % field)
        join = d
    if join is None:
        raise _KubeadmExit("no JoinConfiguration found in the supplied config")
    disc = join.get("discovery") or {}
    bt = disc.get("bootstrapToken")
    nr = join.get("nodeRegistration") or {}
    # caCertPath: where kubelet-start writes the cluster CA (v1beta4 types.go JoinConfiguration.CACertPath;
    # SetDefaults_JoinConfiguration fills DefaultCACertPath when empty).
    cfg = {"file": disc.get("file"), "tls_token": disc.get("tlsBootstrapToken") or "",
           "node_name": nr.get("name") or "", "cri": nr.get("criSocket") or "",
           "ignore": [str(x) for x in nr.get("ignorePreflightErrors") or []],
           "ca_cert_path": join.get("caCertPath") or KUBEADM_CA}
    if bt is not None:
        cfg.update(endpoint=bt.get("apiServerEndpoint") or "", token=bt.get("token") or "",
                   pins=[str(p) for p in bt.get("caCertHashes") or []],
                   skip_verify=bool(bt.get("unsafeSkipCAVerification")))
        # SetDefaults_Discovery (v1beta4/defaults.go): tlsBootstrapToken defaults to the discovery token.
        cfg["tls_token"] = cfg["tls_token"] or cfg["token"]
    cfg["has_token"] = bt is not None
    return cfg


def _validate_join(cfg):
    """ValidateDiscovery and ValidateDiscoveryBootstrapToken (apis/kubeadm/validation/validation.go)."""
    errs = []
    if not cfg["has_token"] and not cfg.get("file"):
        errs.append("discovery: Invalid value: \"\": bootstrapToken or file must be set")
    if cfg["has_token"] and cfg.get("file"):
        errs.append("discovery: Invalid value: \"\": bootstrapToken and file cannot both be set")
    if cfg.get("file"):
        raise _KubeadmExit("winsim: file discovery (discovery.file / --discovery-file) is not simulated")
    if cfg["has_token"]:
        if not cfg["endpoint"]:
            errs.append("discovery.bootstrapToken: Required value: APIServerEndpoint is not set")
        if not cfg["pins"] and not cfg["skip_verify"]:
            errs.append("discovery.bootstrapToken.caCertHashes: Invalid value: \"\": using token-based discovery "
                        "without caCertHashes can be unsafe. Set unsafeSkipCAVerification as true in your kubeadm "
                        "config file or pass --discovery-token-unsafe-skip-ca-verification flag to continue")
        if not TOKEN_RE.match(cfg["token"]):
            errs.append("discovery.bootstrapToken.token: Invalid value: \"%s\": the bootstrap token is invalid"
                        % cfg["token"])
        if cfg["endpoint"] and not re.match(r"^(\[[^\]]+\]|[^:\[\]]+):[0-9]+$", cfg["endpoint"]):
            errs.append("discovery.bootstrapToken.apiServerEndpoint: Invalid value: \"%s\": address %s: missing "
                        "port in address" % (cfg["endpoint"], cfg["endpoint"]))
        if not TOKEN_RE.match(cfg["tls_token"]):
            errs.append("discovery.tlsBootstrapToken: Invalid value: \"%s\": the bootstrap token is invalid"
                        % cfg["tls_token"])
    if cfg["node_name"] and not re.match(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
                                         cfg["node_name"]):
        errs.append("nodeRegistration.name: Invalid value: \"%s\": a lowercase RFC 1123 subdomain must consist of "
                    "lower case alphanumeric characters, '-' or '.'" % cfg["node_name"])
    # ValidateSocketPath: on Windows only the npipe scheme (DefaultContainerRuntimeURLScheme).
    if not cfg["cri"].startswith("npipe://"):
        errs.append("nodeRegistration.criSocket: Invalid value: \"%s\": only URL scheme \"npipe\" is supported, "
                    "got \"%s\"" % (cfg["cri"], cfg["cri"].split("://")[0] if "://" in cfg["cri"] else ""))
    # ValidateJoinConfiguration: isAbs (util_windows.go: filepath.IsAbs, or a leading \ or /) and a .crt suffix.
    ca = cfg.get("ca_cert_path") or KUBEADM_CA
    if not (re.match(r"^[A-Za-z]:[\\/]|^[\\/]", ca) and ca.endswith(".crt")):
        errs.append("caCertPath: Invalid value: \"%s\": the ca certificate path must be an absolute path" % ca)
    if errs:
        raise _KubeadmExit(errs[0] if len(errs) == 1 else "[%s]" % ", ".join(errs))


def _join(host, version, args, out, warn=None):
    warn = warn or (lambda text: None)
    flags, positional = _parse_kubeadm_flags(args, JOIN_FLAGS, JOIN_BOOLS)
    if "config" in flags:
        # ValidateMixedArguments: pflag visits the set flags in lexicographical order.
        mixed = sorted(f for f in flags if f not in CONFIG_ALLOWED_FLAGS and not f.startswith("skip-"))
        if mixed:
            raise _KubeadmExit("can not mix '--config' with arguments [%s]" % " ".join(mixed))
        # With --config, the file replaces every config flag and the positional endpoint
        # (LoadOrDefaultJoinConfiguration); only --node-name overrides the file (newJoinData).
        cfg = _join_config_from_file(host, flags["config"], warn)
        if flags.get("node-name"):
            cfg["node_name"] = flags["node-name"]
        cfg["cri"] = cfg["cri"] or CRI_CONTAINERD
    else:
        if flags.get("discovery-file"):
            raise _KubeadmExit("winsim: kubeadm join --discovery-file is not simulated")
        if len(positional) != 1:
            raise _KubeadmExit("[discovery] a single API server endpoint is required, got %r" % positional)
        token = flags.get("discovery-token") or flags.get("token") or ""
        cfg = {"has_token": bool(token), "file": None, "endpoint": positional[0], "token": token,
               "tls_token": flags.get("tls-bootstrap-token") or flags.get("token") or "",
               "pins": [p for p in (flags.get("discovery-token-ca-cert-hash") or "").split(",") if p],
               "skip_verify": flags.get("discovery-token-unsafe-skip-ca-verification") == "true",
               "node_name": flags.get("node-name") or "", "cri": flags.get("cri-socket") or CRI_CONTAINERD,
               "ignore": [], "ca_cert_path": KUBEADM_CA}
    _validate_join(cfg)
    endpoint, disc_token, tls_token, pins, skip_verify = (cfg["endpoint"], cfg["token"], cfg["tls_token"],
                                                          cfg["pins"], cfg["skip_verify"])
    m = TOKEN_RE.match(disc_token)
    ignore = set(x.lower() for x in (flags.get("ignore-preflight-errors") or "").split(",") + cfg["ignore"] if x)
    node_name = (cfg["node_name"] or host.state["hostname"]).lower()
    cri = cfg["cri"]

    out("[preflight] Running pre-flight checks")
    errors, warnings = _join_preflight(host, version, cri, ignore, cfg["ca_cert_path"])
    for w in warnings:
        warn(w)
    if errors:
        raise _KubeadmExit("error execution phase preflight: [preflight] Some fatal errors "
                           "occurred:\n\t%s\n[preflight] "
                           "If you know what you are doing, you can make a check non-fatal with "
                           "`--ignore-preflight-errors=...`" % "\n\t".join(errors))

    server = "https://" + endpoint
    cluster_server, ca_pem = _discover(host, server, m.group(1), m.group(2), pins, skip_verify, out)
    api = Api(cluster_server, ca_pem, token=tls_token)
    try:
        # the join's preflight phase reads the cluster's configuration (kubeadm-config, with the kubelet's)
        out("[preflight] Reading configuration from the \"kubeadm-config\" ConfigMap in namespace \"kube-system\"...")
        code, cm = api.request("GET", "/api/v1/namespaces/kube-system/configmaps/kubeadm-config")
        if code != 200:
            raise _KubeadmExit("error execution phase preflight: unable to fetch the kubeadm-config ConfigMap: %s"
                               % cm.get("message"))
        code, kcm = api.request("GET", "/api/v1/namespaces/kube-system/configmaps/kubelet-config")
        if code != 200:
            raise _KubeadmExit("error execution phase preflight: unable to fetch the kubelet-config ConfigMap: %s"
                               % kcm.get("message"))
        # kubelet-start (cmd/kubeadm/app/cmd/phases/join/kubelet.go runKubeletStartJoinPhase): the bootstrap
        # kubeconfig first, the CA only when missing, then the check for a Ready Node of that name -- a
        # failure there leaves bootstrap-kubelet.conf behind (only the wait phase removes it).
        _write(host, ETC + "\\bootstrap-kubelet.conf", _kubeconfig(cluster_server, ca_pem, {"token": tls_token}))
        if not _exists(host, cfg["ca_cert_path"]):
            _write(host, cfg["ca_cert_path"], ca_pem)
        code, node = api.request("GET", "/api/v1/nodes/%s" % node_name)
        if code == 200 and any(c.get("type") == "Ready" and c.get("status") == "True"
                               for c in (node.get("status") or {}).get("conditions") or []):
            raise _KubeadmExit("error execution phase kubelet-start: a Node with name \"%s\" and status "
                               "\"Ready\" already "
                               "exists in the cluster. You must delete the existing Node or change the name of this "
                               "new joining Node" % node_name)
    finally:
        api.close()

    from ansible_collections.ansible.windows.plugins.module_utils import winsim_scm
    svc = winsim_scm.find(host.state, "kubelet")
    # TryStopKubelet (phases/kubelet/kubelet.go): a failure is only a warning.
    if svc is None:
        out("[kubelet-start] Couldn't detect a kubelet service, can't make sure the kubelet not running for a "
            "short period of time while setting up configuration for it.")
    try:
        _kubeadm_service_stop(host, "kubelet")
    except SimError as e:
        warn(_klog_warning("[kubelet-start] WARNING: unable to stop the kubelet service momentarily: [%s]" % e))
    instance = None
    if node_local_cri_socket(version):
        # WriteInstanceConfigToDisk (phases/kubelet/config.go): containerRuntimeEndpoint as Go's %q writes it;
        # WriteConfigToDisk then applies it to config.yaml as a patch.
        instance = "containerRuntimeEndpoint: %s\n" % go_quote(cri)
        out("[kubelet-start] Writing kubelet configuration to file \"%s\\instance-config.yaml\""
            % KUBEADM_KUBELET_DIR)
        _write(host, KUBELET_DIR + "\\instance-config.yaml", instance)
    out("[kubelet-start] Writing kubelet configuration to file \"%s\\config.yaml\"" % KUBEADM_KUBELET_DIR)
    _write(host, KUBELET_DIR + "\\config.yaml", _windows_kubelet_config(kcm["data"]["kubelet"], instance))
    # WriteKubeletDynamicEnvFile (phases/kubelet/flags.go buildKubeletArgsCommon): --register-with-taints (a
    # worker's join sets none) and --hostname-override when the node name is not the lower-cased host name;
    # the CRI flag only before NodeLocalCRISocket (v1.36.3 flags.go).
    kubelet_args = [] if instance else ["--container-runtime-endpoint=" + cri]
    if node_name != host.state["hostname"].lower():
        kubelet_args.append("--hostname-override=" + node_name)
    out("[kubelet-start] Writing kubelet environment file with flags to file \"%s\\kubeadm-flags.env\""
        % KUBEADM_KUBELET_DIR)
    _write(host, KUBELET_DIR + "\\kubeadm-flags.env", "KUBELET_KUBEADM_ARGS=%s\n" % go_quote(" ".join(kubelet_args)))

    out("[kubelet-start] Starting the kubelet")
    # TryStartKubelet: ServiceRestart = ServiceStop, then ServiceStart; a failure is only a warning.
    if svc is None:
        out("[kubelet-start] Couldn't detect a kubelet service, can't make sure the kubelet is running properly.")
    try:
        try:
            _kubeadm_service_stop(host, "kubelet")
        except SimError as e:
            raise SimError("couldn't stop service kubelet: %s" % e) from None
        try:
            _kubeadm_service_start(host, "kubelet")
        except SimError as e:
            raise SimError("couldn't start service kubelet: %s" % e) from None
    except SimError as e:
        warn(_klog_warning("[kubelet-start] WARNING: unable to start the kubelet service: [%s]" % e))
        out("[kubelet-start] Please ensure kubelet is reloaded and running manually.")

    # kubelet-wait-bootstrap (runKubeletWaitBootstrapPhase): bootstrap-kubelet.conf is removed by a deferred
    # os.Remove, so also when the wait fails.
    try:
        out("[kubelet-check] Waiting for a healthy kubelet at http://127.0.0.1:10248/healthz. This can take up to "
            "4m0s")
        # The simulated kubelet bootstraps inside its start; one that exited after Running (a crash record)
        # never answers /healthz, which kubeadm reports after KubeletHealthCheck (4 min).
        svc = winsim_scm.find(host.state, "kubelet")
        if svc is None or svc.get("crash") or winsim_scm.observe(host, svc)[0] != "Running":
            raise _KubeadmExit("error execution phase kubelet-wait-bootstrap: failed while waiting for the kubelet "
                               "to start: The HTTP call equal to 'curl -sSL http://127.0.0.1:10248/healthz' "
                               "returned error: Get \"http://127.0.0.1:10248/healthz\": dial tcp 127.0.0.1:10248: "
                               "connectex: No connection could be made because the target machine actively refused "
                               "it.")
        out("[kubelet-start] Waiting for the kubelet to perform the TLS Bootstrap")
        if not _exists(host, ETC + "\\kubelet.conf"):
            raise _KubeadmExit("error execution phase kubelet-wait-bootstrap: failed while waiting for TLS "
                               "bootstrap: context deadline exceeded")
    finally:
        local = host.local_path(ETC + "\\bootstrap-kubelet.conf")
        if os.path.exists(local):
            os.remove(local)
    out("\nThis node has joined the cluster:\n* Certificate signing request was sent to apiserver and a response was "
        "received.\n* The Kubelet was informed of the new secure connection details.")


def _join_preflight(host, version, cri, ignore, ca_cert_path=KUBEADM_CA):
    """JoinNodeChecks (cmd/kubeadm/app/preflight/checks.go v1.37.2) in their order, as kubeadm.exe names and
    words them on Windows (checks_windows.go, checks_other.go: no swap or IPv4 checks). Returns ([ERROR ...]
    texts, [WARNING ...] texts) after --ignore-preflight-errors (names compared lower-cased)."""
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_scm
    found = []  # (name, error or None, warning or None)
    for name in ("kubelet.conf", "bootstrap-kubelet.conf"):
        shown = KUBEADM_ETC + "\\" + name
        if _exists(host, ETC + "\\" + name):
            found.append((_check_name_file(shown), "%s already exists" % shown, None))
    pipe = cri.replace("npipe:////./pipe/", "\\\\.\\pipe\\")
    if pipe not in host.state.get("pipes", []):
        # ContainerRuntimeCheck and ContainerRuntimeVersionCheck both connect first and fail alike (checks.go
        # addCommonChecks, "could not connect to the container runtime"; util/runtime/runtime.go; cri-client
        # remote_runtime.go). The real kubeadm.exe under Wine prints exactly these two (test_wine_kubeadm.py);
        # Wine words the last part "File not found.", Windows as ERROR_FILE_NOT_FOUND's text below.
        connect = ("could not connect to the container runtime: failed to create new CRI runtime service: validate "
                   "service connection: validate CRI v1 runtime API for endpoint \"%s\": rpc error: code = "
                   "Unavailable desc = connection error: desc = \"transport: Error while dialing: open %s: The "
                   "system cannot find the file specified.\"" % (cri, cri.replace("npipe://", "")))
        found += [("CRI", connect, None), ("ContainerRuntimeVersion", connect, None)]
    # addExecChecks (checks_windows.go): xcopy must be on the Path of the kubeadm process.
    if binaries.look_path(host, "xcopy", binaries.session_path(host))[1] is None:
        found.append(("FileExisting-xcopy", "xcopy not found in system path", None))
    kubelet_errors = _kubelet_version_errors(host, set(), version)
    if "SystemVerification" in kubelet_errors:
        found.append(("SystemVerification", kubelet_errors["SystemVerification"], None))
    if "KubeletVersion" in kubelet_errors:
        found.append(("KubeletVersion", kubelet_errors["KubeletVersion"], None))
    # ServiceCheck{kubelet, CheckIfActive: false}: warnings only.
    svc = winsim_scm.find(host.state, "kubelet")
    if svc is None:
        found.append(("Service-kubelet", None, "kubelet service does not exist"))
    elif svc["start"] == 4:
        found.append(("Service-kubelet", None, "kubelet service is not enabled, please run 'Set-Service 'kubelet' "
                                               "-StartupType Automatic'"))
    # PortOpenCheck{10250}: a kubelet that runs (and has not exited after Running) holds its port.
    if svc is not None and not svc.get("crash") and winsim_scm.observe(host, svc)[0] == "Running":
        found.append(("Port-10250", "Port 10250 is in use", None))
    # FileAvailableCheck{Path: cfg.CACertPath}, named and worded with the path as the configuration gives it.
    if _exists(host, ca_cert_path):
        found.append((_check_name_file(ca_cert_path), "%s already exists" % ca_cert_path, None))
    errors, warnings = [], []
    for name, error, warning in found:
        if error and (name.lower() in ignore or "all" in ignore):
            warning, error = error, None
        if warning:
            warnings.append("\t[WARNING %s]: %s" % (name, warning))
        if error:
            errors.append("[ERROR %s]: %s" % (name, error))
    return errors, warnings


def _discover(host, server, token_id, token_secret, pins, skip_verify, out):
    """Token discovery: fetch cluster-info insecurely, verify its JWS and the CA pin, refetch securely."""
    deadline = time.time() + _timeout(host, "discovery_timeout", 60)
    last = "no answer"
    out("[discovery] Trying to connect to API Server \"%s\"" % server.replace("https://", ""))
    while True:
        api = Api(server)
        try:
            code, cm = api.request("GET", "/api/v1/namespaces/kube-public/configmaps/cluster-info")
        except SimError as e:
            code, cm = 0, {"message": str(e)}
        finally:
            api.close()
        if code == 200:
            data = cm.get("data") or {}
            sig = data.get("jws-kubeconfig-" + token_id)
            if sig:
                break
            last = "token id \"%s\" is invalid for this cluster or it has expired. Use \"kubeadm token create\" " \
                   "on the " \
                   "control-plane node to create a new valid token" % token_id
        else:
            last = cm.get("message")
        if time.time() > deadline:
            raise _KubeadmExit("error execution phase preflight: couldn't validate the identity of the API Server: %s"
                               % last)
        time.sleep(2)
    kubeconfig = data["kubeconfig"]
    header = _b64url(json.dumps({"alg": "HS256", "kid": token_id}, separators=(",", ":")).encode())
    parts = sig.split(".")
    if len(parts) != 3 or parts[1]:
        raise _KubeadmExit("error execution phase preflight: couldn't validate the identity of the API Server: "
                           "malformed JWS signature")
    signing_input = (parts[0] + "." + _b64url(kubeconfig.encode())).encode()
    expected = _b64url(hmac.new(token_secret.encode(), signing_input, hashlib.sha256).digest())
    if not hmac.compare_digest(expected, parts[2]) or json.loads(
            base64.urlsafe_b64decode(parts[0] + "=" * (-len(parts[0]) % 4))).get("kid") != token_id:
        raise _KubeadmExit("error execution phase preflight: couldn't validate the identity of the API Server: "
                           "failed to "
                           "verify JWS signature of received cluster info object, can't trust this API Server")
    del header
    cfg = yaml.safe_load(kubeconfig)
    cluster = cfg["clusters"][0]["cluster"]
    ca_pem = base64.b64decode(cluster["certificate-authority-data"])
    if not skip_verify:
        have = ca_pins(ca_pem)
        if not set(p.lower() for p in pins) & set(have):
            raise _KubeadmExit("error execution phase preflight: couldn't validate the identity of the API Server: "
                               "cluster CA found in cluster-info ConfigMap is invalid: none of the public keys "
                               "\"%s\" are "
                               "pinned" % ",".join(have))
    secure = Api(server, ca_pem)
    try:
        code, cm2 = secure.request("GET", "/api/v1/namespaces/kube-public/configmaps/cluster-info")
    finally:
        secure.close()
    if code != 200 or cm2["data"]["kubeconfig"] != kubeconfig:
        raise _KubeadmExit("error execution phase preflight: couldn't validate the identity of the API Server: the "
                           "second cluster-info fetch did not match")
    out("[discovery] Cluster info signature and contents are valid and TLS certificate validates against pinned roots, "
        "will use API Server \"%s\"" % cluster["server"].replace("https://", ""))
    return cluster["server"], ca_pem


def _windows_kubelet_config(text, instance=None):
    """kubeadm's Windows mutation of the KubeletConfiguration (componentconfigs/kubelet_windows.go
    mutatePaths: staticPodPath, authentication.x509.clientCAFile and resolvConf gain the system drive, or
    resolvConf none at all), then instance-config.yaml applied as a patch (phases/kubelet/config.go
    WriteConfigToDisk)."""
    cfg = yaml.safe_load(text)

    def fix(p):
        return "C:" + p.replace("/", "\\") if isinstance(p, str) and p.startswith("/") else p
    if cfg.get("staticPodPath"):
        cfg["staticPodPath"] = fix(cfg["staticPodPath"])
    x509 = ((cfg.get("authentication") or {}).get("x509") or {})
    if x509.get("clientCAFile"):
        x509["clientCAFile"] = fix(x509["clientCAFile"])
    cfg["resolvConf"] = ""
    if instance:
        cfg.update(yaml.safe_load(instance) or {})
    return yaml.safe_dump(cfg, default_flow_style=False)


def _reset(host, version, args, out, stdin, warn=None):
    warn = warn or (lambda text: None)
    flags, _ = _parse_kubeadm_flags(args, {"cri-socket", "ignore-preflight-errors", "v", "cert-dir", "kubeconfig",
                                           "skip-phases"}, {"force", "f", "dry-run", "cleanup-tmp-dir"})
    if flags.get("force") != "true" and flags.get("f") != "true" and (stdin or "").strip().lower() not in ("y", "yes"):
        raise _KubeadmExit("won't proceed; the user didn't answer (Y|n) in order to continue")
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_scm
    # cmd/kubeadm/app/cmd/phases/reset/cleanupnode.go: ServiceStop, a failure only a warning; the kubelet then
    # keeps running while its directories are emptied.
    out("[reset] Stopping the kubelet service")
    if winsim_scm.find(host.state, "kubelet"):
        try:
            _kubeadm_service_stop(host, "kubelet")
        except SimError as e:
            warn(_klog_warning("[reset] The kubelet service could not be stopped by kubeadm: [%s]" % e))
            warn(_klog_warning("[reset] Please ensure kubelet is stopped manually"))
    if _real_reset(host, version, args, out, warn):
        return
    for d in (ETCD_DIR, ETC + "\\manifests", KUBELET_DIR, ETC + "\\pki"):
        local = host.local_path(d)
        if os.path.isdir(local):
            out("[reset] Deleting contents of directories: [%s]" % d)
            for entry in os.listdir(local):
                p = os.path.join(local, entry)
                shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p)
    for f in ("admin.conf", "super-admin.conf", "kubelet.conf", "bootstrap-kubelet.conf", "controller-manager.conf",
              "scheduler.conf"):
        local = host.local_path(ETC + "\\" + f)
        if os.path.exists(local):
            os.remove(local)
    out("[reset] Deleted files; the reset process does not clean CNI configuration or HNS state")


# cleanupnode.go and removeetcdmember.go word it differently
_WINE_DELETE = re.compile(r'Failed to delete contents of (?:the etcd directory: )?"([^"]+)"(?: directory)?[:,] '
                          r'(?:error: )?unlinkat .*: Invalid function\.')


def _empty_dir(local):
    if os.path.isdir(local):
        for entry in os.listdir(local):
            p = os.path.join(local, entry)
            shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p)


# klog's header (Lmmdd hh:mm:ss.uuuuuu pid file:line]): warnings and errors, which kubeadm writes to stderr
_KLOG = re.compile(r"^[WE]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ \S+\] ")


def _real_kubeadm(host, cache, version, argv, kubelet_version=None):
    """The real kubeadm.exe under Wine on a copy of the host's C:\\etc\\kubernetes, C:\\var\\lib\\kubelet and
    C:\\var\\lib\\etcd (reset on a worker empties etcd's default data directory: removeetcdmember.go, no kubeadm
    config), with the stand-in CRI on the runtime's pipe when the host has it; what it deleted, wrote or
    changed there is done on the host too."""
    trees = {d: host.local_path(d) for d in (ETC, KUBELET_DIR, ETCD_DIR)}
    cri = winsim_wine.CRI_PIPE in host.state.get("pipes", [])
    res = winsim_wine.kubeadm_with_cri(cache, version, argv, cri=cri, timeout=180, trees=trees,
                                       kubelet_version=kubelet_version)
    for win_path in res["gone"]:
        local = host.local_path(win_path)
        if os.path.isdir(local) and not os.path.islink(local):
            shutil.rmtree(local)
        elif os.path.lexists(local):
            os.remove(local)
    for win_path, data in res["changed"].items():
        _write(host, win_path, data)
    return res


def _real_reset(host, version, args, out, warn):
    """The rest of `kubeadm reset` (after the kubelet's stop, which the simulated SCM did above: Wine's
    services.exe has no kubelet) by the real kubeadm.exe of this version under Wine, on a copy of the host's
    C:\\etc\\kubernetes and C:\\var\\lib\\kubelet, with the stand-in CRI on the runtime's pipe when the host has
    it; what it deleted is deleted on the host. False when the lab has no Windows kubeadm of this version."""
    cache = host.config().get("lab_cache")
    if not winsim_wine.binary(cache, version, "kubeadm"):
        return False
    res = _real_kubeadm(host, cache, version, ["reset"] + list(args))
    for line in res["output"].splitlines():
        # cleanupnode.go prints its stop and, failing under Wine, warns; the simulated SCM stopped it above
        if "Stopping the kubelet service" in line or "The kubelet service could not be stopped" in line \
                or "Please ensure kubelet is stopped manually" in line:
            continue
        wine_limit = _WINE_DELETE.search(line)
        if wine_limit:
            # Go's RemoveAll tries a POSIX-semantics delete first (os/at_windows.go Deleteat) and falls back only
            # on three error codes; on Windows a directory fails the file-only open (EISDIR) and is emptied
            # recursively, under Wine it gets past that and fails with "Invalid function." (observed; Wine's
            # STATUS_NOT_IMPLEMENTED is the likely cause). The rest of that directory is emptied here, as
            # kubeadm's CleanDir does on Windows (lab/README.md, "The real kubeadm.exe").
            _empty_dir(host.local_path("C:" + wine_limit.group(1).replace("\\\\", "\\").replace("/", "\\")))
            continue
        (warn if _KLOG.match(line) else out)(line)
    if res["rc"] != 0:
        raise _KubeadmExit("kubeadm.exe reset (real, under Wine) exited %s" % res["rc"])
    return True


def _upgrade_node(host, version, args, out, warn=None):
    warn = warn or (lambda text: None)
    flags, _positional = _parse_kubeadm_flags(args, {"v", "patches", "skip-phases", "ignore-preflight-errors"},
                                              {"dry-run", "certificate-renewal", "etcd-upgrade"})
    # cmd/kubeadm/app/cmd/phases/upgrade/node/preflight.go runs RunUpgradeChecks: SystemVerification.
    ignore = set((flags.get("ignore-preflight-errors") or "").lower().split(","))
    errors = _kubelet_version_errors(host, ignore)
    if "SystemVerification" in errors:
        raise _KubeadmExit("error execution phase preflight: [preflight] Some fatal errors occurred:\n\t"
                           "[ERROR SystemVerification]: %s\n[preflight] If you know what you are doing, you can "
                           "make a check non-fatal with `--ignore-preflight-errors=...`" % errors["SystemVerification"])
    if not _exists(host, ETC + "\\kubelet.conf"):
        raise _KubeadmExit("error execution phase preflight: couldn't create a Kubernetes client from file "
                           "\"%s\": open "
                           "%s: The system cannot find the file specified." % (KUBEADM_ETC + "\\kubelet.conf",
                                                                                KUBEADM_ETC + "\\kubelet.conf"))
    if _real_upgrade_node(host, version, args, out, warn):
        return
    api = _api_from_kubeconfig(host, ETC + "\\kubelet.conf")
    try:
        code, kcm = api.request("GET", "/api/v1/namespaces/kube-system/configmaps/kubelet-config")
    finally:
        api.close()
    if code != 200:
        raise _KubeadmExit("error execution phase kubelet-config: %s" % kcm.get("message"))
    # phases/upgrade/postupgrade.go WriteKubeletConfigFiles (v1.37.2): config.yaml backed up to
    # \etc\kubernetes\tmp\kubeadm-kubelet-config-<time> (constants.CreateTimestampDir), instance-config.yaml
    # created when missing with the node's CRI socket (util/config/cluster.go GetNodeRegistration: auto-detected
    # among the known pipes, else the default), then config.yaml written with it applied as a patch.
    stamp = datetime.datetime.utcfromtimestamp(_host_time(host)).strftime("%Y-%m-%d-%H-%M-%S")
    backup = ETC + "\\tmp\\kubeadm-kubelet-config-" + stamp
    warn(_klog_warning("Using temporary directory %s for kubelet config. To override it set the environment "
                       "variable KUBEADM_UPGRADE_DRYRUN_DIR" % backup.replace(ETC, KUBEADM_ETC)))
    if os.path.isdir(host.local_path(backup)):
        raise _KubeadmExit("error execution phase kubelet-config: could not create timestamp directory: mkdir %s: "
                           "Cannot create a file when that file already exists." % backup.replace(ETC, KUBEADM_ETC))
    os.makedirs(host.local_path(backup))
    out("[upgrade] Backing up kubelet config file to %s\\config.yaml" % backup.replace(ETC, KUBEADM_ETC))
    if not _exists(host, KUBELET_DIR + "\\config.yaml"):
        raise _KubeadmExit("error execution phase kubelet-config: error backing up the kubelet config file: open "
                           "%s\\config.yaml: The system cannot find the file specified." % KUBEADM_KUBELET_DIR)
    _write(host, backup + "\\config.yaml", _read(host, KUBELET_DIR + "\\config.yaml"))
    instance_path = KUBELET_DIR + "\\instance-config.yaml"
    if node_local_cri_socket(version) and not _exists(host, instance_path):
        pipes = host.state.get("pipes", [])
        cri = next((s for s in (CRI_CONTAINERD, "npipe:////./pipe/cri-dockerd")
                    if s.replace("npipe:////./pipe/", "\\\\.\\pipe\\") in pipes), CRI_CONTAINERD)
        warn(_klog_warning("The kubelet instance configuration file %s\\instance-config.yaml was not found. Creating "
                           "a new one with defaults. Please verify its contents!" % KUBEADM_KUBELET_DIR))
        _write(host, instance_path, "containerRuntimeEndpoint: %s\n" % go_quote(cri))
    instance = _read(host, instance_path).decode("utf-8") if _exists(host, instance_path) else None
    out("[kubelet-start] Writing kubelet configuration to file \"%s\\config.yaml\"" % KUBEADM_KUBELET_DIR)
    _write(host, KUBELET_DIR + "\\config.yaml", _windows_kubelet_config(kcm["data"]["kubelet"], instance))
    out("[upgrade/kubelet-config] The kubelet configuration for this node was successfully upgraded!")


def _real_upgrade_node(host, version, args, out, warn):
    """After the preflight above (the host's own kubelet on its Path), the rest of `kubeadm upgrade node` by the
    real kubeadm.exe of this version under Wine, with the host's kubelet version on its PATH, on a copy of the
    host's directories (_real_kubeadm): it reads the cluster through the node's kubelet.conf, backs up and
    writes the kubelet's config. False when the lab has no Windows kubeadm or kubelet of those versions."""
    cache = host.config().get("lab_cache")
    win, local = binaries.look_path(host, "kubelet", binaries.session_path(host))
    marker = binaries.read_marker(local) if local else None
    kubelet_version = marker[1] if marker else version
    if not winsim_wine.binary(cache, version, "kubeadm") or not winsim_wine.binary(cache, kubelet_version, "kubelet"):
        return False
    res = _real_kubeadm(host, cache, version, ["upgrade", "node"] + list(args), kubelet_version=kubelet_version)
    for line in res["output"].splitlines():
        (warn if _KLOG.match(line) else out)(line)
    if res["rc"] != 0:
        raise _KubeadmExit("kubeadm.exe upgrade node (real, under Wine) exited %s" % res["rc"])
    return True


def _host_time(host):
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_scm
    return winsim_scm.clock(host)


# --- kubelet --------------------------------------------------------------------------------
@binaries.command("kubelet")
def kubelet_cli(host, version, args, stdin):
    if args[:1] == ["--version"]:
        return 0, "Kubernetes %s\n" % version, ""
    return 1, "", "winsim: only 'kubelet --version' runs outside the service\n"


def kubelet_flag_spec(host, version):
    """{flag: takes_value} of the real kubelet of this version, or None when the lab has no list."""
    cache = host.config().get("lab_cache")
    path = os.path.join(cache, version, "kubelet-flags.txt") if cache else None
    if not path or not os.path.exists(path):
        return None
    spec = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"^\s+(?:-\w, )?--([a-z0-9][a-z0-9-]*)(?: ([A-Za-z0-9.]+))?(?:\s{2,}|$)", line)
            if m:
                spec[m.group(1)] = m.group(2) is not None
    return spec or None


def kubelet_input_files(host, args):
    """What the kubelet reads before Run (cmd/kubelet/app/server.go v1.37.2): --config, the
    --config-dir drop-ins (*.conf), the serving certificate and key (InitializeTLS), and the client CA
    bundle, which v1.37.2 reads later, in run()'s BuildAuth (_client_ca_check), copied along all the same."""
    config_path = winsim_wine.flag_value(args, "config")
    paths = [config_path] + [winsim_wine.flag_value(args, n)
                             for n in ("client-ca-file", "tls-cert-file", "tls-private-key-file")]
    files = winsim_wine.host_files(host, paths)
    if config_path in files:
        try:
            config = yaml.safe_load(files[config_path]) or {}
        except yaml.YAMLError:
            config = {}
        if isinstance(config, dict):
            x509 = ((config.get("authentication") or {}).get("x509") or {})
            files.update(winsim_wine.host_files(host, [x509.get("clientCAFile"), config.get("tlsCertFile"),
                                            config.get("tlsPrivateKeyFile")]))
    dropins = winsim_wine.flag_value(args, "config-dir")
    if dropins:
        try:
            local = host.local_path(dropins)
        except SimError:
            local = None
        if local and os.path.isdir(local):
            names = sorted(os.listdir(local))
            files.update(winsim_wine.host_files(host, [dropins.rstrip("\\") + "\\" + n for n in names]))
    return files


def _kubelet_real_check(host, version, args):
    """Run the command line through the real kubelet.exe of this version under Wine (winsim_wine):
    True when it did, raising the failed start when the kubelet refused it; False when the lab
    has no Windows kubelet of this version."""
    cache = host.config().get("lab_cache")
    if not winsim_wine.binary(cache, version, "kubelet"):
        return False
    argv = list(args)
    if winsim_wine.flag_value(argv, "windows-service") is None and "--windows-service" not in argv:
        # The stop point is initForOS's service dispatcher (winsim_wine); without the flag the
        # service times out below anyway (1053).
        argv.append("--windows-service")
    err = winsim_wine.kubelet_validate(cache, version, argv, kubelet_input_files(host, args))
    if err:
        # The kubelet exits before initForOS reports SERVICE_RUNNING: the start fails.
        raise SimError("1067: The process terminated unexpectedly. (kubelet %s, real kubelet.exe under Wine: %s)"
                       % (version, err))
    return True


def _kubelet_service_start(host, version, svc, args):
    real = _kubelet_real_check(host, version, args)
    spec = kubelet_flag_spec(host, version)
    flags = {}
    i = 0
    while i < len(args):
        a = args[i]
        if not a.startswith("-"):
            raise SimError("1067: The process terminated unexpectedly. (kubelet: unexpected argument %r)" % a)
        name, sep, value = a.lstrip("-").partition("=")
        if not real and spec is not None and name not in spec and name not in WINDOWS_ONLY_FLAGS:
            raise SimError("1067: The process terminated unexpectedly. (kubelet %s: unknown flag: --%s)"
                           % (version, name))
        if not sep and spec is not None and spec.get(name):
            if i + 1 >= len(args):
                raise SimError("1067: The process terminated unexpectedly. (flag needs an argument: --%s)" % name)
            value = args[i + 1]
            i += 1
        flags[name] = value if (sep or (spec and spec.get(name))) else "true"
        i += 1
    if spec is None and not real:
        host.state.setdefault("notes", []).append("kubelet flags not checked: no kubelet-flags.txt for %s" % version)
    if flags.get("windows-service") not in ("true",):
        # Without --windows-service the kubelet never reports to the SCM.
        raise SimError("1053: The service did not respond to the start or control request in a timely fashion.")
    config = {}
    if flags.get("config"):
        if not _exists(host, flags["config"]):
            raise SimError("1067: The process terminated unexpectedly. (failed to load kubelet config file, path: %s, "
                           "error: open %s: The system cannot find the file specified.)"
                           % (flags["config"], flags["config"]))
        config = yaml.safe_load(_read(host, flags["config"])) or {}
    if _minor(version) < (1, 36):
        # Up to 1.35 the client CA is read in RunE's UnsecuredDependencies (InitializeTLS, certutil.NewPool), before
        # Run and its initForOS: the kubelet exits before it reports to the SCM (kubernetes v1.35.0
        # cmd/kubelet/app/server.go), so the start fails and there is no TLS bootstrap.
        _client_ca_check(host, flags, config, before_run=True)
    cri = flags.get("container-runtime-endpoint") or config.get("containerRuntimeEndpoint") or CRI_CONTAINERD
    pipe = cri.replace("npipe:////./pipe/", "\\\\.\\pipe\\").replace("npipe://", "")
    # From here on the kubelet has reported Running (pkg/windows/service Execute, called from
    # initForOS before Run): a failure is an exit after Running, not a failed start.
    if pipe not in host.state.get("pipes", []):
        raise binaries.ExitsAfterRunning("failed to run Kubelet: validate service connection: validate CRI v1 runtime "
                                         "API for endpoint \"%s\": The system cannot find the file specified." % cri)
    kubeconfig = flags.get("kubeconfig")
    bootstrap = flags.get("bootstrap-kubeconfig")
    cert_dir = flags.get("cert-dir") or KUBELET_DIR + "\\pki"
    node_name = (flags.get("hostname-override") or host.state["hostname"]).lower()
    if not kubeconfig:
        return  # standalone mode: runs, registers nothing
    try:
        if not _exists(host, kubeconfig):
            if not bootstrap or not _exists(host, bootstrap):
                raise binaries.ExitsAfterRunning("failed to run Kubelet: unable to load bootstrap kubeconfig: stat %s: "
                                                 "The system cannot find the file specified." % bootstrap)
            _tls_bootstrap(host, bootstrap, kubeconfig, cert_dir, node_name)
        else:
            _client_certificate_rotation(host, kubeconfig, cert_dir, node_name, flags, config)
        if _minor(version) >= (1, 36):
            _client_ca_check(host, flags, config)
        _register_node(host, version, kubeconfig, node_name, flags)
        winsim_kubelet_status.registered(host, node_name, kubeconfig, pipe)
    except binaries.ExitsAfterRunning:
        raise
    except SimError as e:
        # A real kubelet keeps retrying while running; record why it is not registered.
        host.state.setdefault("notes", []).append("kubelet: %s" % e)
        if str(e).startswith("1067"):
            raise


def _client_ca_check(host, flags, config, before_run=False):
    """The kubelet's client CA bundle. From 1.36 it is loaded after TLS bootstrap and before the kubelet registers
    or serves healthz (kubernetes v1.37.2 cmd/kubelet/app/server.go run: bootstrap, then BuildAuth; auth.go
    BuildAuthn -> dynamiccertificates.NewDynamicCAContentFromFile -> loadCABundle, os.ReadFile): a missing file
    ends a kubelet that already reported Running. ``before_run`` (up to 1.35): read by InitializeTLS in RunE,
    before Run, so the start itself fails. kubeadm join writes the CA only to its caCertPath, so a clientCAFile
    elsewhere (a kubespray cluster's /etc/kubernetes/ssl) is missing unless the JoinConfiguration points there."""
    x509 = ((config.get("authentication") or {}).get("x509") or {})
    path = flags.get("client-ca-file") or x509.get("clientCAFile")
    if not path:
        return
    shown = path
    if path.startswith("\\") and not path.startswith("\\\\"):
        # Rooted without a drive (kubeadm's mutatePaths joins the drive of kubeadm.exe, which the real kubeadm.exe
        # under Wine reports without one): Windows resolves it on the process's current drive, the system drive
        # of a service (its working directory is %SystemRoot%\system32).
        path = "C:" + path
    if not _exists(host, path):
        # Windows: ERROR_PATH_NOT_FOUND when the directory is missing too, else ERROR_FILE_NOT_FOUND.
        what = "file" if os.path.isdir(os.path.dirname(host.local_path(path))) else "path"
        error = "open %s: The system cannot find the %s specified." % (shown, what)
    elif not _read(host, path):
        # loadCABundle refuses an empty bundle (dynamiccertificates/dynamic_cafile_content.go); certutil.NewPool
        # finds no certificate in it
        error = ("data does not contain any valid RSA or ECDSA certificates" if before_run
                 else 'missing content for CA bundle "client-ca-bundle::%s"' % shown)
    else:
        return
    if before_run:
        raise SimError("1067: The process terminated unexpectedly. (failed to construct kubelet dependencies: "
                       "unable to load client CA file %s: %s)" % (shown, error))
    raise binaries.ExitsAfterRunning("failed to run Kubelet: %s" % error)


def _client_certificate_csr(host, api, node_name, cert_dir, what):
    """A new key and a CSR for the kubelet's client certificate (signer kube-apiserver-client-kubelet, subject
    system:node:<name> in system:nodes: k8s.io/kubernetes pkg/kubelet/certificate/kubelet.go
    NewKubeletClientCertificateManager's template and usages), sent with ``api`` and awaited until the
    controller-manager approved and signed it; the certificate and key written as kubelet-client-<time>.pem and
    kubelet-client-current.pem (client-go util/certificate/certificate_store.go; the real current file is a link to
    the dated one, here a copy). Returns the path of the current file."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    csr = x509.CertificateSigningRequestBuilder().subject_name(x509.Name([
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, "system:nodes"),
        x509.NameAttribute(NameOID.COMMON_NAME, "system:node:" + node_name),
    ])).sign(key, hashes.SHA256())
    code, created = api.request("POST", "/apis/certificates.k8s.io/v1/certificatesigningrequests", {
        "apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
        "metadata": {"generateName": "csr-"},
        "spec": {"request": base64.b64encode(csr.public_bytes(serialization.Encoding.PEM)).decode(),
                 "signerName": "kubernetes.io/kube-apiserver-client-kubelet",
                 "usages": ["digital signature", "client auth"]}})
    if code not in (200, 201):
        raise SimError("%s: cannot create certificate signing request: %s" % (what, created.get("message")))
    name = created["metadata"]["name"]
    deadline = time.time() + _timeout(host, "csr_timeout", 60)
    cert = None
    while time.time() < deadline:
        code, got = api.request("GET", "/apis/certificates.k8s.io/v1/certificatesigningrequests/" + name)
        cert = (got.get("status") or {}).get("certificate") if code == 200 else None
        if cert:
            break
        time.sleep(1)
    if not cert:
        raise SimError("%s: CSR %s was not approved and signed in time" % (what, name))
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption())
    stamp = datetime.datetime.fromtimestamp(_host_time(host), datetime.timezone.utc).strftime("%Y-%m-%d-%H-%M-%S")
    _write(host, cert_dir + "\\kubelet-client-%s.pem" % stamp, base64.b64decode(cert) + key_pem)
    current = cert_dir + "\\kubelet-client-current.pem"
    _write(host, current, base64.b64decode(cert) + key_pem)
    host.state.setdefault("kubelet_csrs", []).append({"name": name, "what": what, "at": _host_time(host)})
    return current


def _tls_bootstrap(host, bootstrap, kubeconfig, cert_dir, node_name):
    server, ca_pem, user = _load_kubeconfig(host, bootstrap)
    api = Api(server, ca_pem, token=user.get("token"))
    try:
        current = _client_certificate_csr(host, api, node_name, cert_dir, "kubelet TLS bootstrap")
    finally:
        api.close()
    _write(host, kubeconfig, _kubeconfig(server, ca_pem, {"client-certificate": current, "client-key": current}))


def rotation_deadline(not_before, not_after, fraction=None):
    """When client-go's certificate manager renews a certificate valid from ``not_before`` to ``not_after`` (epoch
    seconds): at a jittered 70-90 % of its life (k8s.io/client-go util/certificate/certificate_manager.go
    nextRotationDeadline and jitteryDuration: wait.Jitter(total, 0.2) - 0.3 * total). ``fraction`` in [0, 1] is
    the jitter's random draw (random when None)."""
    import random
    total = not_after - not_before
    draw = random.random() if fraction is None else fraction
    return not_before + total * (1 + 0.2 * draw) - 0.3 * total


def _client_certificate_rotation(host, kubeconfig, cert_dir, node_name, flags, config):
    """The kubelet's client certificate manager at start (pkg/kubelet/certificate/kubelet.go, client-go
    certificate_manager.go Start): with rotateCertificates (the config's, or --rotate-certificates; the kubelet's
    default is false), a certificate past its rotation deadline (the host's clock) is renewed at once through a CSR
    sent with that certificate (the csrapprover approves it as selfnodeclient when the requester may create
    certificatesigningrequests/selfnodeclient: kubeadm's ClusterRoleBinding kubeadm:node-autoapprove-certificate-
    rotation). A renewal that is not approved leaves the kubelet running with the certificate it has (client-go
    retries with a backoff). An expired certificate is not used: the kubelet falls back to its bootstrap kubeconfig
    (pkg/kubelet/certificate/bootstrap/bootstrap.go LoadClientCert, isClientConfigStillValid), which kubeadm join
    removed, so it exits (the node must join again). Not modelled: a renewal while the kubelet keeps running (the
    lab's host clock moves only when a test moves it; a start after the move renews)."""
    from cryptography import x509
    current = cert_dir + "\\kubelet-client-current.pem"
    try:
        server, ca_pem, user = _load_kubeconfig(host, kubeconfig)
        if user.get("client-certificate") != current or not _exists(host, current):
            return  # not the kubelet's rotating store (a certificate embedded in the kubeconfig)
        pem = _read(host, current)
        cert = x509.load_pem_x509_certificate(pem)
    except (SimError, ValueError, KeyError, TypeError):
        return
    now = _host_time(host)
    not_before = cert.not_valid_before_utc.timestamp()
    not_after = cert.not_valid_after_utc.timestamp()
    if now >= not_after:
        raise binaries.ExitsAfterRunning(
            "failed to run Kubelet: unable to load bootstrap kubeconfig: stat %s: The system cannot find the file "
            "specified. (the client certificate in %s expired at %s)"
            % (flags.get("bootstrap-kubeconfig") or ETC + "\\bootstrap-kubelet.conf", kubeconfig,
               cert.not_valid_after_utc.isoformat()))
    rotate = config.get("rotateCertificates") is True or flags.get("rotate-certificates") in ("true", "1", "True")
    if not rotate or now < rotation_deadline(not_before, not_after):
        return
    api = Api(server, ca_pem, cert_pem=pem, key_pem=pem)
    try:
        _client_certificate_csr(host, api, node_name, cert_dir, "kubelet client certificate rotation")
    except SimError as e:
        host.state.setdefault("notes", []).append("kubelet: %s" % e)
    finally:
        api.close()


def _register_node(host, version, kubeconfig, node_name, flags):
    build = host.state.get("build")
    labels = {"kubernetes.io/os": "windows", "kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "windows",
              "beta.kubernetes.io/arch": "amd64", "kubernetes.io/hostname": node_name,
              "node.kubernetes.io/windows-build": "10.0.%s" % build}
    for kv in (flags.get("node-labels") or "").split(","):
        if "=" in kv:
            k, v = kv.split("=", 1)
            labels[k] = v
    # kwok renews the node's Lease; its node stages leave the status to winsim_kubelet_status (ANNOTATION).
    annotations = {"kwok.x-k8s.io/node": "fake", winsim_kubelet_status.ANNOTATION: "simulated",
                   "node.alpha.kubernetes.io/ttl": "0",
                   "volumes.kubernetes.io/controller-managed-attach-detach": "true"}
    adapters = host.state.get("adapters") or [{}]
    ip = flags.get("node-ip") or adapters[0].get("ip")
    runtime = host.state.get("runtime") or {}
    node = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": node_name, "labels": labels, "annotations": annotations},
            "status": {"addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": node_name}],
                       "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                       "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                       "nodeInfo": {"operatingSystem": "windows", "architecture": "amd64", "kubeletVersion": version,
                                    "kubeProxyVersion": "", "osImage": "Windows Server Datacenter",
                                    "kernelVersion": "10.0.%s.0" % build, "machineID": "", "systemUUID": "",
                                    "bootID": "", "containerRuntimeVersion": "%s://%s" % (
                                        runtime.get("name", "containerd"), runtime.get("version", "0"))}}}
    api = _api_from_kubeconfig(host, kubeconfig)
    try:
        code, ans = api.request("POST", "/api/v1/nodes", node)
        if code == 409:
            code, ans = api.request("PATCH", "/api/v1/nodes/" + node_name,
                                    {"metadata": {"labels": labels, "annotations": annotations}},
                                    content_type="application/merge-patch+json")
            if code < 300:  # a restarted (e.g. upgraded) kubelet reports its version and runtime again
                code, ans = api.request("PATCH", "/api/v1/nodes/%s/status" % node_name,
                                        {"status": {"nodeInfo": node["status"]["nodeInfo"]}},
                                        content_type="application/merge-patch+json")
        if code >= 300:
            raise SimError("unable to register node \"%s\" with API server: %s" % (node_name, ans.get("message")))
    finally:
        api.close()


binaries.SERVICE_START["kubelet"] = _kubelet_service_start
