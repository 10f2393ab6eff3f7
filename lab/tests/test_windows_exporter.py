"""windows_exporter (the metrics role): the real windows_exporter.exe under Wine judges the flags the simulated one
accepts and the command line the role writes; the simulated service refuses what the real one refuses (an unknown
flag or collector, a web configuration file exporter-toolkit would not load). No control plane needed; the real binary
needs `lab/bin/lab-build` (lab/_cache/windows_exporter/<version>/windows_exporter.exe and the Wine prefix)."""

import json
import os
import re

import pytest
import scenario  # noqa: E402  (lab/, on sys.path through lab/conftest.py)
import yaml
from winsim import core  # noqa: E402,I001

# isort: split
# winsim.core has put the stand-in ansible.windows collection on sys.path.
from ansible_collections.ansible.windows.plugins.module_utils import winsim_exporter, winsim_scm, winsim_wine  # noqa: E402

LAB = scenario.LAB
CACHE = os.path.join(LAB, "_cache")
DEFAULTS = yaml.safe_load(open(os.path.join(scenario.REPO, "roles", "kubewin", "defaults", "main.yml")))
METRICS_VARS = yaml.safe_load(open(os.path.join(scenario.REPO, "roles", "metrics", "vars", "main.yml")))
VERSION = DEFAULTS["kubewin_windows_exporter_version"]
EXE = "C:\\k\\windows_exporter.exe"
WEB = METRICS_VARS["_kubewin_exporter_web_config"]
# the role's command line with its defaults and a web configuration file (roles/metrics/vars/main.yml
# _kubewin_exporter_args)
ROLE_ARGS = ["--collectors.enabled=" + ",".join(DEFAULTS["kubewin_windows_exporter_collectors"]),
             "--web.listen-address=:%s" % DEFAULTS["kubewin_windows_exporter_port"], "--web.config.file=" + WEB]
BCRYPT = "$2y$10$" + "a" * 53
CERT = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def _need():
    if not winsim_wine.binary(CACHE, VERSION, "windows_exporter"):
        pytest.fail("no Windows windows_exporter.exe %s or Wine prefix in %s: run lab/bin/lab-build" % (VERSION, CACHE))


def _real(args):
    return winsim_wine.run(CACHE, VERSION, "windows_exporter", args, {}, timeout=60)


def test_the_simulated_flag_list_is_the_real_binarys_help():
    _need()
    res = _real(["--help"])
    assert res["rc"] == 0, res["output"][-2000:]
    real = {}
    for line in res["output"].replace("\r\n", "\n").split("\n"):
        # kingpin's usage: "  -h, --[no-]help" or six spaces then "--name=DEFAULT"; descriptions are indented further
        m = re.match(r"^(?:  -\w, |      )--(\[no-\])?([a-z0-9._-]+)", line)
        if m:
            real[m.group(2)] = "bool" if m.group(1) else "value"
    # kingpin's hidden --help-long and --help-man are not listed
    expected = {k: v for k, v in winsim_exporter.FLAGS.items() if k not in ("help-long", "help-man")}
    assert real == expected
    assert "--collectors.enabled=\"%s\"" % winsim_exporter.DEFAULT_COLLECTORS in res["output"]
    assert "--web.listen-address=:9182" in res["output"]


def test_the_roles_command_line_gets_the_real_binary_to_its_collectors():
    _need()
    out = _real(ROLE_ARGS)["output"]
    # collectors.Build needs Windows' MI, which Wine lacks: the flags and collector names were all taken
    assert any(m in out for m in winsim_exporter.REAL_BUILD_REACHED), out[-2000:]
    assert winsim_exporter.parse_flags(ROLE_ARGS)["web.config.file"] == WEB


@pytest.mark.parametrize("args, message", [
    (["--collectors.enabled=cpu,bogus"], "unknown collector bogus"),
    (["--collectors.enabled", "[defaults],nope"], "unknown collector nope"),
    (["--nope=1"], "unknown long flag '--nope'"),
    (["--web.listen-addres=:9182"], "unknown long flag '--web.listen-addres'"),
])
def test_what_the_real_binary_refuses_the_simulated_one_refuses(args, message):
    _need()
    res = _real(args)
    assert res["rc"] == 1 and message in res["output"], res["output"][-1000:]
    with pytest.raises(ValueError, match=re.escape(message)):
        winsim_exporter.enabled_collectors(winsim_exporter.parse_flags(args))


@pytest.fixture
def host(tmp_path):
    h = core.create_host(str(tmp_path), "w")
    core.write_binary(h.local_path(EXE), "windows_exporter", VERSION)
    return h


def _put(host, win_path, text):
    local = host.local_path(win_path)
    os.makedirs(os.path.dirname(local), exist_ok=True)
    with open(local, "w") as f:
        f.write(text)


