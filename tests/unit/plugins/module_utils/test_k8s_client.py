"""k8s.client: connection options, the request wrapper and its error messages."""

import json

import pytest

from ansible_collections.kubewin.nodes.plugins.module_utils._k8s import client as kc

kubernetes = pytest.importorskip("kubernetes")
from kubernetes.client.exceptions import ApiException  # noqa: E402


class _Apis:
    host = "https://192.0.2.10:6443"


class _Response:
    def __init__(self, data):
        self.data = data


def test_auth_argument_spec_has_env_fallbacks_and_no_log():
    spec = kc.auth_argument_spec()
    assert set(spec) == {"kubeconfig", "context", "host", "api_key", "validate_certs", "ca_cert", "client_cert",
                         "client_key"}
    assert spec["api_key"]["no_log"] is True
    assert spec["kubeconfig"]["fallback"][1] == ["K8S_AUTH_KUBECONFIG"]
    assert spec is not kc.auth_argument_spec()


def test_call_returns_json_of_raw_response():
    seen = {}

    def func(name, **kwargs):
        seen.update(kwargs, name=name)
        return _Response(b'{"metadata": {"name": "x"}}')

    assert kc.call(_Apis(), "get", "nodes", None, "x", func, "x") == {"metadata": {"name": "x"}}
    assert seen["_preload_content"] is False and seen["_request_timeout"] == kc.REQUEST_TIMEOUT


def test_call_404_is_none_unless_asked():
    def func(**kwargs):
        raise ApiException(status=404, reason="Not Found")

    assert kc.call(_Apis(), "get", "nodes", None, "x", func) is None
    with pytest.raises(kc.K8sError) as err:
        kc.call(_Apis(), "patch", "nodes", None, "x", func, not_found_ok=False)
    assert err.value.status == 404 and "HTTP 404" in err.value.msg


def test_call_keeps_status_and_api_message():
    def func(**kwargs):
        exc = ApiException(status=429, reason="Too Many Requests")
        exc.body = json.dumps({"message": "Cannot evict pod as it would violate the pod's disruption budget."})
        raise exc

    with pytest.raises(kc.K8sError) as err:
        kc.call(_Apis(), "create", "pods/eviction", "default", "web", func)
    assert err.value.status == 429 and err.value.detail.startswith("Cannot evict pod")
    assert 'pods/eviction "web" in namespace default' in err.value.msg


def test_call_unreachable():
    def func(**kwargs):
        raise ConnectionRefusedError(111, "Connection refused")

    with pytest.raises(kc.K8sError) as err:
        kc.call(_Apis(), "get", "nodes", None, None, func)
    assert err.value.status is None and "Cannot reach the Kubernetes API server at https://192.0.2.10:6443" \
        in err.value.msg


def test_messages():
    assert "cluster-wide" in kc.api_error_message(403, "list", "nodes")
    assert "in namespace kube-system" in kc.api_error_message(403, "patch", "daemonsets", "kube-system", "kube-proxy")
    assert "credentials" in kc.api_error_message(401, "get", "nodes")
    assert "run the task again" in kc.api_error_message(409, "patch", "nodes", None, "n")
    assert "ca_cert" in kc.unreachable_message("https://h", "SSL: CERTIFICATE_VERIFY_FAILED")


def test_build_configuration_from_dict_and_overrides(tmp_path):
    kubeconfig = {
        "apiVersion": "v1", "kind": "Config", "current-context": "a",
        "clusters": [{"name": "c", "cluster": {"server": "https://10.0.0.1:6443", "insecure-skip-tls-verify": True}}],
        "users": [{"name": "u", "user": {"token": "abc"}}],
        "contexts": [{"name": "a", "context": {"cluster": "c", "user": "u"}}],
    }
    cfg = kc.build_configuration({"kubeconfig": kubeconfig})
    assert cfg.host == "https://10.0.0.1:6443"
    cfg = kc.build_configuration({"kubeconfig": kubeconfig, "host": "https://10.0.0.2:6443", "api_key": "t2",
                                  "validate_certs": True})
    assert cfg.host == "https://10.0.0.2:6443" and cfg.api_key == {"authorization": "Bearer t2"}
    assert cfg.verify_ssl is True


def test_build_configuration_missing_file(tmp_path):
    with pytest.raises(kc.K8sError) as err:
        kc.build_configuration({"kubeconfig": str(tmp_path / "nope")})
    assert "does not exist" in err.value.msg and "kubewin_kubeconfig" in err.value.msg


def test_build_configuration_explicit_host_skips_kubeconfig(monkeypatch, tmp_path):
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "absent"))
    cfg = kc.build_configuration({"host": "https://h:6443", "api_key": "t"})
    assert cfg.host == "https://h:6443"


def test_build_configuration_no_credentials(monkeypatch, tmp_path):
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "absent"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(kc.K8sError) as err:
        kc.build_configuration({})
    assert "No Kubernetes credentials found" in err.value.msg


def test_forbidden_message_names_verb_resource_and_fix():
    msg = kc.api_error_message(403, "create", "secrets", "kube-system", "bootstrap-token-abcdef", "nope")
    assert "Forbidden" in msg and "create secrets in namespace kube-system" in msg
    assert "kubeconfig's user" in msg and "nope" in msg


def test_unreachable_message():
    msg = kc.unreachable_message("https://192.0.2.10:6443", "Connection refused")
    assert "https://192.0.2.10:6443" in msg and "Connection refused" in msg
    assert "ca_cert" in kc.unreachable_message("https://h", "CERTIFICATE_VERIFY_FAILED")
