"""Preflight of the metrics exporter's variables (kubewin_windows_exporter_*), through run_checks as the preflight role
calls it, and the role defaults, download URL and proxy choice that go with them."""

from pathlib import Path

import pytest
import yaml

from ansible_collections.kubewin.nodes.plugins.plugin_utils import _kubespray as kubespray
from ansible_collections.kubewin.nodes.plugins.plugin_utils import _preflight as preflight
from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight import metrics

ROOT = Path(__file__).resolve().parents[4]
DEFAULTS = yaml.safe_load((ROOT / "roles" / "kubewin" / "defaults" / "main.yml").read_text())
VALID = dict(
    node_name="win-worker-1", hostname="WIN-WORKER-1", windows_build="10.0.20348.2113", container_runtime="containerd",
    deployment_mode="services", kube_pods_subnet="10.244.0.0/16", kube_service_addresses="10.96.0.0/12",
    cluster_pod_subnet="10.244.0.0/16", cluster_service_subnet="10.96.0.0/12", kube_network_plugin="flannel",
    cluster_flannel=dict(found=True, backend_type="vxlan", vni=4096, port=4789, network="10.244.0.0/16"),
    kube_version="v1.37.2", server_version="v1.37.2", adapters=[dict(name="Ethernet0", ipv4=["192.168.10.21/24"])],
)
BCRYPT = "$2y$10$" + "N" * 53
CERT = "-----BEGIN CERTIFICATE-----"
KEY = "-----BEGIN PRIVATE KEY-----"  # the role passes the key's first line only


def exporter(**changes):
    """The values as the preflight role passes them (strings, as templating gives them), with the role defaults."""
    values = {var: DEFAULTS[var] for var in metrics.VARIABLES}
    values[metrics.ENABLED_VAR] = "True"
    values.update(("kubewin_windows_exporter_" + k, v) for k, v in changes.items())
    failures, warnings, dummy = preflight.run_checks(dict(VALID, values=values))
    return ([f for f in failures if f["check"] == "metrics"], [w for w in warnings if w["check"] == "metrics"])


def only(findings, variable):
    mine = [f for f in findings if f["variable"] == variable]
    assert len(mine) == 1, findings
    return mine[0]["message"]


def test_the_defaults_are_off_and_pass_when_turned_on():
    assert DEFAULTS["kubewin_windows_exporter_enabled"] is False
    assert exporter() == ([], [])


def test_off_nothing_is_checked_whatever_the_values():
    assert exporter(enabled="False", version="latest", port=10250, collectors="cpu") == ([], [])


@pytest.mark.parametrize("change, variable, words", [
    ({"enabled": "maybe"}, metrics.ENABLED_VAR, "not a boolean"),
    ({"version": "0.31.8"}, metrics.VERSION_VAR, "Git tag, like v0.31.8"),
    ({"version": "latest"}, metrics.VERSION_VAR, "Git tag"),
    ({"collectors": "cpu,memory"}, metrics.COLLECTORS_VAR, "non-empty list"),
    ({"collectors": []}, metrics.COLLECTORS_VAR, "non-empty list"),
    ({"collectors": ["cpu", "Memory Usage"]}, metrics.COLLECTORS_VAR, "no collector name"),
    ({"collectors": ["cpu", "cpu"]}, metrics.COLLECTORS_VAR, "more than once"),
    ({"port": "http"}, metrics.PORT_VAR, "from 1 to 65535"),
    ({"port": 70000}, metrics.PORT_VAR, "from 1 to 65535"),
    ({"port": "10250"}, metrics.PORT_VAR, "the kubelet's port"),
    ({"port": 10249}, metrics.PORT_VAR, "kube-proxy's metrics port"),
    ({"tls_cert": CERT}, metrics.TLS_KEY_VAR, "set kubewin_windows_exporter_tls_key too"),
    ({"tls_key": KEY}, metrics.TLS_CERT_VAR, "set kubewin_windows_exporter_tls_cert too"),
    ({"tls_cert": "/etc/pki/exporter.crt", "tls_key": KEY}, metrics.TLS_CERT_VAR, "PEM text of the certificate"),
    ({"tls_cert": CERT, "tls_key": "exporter.key"}, metrics.TLS_KEY_VAR, "PEM private key header"),
    ({"basic_auth_users": ["prom"]}, metrics.USERS_VAR, "mapping of user name to bcrypt hash"),
    ({"basic_auth_users": {"a:b": BCRYPT}, "tls_cert": CERT, "tls_key": KEY}, metrics.USERS_VAR, "cannot be empty or"),
])
def test_a_wrong_value_is_refused_naming_the_variable_and_the_fix(change, variable, words):
    failures, dummy = exporter(**change)
    assert words in only(failures, variable)


def test_a_plain_password_is_refused_and_never_repeated():
    failures, dummy = exporter(basic_auth_users={"prom": "s3cret-pa55"}, tls_cert=CERT, tls_key=KEY)
    message = only(failures, metrics.USERS_VAR)
    assert "not a bcrypt hash" in message and "htpasswd -nBC 10 prom" in message
    assert "s3cret-pa55" not in message


def test_tls_and_bcrypt_users_pass_and_users_without_tls_warn():
    assert exporter(basic_auth_users={"prom": BCRYPT}, tls_cert=CERT + "\nMIIB\n", tls_key=KEY) == ([], [])
    assert exporter(tls_cert=CERT, tls_key="-----BEGIN EC PRIVATE KEY-----") == ([], [])
    failures, warnings = exporter(basic_auth_users={"prom": BCRYPT})
    assert failures == [] and "readable over the network" in only(warnings, metrics.USERS_VAR)


def test_a_collector_this_release_does_not_know_warns_and_the_placeholder_passes():
    failures, warnings = exporter(collectors=["[defaults]", "container", "hyperv_new"])
    assert failures == [] and "'hyperv_new'" in only(warnings, metrics.COLLECTORS_VAR)


def test_the_default_collectors_are_known_to_the_default_release():
    assert set(DEFAULTS["kubewin_windows_exporter_collectors"]) <= metrics.KNOWN_COLLECTORS
    # windows_exporter's own defaults (pkg/collector/types.go DefaultCollectors) are all kept
    assert {"cpu", "memory", "logical_disk", "physical_disk", "net", "os", "service", "system"} <= \
        set(DEFAULTS["kubewin_windows_exporter_collectors"])


def test_the_download_base_follows_github_url_and_files_repo():
    upstream = "https://github.com/prometheus-community/windows_exporter/releases/download"
    assert kubespray.download_url({}, "windows_exporter") == upstream
    assert kubespray.download_url({"github_url": "https://gh.corp"}, "windows_exporter") == \
        "https://gh.corp/prometheus-community/windows_exporter/releases/download"
    assert kubespray.download_url({"files_repo": "https://files.corp"}, "windows_exporter") == \
        "https://files.corp/github.com/prometheus-community/windows_exporter/releases/download"


def test_the_role_passes_the_key_s_first_line_only_and_every_exporter_variable():
    role = yaml.safe_load((ROOT / "roles" / "preflight" / "tasks" / "main.yml").read_text())
    values = next(t for t in role if "kubewin.nodes.node_preflight" in t)["kubewin.nodes.node_preflight"]["values"]
    assert set(metrics.VARIABLES) <= set(values)
    assert "splitlines()" in values[metrics.TLS_KEY_VAR] and "| first" in values[metrics.TLS_KEY_VAR]
