"""Unit tests for the k8s_join_token module, run end to end through main() against a fake CoreV1Api."""

import base64
import hashlib
import hmac
import json
import re
import shutil
import socket
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest
from k8s_fakes import FakeCluster, FakeTime, make_runner

from ansible_collections.kubewin.nodes.plugins.modules import k8s_join_token as mod

kubernetes = pytest.importorskip("kubernetes")
from kubernetes.client.exceptions import ApiException  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl CLI not installed")

SERVER = "https://192.0.2.10:6443"
CLIENT_HOST = "https://10.96.0.1:443"
LABEL = "kubewin.nodes/managed"


# --- a fake cluster -------------------------------------------------------------------------------

def _b64u(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _sign(content, token_id, token_secret):
    """What kube-controller-manager's bootstrapsigner writes (written independently of the module)."""
    header = _b64u(json.dumps({"alg": "HS256", "kid": token_id}, separators=(",", ":")).encode())
    mac = hmac.new(token_secret.encode(), (header + "." + _b64u(content.encode())).encode(), hashlib.sha256)
    return header + ".." + _b64u(mac.digest())


class TokenCluster(FakeCluster):
    """k8s_fakes.FakeCluster with kube-public/cluster-info and kube-controller-manager's bootstrapsigner."""

    def __init__(self, ca_pem, signer=True, cluster_info_configmap=True):
        super().__init__()
        self.host = CLIENT_HOST
        self.signer = signer
        if cluster_info_configmap:
            kubeconfig = (
                "apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: %s\n"
                "    server: %s\n  name: \"\"\ncontexts: null\ncurrent-context: \"\"\nkind: Config\n"
                "preferences: {}\nusers: null\n" % (base64.b64encode(ca_pem).decode(), SERVER)
            )
            self.configmaps[("kube-public", "cluster-info")] = {
                "metadata": {"name": "cluster-info", "namespace": "kube-public"},
                "data": {"kubeconfig": kubeconfig},
            }

    @property
    def tokens(self):
        """The Secrets of kube-system by name."""
        return {name: secret for (namespace, name), secret in self.secrets.items() if namespace == "kube-system"}

    def _resign(self):
        """bootstrapsigner: one jws-kubeconfig-<id> per unexpired signing token."""
        cm = self.configmaps.get(("kube-public", "cluster-info"))
        if not cm or not self.signer:
            return
        data = cm["data"]
        for key in [k for k in data if k.startswith("jws-kubeconfig-")]:
            del data[key]
        for secret in self.secrets.values():
            d = {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}
            if d.get("usage-bootstrap-signing") == "true":
                data["jws-kubeconfig-" + d["token-id"]] = _sign(data["kubeconfig"], d["token-id"], d["token-secret"])

    def put_secret(self, secret):
        super().put_secret(secret)
        self._resign()

    def drop_secret(self, namespace, name):
        super().drop_secret(namespace, name)
        self._resign()

    add_secret = put_secret


def _openssl(*args, data=None):
    return subprocess.run(["openssl", *args], input=data, capture_output=True, check=True).stdout


@pytest.fixture(scope="module")
def ca(tmp_path_factory):
    """A CA made with openssl, and its pin computed by openssl alone."""
    d = tmp_path_factory.mktemp("ca")
    _openssl("req", "-x509", "-new", "-nodes", "-newkey", "rsa:2048", "-keyout", str(d / "ca.key"),
             "-out", str(d / "ca.crt"), "-days", "1", "-subj", "/CN=kubernetes")
    pem = (d / "ca.crt").read_bytes()
    der = _openssl("pkey", "-pubin", "-outform", "der", data=_openssl("x509", "-pubkey", "-noout", data=pem))
    pin = "sha256:" + _openssl("dgst", "-sha256", "-r", data=der).decode().split()[0]
    return pem, pin


@pytest.fixture
def api(ca):
    return TokenCluster(ca[0])


@pytest.fixture
def run(monkeypatch, capsys):
    """Run the module's main() with args against ``api``; return its parsed JSON result."""

    run_module = make_runner(mod, monkeypatch, capsys)

    def _run(args, api=None, check=False, diff=False):
        if api is not None:
            monkeypatch.setattr(mod, "build_apis", lambda params: api)
        return run_module(args, check=check, diff=diff, clock=FakeTime())

    return _run


def _data(secret):
    return {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}


def _kubeadm_secret(token_id, token_secret, labels=None):
    """A token as 'kubeadm init' / kubespray leaves it (no kubewin label)."""
    data = {
        "token-id": token_id, "token-secret": token_secret, "expiration": "2999-01-01T00:00:00Z",
        "usage-bootstrap-authentication": "true", "usage-bootstrap-signing": "true",
        "auth-extra-groups": "system:bootstrappers:kubeadm:default-node-token",
    }
    return {
        "metadata": {"name": "bootstrap-token-" + token_id, "namespace": "kube-system", "labels": labels or {}},
        "type": "bootstrap.kubernetes.io/token",
        "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()},
    }


def _assert_token_only_in_token_keys(result, token):
    """The token (and its secret half) appears only in result['token'], ['join_args'] and ['join_command']."""
    secret_half = token.split(".")[1]
    rest = {k: v for k, v in result.items() if k not in ("token", "join_args", "join_command", "_raw", "_rc")}
    dumped = json.dumps(rest)
    assert secret_half not in dumped
    assert result["_raw"].count(secret_half) == 3


# --- state=present ---------------------------------------------------------------------------------

def test_create_token_like_kubeadm(run, api, ca):
    result = run({}, api)
    assert result["_rc"] == 0, result
    assert result["changed"] is True and result["reused"] is False
    token = result["token"]
    token_id, token_secret = re.match(r"^([a-z0-9]{6})\.([a-z0-9]{16})$", token).groups()
    assert result["token_id"] == token_id
    secret = api.tokens["bootstrap-token-" + token_id]
    assert secret["type"] == "bootstrap.kubernetes.io/token"
    assert secret["metadata"]["labels"] == {LABEL: "true"}
    data = _data(secret)
    assert data["token-id"] == token_id and data["token-secret"] == token_secret
    assert data["usage-bootstrap-signing"] == data["usage-bootstrap-authentication"] == "true"
    assert data["auth-extra-groups"] == "system:bootstrappers:kubeadm:default-node-token"
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", data["expiration"])
    assert "kubewin.nodes" in data["description"]
    assert result["expiration"] == data["expiration"]
    # endpoint and pins come from cluster-info, not from the client's configured host
    assert result["api_server_endpoint"] == "192.0.2.10:6443"
    assert result["ca_cert_hashes"] == [ca[1]]
    assert result["join_args"] == ["192.0.2.10:6443", "--token", token, "--discovery-token-ca-cert-hash", ca[1]]
    assert result["join_command"] == (
        "kubeadm join 192.0.2.10:6443 --token %s --discovery-token-ca-cert-hash %s" % (token, ca[1]))
    assert result["signed"] is True
    assert token_secret not in result["msg"]
    _assert_token_only_in_token_keys(result, token)


def test_second_run_reuses_token(run, api):
    first = run({}, api)
    second = run({}, api)
    assert second["_rc"] == 0
    assert second["changed"] is False and second["reused"] is True
    assert second["token"] == first["token"]
    assert len(api.tokens) == 1
    assert api.writes() == ["create_namespaced_secret"]


def test_reuse_respects_min_remaining_ttl(run, api):
    first = run({"ttl": "2h"}, api)
    second = run({"ttl": "2h", "min_remaining_ttl": "3h"}, api)
    assert second["changed"] is True and second["token"] != first["token"]
    assert "created on every run" in json.dumps(second.get("warnings", []))
    assert len(api.tokens) == 2


def test_unmanaged_kubeadm_token_is_not_reused(run, api):
    api.add_secret(_kubeadm_secret("kubead", "0123456789abcdef"))
    result = run({"ttl": "0"}, api)
    assert result["changed"] is True and result["token_id"] != "kubead"
    assert "expiration" not in _data(api.tokens["bootstrap-token-" + result["token_id"]])
    assert result["expiration"] is None


def test_caller_supplied_existing_token_is_honoured(run, api):
    api.add_secret(_kubeadm_secret("abcdef", "0123456789abcdef"))
    result = run({"token": "abcdef.0123456789abcdef"}, api)
    assert result["_rc"] == 0, result
    assert result["changed"] is False and result["reused"] is True
    assert result["token"] == "abcdef.0123456789abcdef"
    assert "--token abcdef.0123456789abcdef " in result["join_command"]
    assert api.writes() == []
    # the no_log option is still masked in the invocation echo
    assert result["invocation"]["module_args"]["token"] != "abcdef.0123456789abcdef"
    _assert_token_only_in_token_keys(result, "abcdef.0123456789abcdef")


def test_caller_supplied_token_that_outlives_the_ttl_is_used_with_a_warning(run, api):
    # security-2 N8: kubespray's kubeadm_token replaces the per-join token; the run says so
    api.add_secret(_kubeadm_secret("abcdef", "0123456789abcdef"))  # expires in 2999
    result = run({"token": "abcdef.0123456789abcdef", "ttl": "30m"}, api)
    assert result["_rc"] == 0 and result["reused"] is True and api.writes() == []
    warning = json.dumps(result.get("warnings", []))
    assert "abcdef" in warning and "expires at 2999-01-01T00:00:00Z" in warning and "kubeadm_token" in warning
    assert "0123456789abcdef" not in warning
    never = _kubeadm_secret("fedcba", "fedcba9876543210")
    del never["data"]["expiration"]
    api.add_secret(never)
    result = run({"token": "fedcba.fedcba9876543210", "ttl": "30m"}, api)
    assert "never expires" in json.dumps(result.get("warnings", []))


def test_caller_supplied_token_within_the_ttl_gets_no_warning(run, api):
    api.add_secret(_kubeadm_secret("abcdef", "0123456789abcdef"))
    result = run({"token": "abcdef.0123456789abcdef", "ttl": "0"}, api)
    assert result["_rc"] == 0 and not result.get("warnings")


def test_caller_supplied_missing_token_is_created(run, api):
    result = run({"token": "abcdef.0123456789abcdef", "ttl": "0"}, api)
    assert result["changed"] is True
    data = _data(api.tokens["bootstrap-token-abcdef"])
    assert data["token-secret"] == "0123456789abcdef" and "expiration" not in data
    _assert_token_only_in_token_keys(result, "abcdef.0123456789abcdef")


def test_caller_supplied_expired_token_is_renewed(run, api):
    old = _kubeadm_secret("abcdef", "0123456789abcdef")
    old["data"]["expiration"] = base64.b64encode(b"2001-01-01T00:00:00Z").decode()
    api.add_secret(old)
    result = run({"token": "abcdef.0123456789abcdef", "ttl": "1h"}, api)
    assert result["_rc"] == 0 and result["changed"] is True
    assert "renewed" in result["msg"]
    assert api.writes() == ["replace_namespaced_secret"]
    new_expiration = _data(api.tokens["bootstrap-token-abcdef"])["expiration"]
    assert new_expiration == result["expiration"] and new_expiration > "2001-01-01T00:00:00Z"


def test_caller_supplied_token_with_other_secret_fails(run, api):
    api.add_secret(_kubeadm_secret("abcdef", "zzzzzzzzzzzzzzzz"))
    result = run({"token": "abcdef.0123456789abcdef"}, api)
    assert result["failed"] is True
    assert "different secret" in result["msg"] and "abcdef" in result["msg"]
    assert "0123456789abcdef" not in result["_raw"] and "zzzzzzzzzzzzzzzz" not in result["_raw"]
    assert api.writes() == []


def test_malformed_token_fails_cleanly_without_echo(run, api):
    result = run({"token": "abcdef.0123456789ABCDEF"}, api)
    assert result["failed"] is True and "malformed" in result["msg"]
    assert "0123456789ABCDEF" not in result["_raw"]
    assert "exception" not in result


def test_check_mode_creates_nothing(run, api):
    result = run({}, api, check=True, diff=True)
    assert result["changed"] is True
    assert result["token_id"] is None and result["token"] is None
    assert result["join_args"] is None and result["join_command"] is None
    assert "not known" in result["msg"]
    assert api.tokens == {} and api.writes() == []
    assert result["diff"]["before"] == {}


def test_check_mode_reports_reuse(run, api):
    first = run({}, api)
    result = run({}, api, check=True)
    assert result["changed"] is False and result["token"] == first["token"]


def test_diff_never_shows_token_secret(run, api):
    result = run({}, api, diff=True)
    secret_half = result["token"].split(".")[1]
    assert result["diff"]["after"]["data"]["token-secret"] == "<redacted>"
    assert secret_half not in json.dumps(result["diff"])


def test_wait_for_signature_times_out_with_clear_message(run, ca):
    api = TokenCluster(ca[0], signer=False)
    result = run({"wait_timeout": 10}, api)
    assert result["failed"] is True
    assert result["changed"] is True  # the token was created
    token_id = next(iter(api.tokens))[len("bootstrap-token-"):]
    assert result["token_id"] == token_id
    assert "bootstrapsigner" in result["msg"] and "--controllers=*,bootstrapsigner,tokencleaner" in result["msg"]
    assert token_id in result["msg"]
    assert _data(api.tokens["bootstrap-token-" + token_id])["token-secret"] not in result["_raw"]


def test_wait_for_signature_rejects_wrong_signature(run, ca):
    api = TokenCluster(ca[0], signer=False)
    api.add_secret(_kubeadm_secret("abcdef", "0123456789abcdef"))
    cm = api.configmaps[("kube-public", "cluster-info")]["data"]
    cm["jws-kubeconfig-abcdef"] = _sign(cm["kubeconfig"], "abcdef", "ffffffffffffffff")
    result = run({"token": "abcdef.0123456789abcdef", "wait_timeout": 4}, api)
    assert result["failed"] is True and "does not verify" in result["msg"]


def test_no_wait_skips_signature(run, ca):
    api = TokenCluster(ca[0], signer=False)
    result = run({"wait_for_signature": False}, api)
    assert result["_rc"] == 0 and result["signed"] is False


def test_authentication_only_token_does_not_wait_for_signature(run, ca):
    api = TokenCluster(ca[0], signer=False)
    result = run({"usages": ["authentication"]}, api)
    assert result["_rc"] == 0 and result["signed"] is False
    data = _data(api.tokens["bootstrap-token-" + result["token_id"]])
    assert "usage-bootstrap-signing" not in data and data["usage-bootstrap-authentication"] == "true"


def test_missing_cluster_info_fails_clearly(run, ca):
    api = TokenCluster(ca[0], cluster_info_configmap=False)
    result = run({}, api)
    assert result["failed"] is True and "kube-public/cluster-info" in result["msg"]
    assert api.writes() == []


def test_forbidden_gives_clean_message(run, api):
    exc = ApiException(status=403, reason="Forbidden")
    exc.body = json.dumps({"kind": "Status", "message": 'secrets is forbidden: User "dev" cannot create resource'})
    api.errors["create_namespaced_secret"] = exc
    result = run({}, api)
    assert result["failed"] is True
    assert "Forbidden" in result["msg"] and "create secrets in namespace kube-system" in result["msg"]
    assert "kubeconfig's user" in result["msg"] and 'User "dev"' in result["msg"]
    assert "exception" not in result and "Traceback" not in result["_raw"]


def test_api_error_echoing_the_secret_is_masked(run, api):
    """An API error that quotes the submitted Secret must not leak the token secret."""

    def invalid(namespace, body):
        secret = base64.b64decode(body["data"]["token-secret"]).decode()
        exc = ApiException(status=422, reason="Unprocessable Entity")
        exc.body = json.dumps({"message": "Secret is invalid: data[token-secret]: Invalid value: %s" % secret})
        api.leaked = secret
        return exc

    api.errors["create_namespaced_secret"] = invalid
    result = run({}, api)
    assert result["failed"] is True and "HTTP 422" in result["msg"] and "create secrets" in result["msg"]
    assert api.leaked not in result["_raw"]


def test_unauthorized_gives_clean_message(run, api):
    api.errors["read_namespaced_config_map"] = ApiException(status=401, reason="Unauthorized")
    result = run({}, api)
    assert result["failed"] is True and "401" in result["msg"] and "credentials" in result["msg"]


def test_connection_refused_with_real_client(run):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    result = run({"host": "https://127.0.0.1:%d" % port, "api_key": "not-a-real-token-value",
                  "validate_certs": False})
    assert result["failed"] is True
    assert "Cannot reach the Kubernetes API server at https://127.0.0.1:%d" % port in result["msg"]
    assert "exception" not in result and "Traceback" not in result["_raw"]
    assert "not-a-real-token-value" not in result["_raw"]


def test_missing_kubeconfig_file(run, tmp_path):
    result = run({"kubeconfig": str(tmp_path / "nope.conf")})
    assert result["failed"] is True and "does not exist" in result["msg"]


def test_token_id_rejected_with_present(run, api):
    result = run({"token_id": "abcdef"}, api)
    assert result["failed"] is True and "state=absent" in result["msg"]


# --- state=absent --------------------------------------------------------------------------------

def test_absent_deletes_only_managed_tokens(run, api):
    api.add_secret(_kubeadm_secret("kubead", "0123456789abcdef"))
    created = [run({"ttl": "2h", "min_remaining_ttl": "3h"}, api)["token_id"] for dummy in range(2)]
    result = run({"state": "absent"}, api, diff=True)
    assert result["changed"] is True
    assert result["deleted_token_ids"] == sorted(created)
    assert set(api.tokens) == {"bootstrap-token-kubead"}
    assert "0123456789abcdef" not in result["_raw"]
    again = run({"state": "absent"}, api)
    assert again["changed"] is False and again["deleted_token_ids"] == []


def test_absent_named_token(run, api):
    api.add_secret(_kubeadm_secret("kubead", "0123456789abcdef"))
    result = run({"state": "absent", "token_id": "kubead"}, api)
    assert result["changed"] is True and result["deleted_token_ids"] == ["kubead"]
    assert api.tokens == {}
    assert run({"state": "absent", "token_id": "kubead"}, api)["changed"] is False


def test_absent_check_mode_deletes_nothing(run, api):
    run({}, api)
    result = run({"state": "absent"}, api, check=True)
    assert result["changed"] is True and len(result["deleted_token_ids"]) == 1
    assert len(api.tokens) == 1 and "delete_namespaced_secret" not in api.writes()


# --- the real kubernetes client against a local HTTP stub of the API -----------------------------

class _StubHandler(BaseHTTPRequestHandler):
    """Serves FakeCoreV1Api's state over the Kubernetes REST paths the module uses."""

    api = None
    seen_auth = []

    def log_message(self, *args):
        pass

    def _send(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _dispatch(self, method):
        self.seen_auth.append(self.headers.get("Authorization"))
        url = urlparse(self.path)
        parts = url.path.strip("/").split("/")
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        api = self.api
        fake = dict(_request_timeout=1, _preload_content=False)  # what k8s.client.call passes
        try:
            if parts[:3] != ["api", "v1", "namespaces"]:
                raise ApiException(status=404, reason="Not Found")
            namespace, kind, name = parts[3], parts[4], (parts[5] if len(parts) > 5 else None)
            if kind == "configmaps" and method == "GET":
                obj = dict(api.read_namespaced_config_map(name, namespace, **fake),
                           kind="ConfigMap", apiVersion="v1")
            elif kind == "secrets" and method == "GET" and name:
                obj = dict(api.read_namespaced_secret(name, namespace, **fake), kind="Secret", apiVersion="v1")
            elif kind == "secrets" and method == "GET":
                selector = parse_qs(url.query).get("labelSelector", [None])[0]
                items = api.list_namespaced_secret(namespace, label_selector=selector, **fake)["items"]
                obj = {"kind": "SecretList", "apiVersion": "v1", "metadata": {}, "items": items}
            elif kind == "secrets" and method == "POST":
                obj = dict(api.create_namespaced_secret(namespace, body, **fake), kind="Secret", apiVersion="v1")
                return self._send(201, obj)
            elif kind == "secrets" and method == "PUT":
                obj = dict(api.replace_namespaced_secret(name, namespace, body, **fake), kind="Secret", apiVersion="v1")
            elif kind == "secrets" and method == "DELETE":
                api.delete_namespaced_secret(name, namespace, **fake)
                obj = {"kind": "Status", "apiVersion": "v1", "status": "Success"}
            else:
                raise ApiException(status=405, reason="Method Not Allowed")
        except ApiException as exc:
            return self._send(exc.status, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                           "message": exc.reason, "code": exc.status})
        return self._send(200, obj)

    def do_GET(self):
        self._dispatch("GET")

    def do_POST(self):
        self._dispatch("POST")

    def do_PUT(self):
        self._dispatch("PUT")

    def do_DELETE(self):
        self._dispatch("DELETE")


@pytest.fixture
def http_api(api):
    handler = type("Handler", (_StubHandler,), {"api": api, "seen_auth": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield "http://127.0.0.1:%d" % server.server_address[1], api, handler
    server.shutdown()
    server.server_close()


def test_real_client_create_reuse_absent(run, http_api, ca):
    url, api, handler = http_api
    conn = {"host": url, "api_key": "stub-bearer-value"}
    first = run(conn)
    assert first["_rc"] == 0, first
    assert first["changed"] is True and first["signed"] is True
    assert first["ca_cert_hashes"] == [ca[1]] and first["api_server_endpoint"] == "192.0.2.10:6443"
    secret = api.tokens["bootstrap-token-" + first["token_id"]]
    assert secret["metadata"]["labels"] == {LABEL: "true"}
    assert _data(secret)["token-secret"] == first["token"].split(".")[1]
    assert set(handler.seen_auth) == {"Bearer stub-bearer-value"}
    assert "stub-bearer-value" not in first["_raw"]

    second = run(conn)
    assert second["changed"] is False and second["token"] == first["token"]

    gone = run(dict(conn, state="absent"))
    assert gone["changed"] is True and gone["deleted_token_ids"] == [first["token_id"]]
    assert api.tokens == {}
    assert run(dict(conn, state="absent", token_id=first["token_id"]))["changed"] is False


# --- reuse=false and state=discovery (one token per run; endpoint and pins without a token) -------------

def test_reuse_false_always_creates_a_token_of_its_own(run, api):
    first = run({"ttl": "30m", "reuse": False}, api)
    second = run({"ttl": "30m", "reuse": False}, api)
    assert first["_rc"] == 0 and second["_rc"] == 0
    assert first["changed"] is True and second["changed"] is True
    assert second["reused"] is False and second["token_id"] != first["token_id"]
    assert len(api.tokens) == 2
    assert "ttl (30m0s)" not in json.dumps(second.get("warnings", []))


def test_reuse_false_then_delete_by_id_leaves_the_other_runs_token(run, api):
    mine = run({"ttl": "30m", "reuse": False}, api)
    other = run({"ttl": "30m", "reuse": False}, api)
    gone = run({"state": "absent", "token_id": mine["token_id"]}, api)
    assert gone["deleted_token_ids"] == [mine["token_id"]]
    assert list(api.tokens) == ["bootstrap-token-" + other["token_id"]]


def test_discovery_returns_endpoint_and_pins_and_touches_no_token(run, api, ca):
    api.add_secret(_kubeadm_secret("abcdef", "0123456789abcdef", labels={LABEL: "true"}))
    result = run({"state": "discovery"}, api)
    assert result["_rc"] == 0, result
    assert result["changed"] is False
    assert result["api_server_endpoint"] == "192.0.2.10:6443" and result["ca_cert_hashes"] == [ca[1]]
    assert "token" not in result and "join_command" not in result
    assert "0123456789abcdef" not in result["_raw"]
    assert api.writes() == []


def test_discovery_refuses_a_token(run, api):
    result = run({"state": "discovery", "token_id": "abcdef"}, api)
    assert result["failed"] is True and "state=discovery" in result["msg"]


def test_api_server_endpoint_replaces_the_one_cluster_info_publishes(run, api, ca):
    """kubespray's load balancer: the join arguments name the given endpoint, the pins stay the cluster's."""
    result = run({"api_server_endpoint": "lb.example.com:8443"}, api)
    assert result["_rc"] == 0, result
    assert result["api_server_endpoint"] == "lb.example.com:8443"
    assert result["join_args"][:2] == ["lb.example.com:8443", "--token"]
    assert result["join_args"][3:] == ["--discovery-token-ca-cert-hash", ca[1]]


def test_join_info_with_discovery_returns_what_state_discovery_returns(run, api, monkeypatch, capsys):
    """issue 22: the discover step reads the cluster and its endpoint and CA pins in one module run."""
    from test_k8s_join_info import CLUSTER_CONFIGURATION

    from ansible_collections.kubewin.nodes.plugins.modules import k8s_join_info as info

    api.configmaps[("kube-system", "kubeadm-config")] = {"data": {"ClusterConfiguration": CLUSTER_CONFIGURATION}}
    expected = run({"state": "discovery"}, api)
    both = make_runner(info, monkeypatch, capsys)({"discovery": True}, api)
    assert both["_rc"] == 0, both
    assert both["discovery"] == {"api_server_endpoint": expected["api_server_endpoint"],
                                 "ca_cert_hashes": expected["ca_cert_hashes"]}
    assert "discovery" not in make_runner(info, monkeypatch, capsys)({}, api) and api.writes() == []