def _start(host, args):
    from ansible_collections.ansible.windows.plugins.module_utils.winsim_cmdline import render_command_line
    with host.open():
        winsim_scm.create(host.state, "windows_exporter", render_command_line([EXE] + args))
        winsim_scm.start(host, "windows_exporter")
        svc = winsim_scm.find(host.state, "windows_exporter")
        return svc, (host.state.get("processes") or {}).get("windows_exporter")


def test_the_service_runs_with_tls_and_users_from_its_web_configuration(host):
    _put(host, "C:\\k\\windows_exporter-tls.crt", CERT)
    _put(host, "C:\\k\\windows_exporter-tls.key", "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n")
    web = {"basic_auth_users": {"prom": BCRYPT}, "tls_server_config": {
        "cert_file": "C:\\k\\windows_exporter-tls.crt", "key_file": "C:\\k\\windows_exporter-tls.key"}}
    _put(host, WEB, json.dumps(web))
    svc, proc = _start(host, ROLE_ARGS[:2] + ["--web.config.file=" + WEB])
    assert svc["status"] == "Running" and not svc.get("crash"), svc.get("last_error")
    assert proc == {"program": "windows_exporter", "listen_address": ":9182",
                    "collectors": DEFAULTS["kubewin_windows_exporter_collectors"], "tls": True,
                    "basic_auth_users": ["prom"]}


@pytest.mark.parametrize("web, error", [
    (None, "The system cannot find the file specified"),
    ('{"basic_auth_users": {"prom": "plain-password"}}', "not a bcrypt|too short to be a bcrypted password"),
    ('{"tls_config": {}}', "field tls_config not found"),
    ('{"tls_server_config": {"cert_file": "C:\\\\k\\\\missing.crt", "key_file": "C:\\\\k\\\\missing.key"}}',
     "missing.crt"),
])
def test_a_web_configuration_exporter_toolkit_would_refuse_stops_the_service_after_it_ran(host, web, error):
    if web is not None:
        _put(host, WEB, web)
    svc, proc = _start(host, ROLE_ARGS)
    # 0_service.go reported Running first; the exit comes after, and the recovery actions apply
    assert svc["status"] == "Running" and svc.get("crash") and proc is None
    assert re.search(error, svc["crash"]["error"]), svc["crash"]["error"]


NEW_RELEASE = "C:\\mirror\\windows_exporter.exe"
FILES_TASK = """
    - name: files
      kubewin.nodes.win_host_files:
        directories: [{path: 'C:\\\\k'}]
        downloads: [{url: '%s', dest: '%s', sha512: '%s'%s}]
""" % (NEW_RELEASE.replace("\\", "\\\\"), EXE.replace("\\", "\\\\"), "%s", "%s")


def test_a_new_binary_stops_the_running_exporter_before_it_replaces_it(tmp_path):
    """A version change on a running windows_exporter (simulated: the lab has one release, so the host runs another
    file, the older release's stand-in, and the new one comes from a local path). Windows cannot overwrite a running
    program (winsim_files.in_use; ReplaceFile fails), so without ``service`` the files task fails and the old binary
    keeps running; with it the service is stopped just before the replacement, named in ``stopped``, and started
    again by the service task reading it itself. The same file again stops nothing."""
    import hashlib

    from winsim.testing import Lab

    lab = Lab(tmp_path / "winsim", nodes=1)
    host = core.Host(lab.root, "win-1")
    core.write_binary(host.local_path(EXE), "windows_exporter", "v0.31.7")
    core.write_binary(host.local_path(NEW_RELEASE), "windows_exporter", VERSION)
    with open(host.local_path(NEW_RELEASE), "rb") as f:
        new = f.read()
    sha = hashlib.sha512(new).hexdigest()
    _start(host, ROLE_ARGS[:2])
    rc, _, res = lab.play(FILES_TASK % (sha, ""))
    assert rc != 0 and "Unable to remove the file to be replaced" in res["files"]["win-1"]["msg"]
    assert lab.dump()["services"]["windows_exporter"]["status"] == "Running"
    service = ", service: windows_exporter"
    rc, _, res = lab.play(FILES_TASK % (sha, service) + """
    - name: service
      kubewin.nodes.win_host_service:
        name: windows_exporter
        path: '%s'
        args: %s
""" % (EXE.replace("\\", "\\\\"), json.dumps(ROLE_ARGS[:2])))
    assert rc == 0, res
    assert res["files"]["win-1"]["stopped"] == ["windows_exporter"] and res["service"]["win-1"]["changed"]
    assert lab.dump()["services"]["windows_exporter"]["status"] == "Running"
    with open(host.local_path(EXE), "rb") as f:
        assert f.read() == new
    rc, _, res = lab.play(FILES_TASK % (sha, service))
    assert rc == 0 and not res["files"]["win-1"]["changed"] and res["files"]["win-1"]["stopped"] == []
