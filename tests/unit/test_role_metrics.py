"""The metrics role's command line and files, rendered from its vars as Ansible renders them: the flags
windows_exporter v0.31.8 takes (cmd/windows_exporter/main.go, exporter-toolkit web/kingpinflag), the web
configuration file only with TLS or users, the key sealed and restricted, and its task run with no_log then."""

from pathlib import Path

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar
from role_tasks import walk

try:  # ansible-core 2.19 templates only text marked trusted, as a role's own YAML is
    from ansible.template import trust_as_template
except ImportError:  # 2.18 templates any text
    def trust_as_template(text):
        return text

ROOT = Path(__file__).resolve().parents[1].parent
ROLE_VARS = yaml.safe_load((ROOT / "roles" / "metrics" / "vars" / "main.yml").read_text())
DEFAULTS = yaml.safe_load((ROOT / "roles" / "kubewin" / "defaults" / "main.yml").read_text())
KEY = "-----BEGIN PRIVATE KEY-----\nMIIEsecret\n-----END PRIVATE KEY-----"
CERT = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"
BCRYPT = "$2y$10$" + "N" * 53


def _trusted(value):
    if isinstance(value, str):
        return trust_as_template(value)
    if isinstance(value, list):
        return [_trusted(v) for v in value]
    if isinstance(value, dict):
        return {k: _trusted(v) for k, v in value.items()}
    return value


def render(name, **options):
    variables = {k: DEFAULTS[k] for k in DEFAULTS if k.startswith("kubewin_windows_exporter_")
                 and k != "kubewin_windows_exporter_download_url"}
    variables.update(("kubewin_windows_exporter_" + k, v) for k, v in options.items())
    variables.update(_trusted(ROLE_VARS), kubewin_node_spec={"firewall_remoteip": ["192.0.2.0/24"]})
    return Templar(loader=DataLoader(), variables=variables).template(trust_as_template("{{ %s }}" % name))


def test_with_the_defaults_the_command_line_has_the_collectors_and_port_and_no_web_configuration():
    assert render("_kubewin_exporter_args") == [
        "--collectors.enabled=cpu,memory,logical_disk,physical_disk,net,os,service,system,container",
        "--web.listen-address=:9182"]
    assert render("_kubewin_exporter_files") == []
    # what an earlier run with TLS left goes
    assert render("_kubewin_exporter_unused_files") == [
        ROLE_VARS["_kubewin_exporter_web_config"], ROLE_VARS["_kubewin_exporter_tls_cert_file"],
        ROLE_VARS["_kubewin_exporter_tls_key_file"]]


def test_tls_and_users_make_the_web_configuration_and_the_key_is_sealed_and_restricted():
    options = dict(tls_cert=CERT, tls_key=KEY, basic_auth_users={"prometheus": BCRYPT}, port=9200)
    args = render("_kubewin_exporter_args", **options)
    assert args[1:] == ["--web.listen-address=:9200", "--web.config.file=C:\\k\\windows_exporter-web-config.yml"]
    files = {f["path"]: f for f in render("_kubewin_exporter_files", **options)}
    web = files["C:\\k\\windows_exporter-web-config.yml"]
    assert web["content"] == {"tls_server_config": {"cert_file": "C:\\k\\windows_exporter-tls.crt",
                                                    "key_file": "C:\\k\\windows_exporter-tls.key"},
                              "basic_auth_users": {"prometheus": BCRYPT}}
    key = files["C:\\k\\windows_exporter-tls.key"]
    assert key["secret"] is True and key["restricted"] is True and key["content"] == KEY
    assert files["C:\\k\\windows_exporter-tls.crt"]["content"] == CERT
    assert render("_kubewin_exporter_unused_files", **options) == []
    assert render("_kubewin_exporter_tls", **options) is True


@pytest.mark.parametrize("options, web", [({"basic_auth_users": {"p": BCRYPT}}, {"basic_auth_users": {"p": BCRYPT}}),
                                          ({}, None)])
def test_users_alone_make_a_web_configuration_without_tls(options, web):
    files = render("_kubewin_exporter_files", **options)
    assert [f["content"] for f in files] == ([web] if web else [])


def test_the_files_task_runs_with_no_log_when_a_key_is_in_its_arguments():
    tasks = list(walk(yaml.safe_load((ROOT / "roles" / "metrics" / "tasks" / "main.yml").read_text())))
    files_task = next(t for t in tasks if "kubewin_exporter_files" in str(t.get("kubewin.nodes.win_host_files")))
    assert files_task["no_log"] == "{{ _kubewin_exporter_tls | bool }}"
    service = next(t for t in tasks if (t.get("kubewin.nodes.win_host_service") or {}).get("state") != "absent"
                   and "kubewin.nodes.win_host_service" in t)
    assert service["kubewin.nodes.win_host_service"]["args"] == "{{ _kubewin_exporter_args }}"
