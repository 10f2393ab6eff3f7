"""Tests of the Windows host simulator itself: its stand-in ansible.windows modules, HNS, the service manager,
containerd and kubeadm behave as the Windows originals do, and its own tools (fault switch, state dump, process
log) work. Driven by real ansible-playbook runs; no control plane needed. The collection's modules on the
simulator are tested in tests/lab/test_windows_modules.py."""

import json
import os
from unittest import mock

import pytest
from simhost import one, put
from winsim import core
from winsim.ps.winhost import run_kubewin_script as run_ps  # the real script text, interpreted

# isort: split
# winsim.core has put the stand-in ansible.windows collection and kubewin.nodes on sys.path.
from ansible_collections.ansible.windows.plugins.module_utils import winsim_files, winsim_kube

from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import files as host_files


def test_facts_look_like_windows(lab):
    rc, _, res = lab.play("""
        - name: facts
          ansible.builtin.setup:
    """)
    facts = one(res, "facts")["ansible_facts"]
    assert rc == 0
    assert facts["ansible_os_family"] == "Windows"
    assert facts["ansible_distribution_version"] == "10.0.20348.0"
    assert facts["ansible_hostname"] == "WIN-1"
    assert lab.ops() == ["setup"]  # ansible.builtin.setup resolves to ansible.windows.setup, as on Windows


def test_misspelt_option_of_an_ansible_basic_module_fails(lab):
    rc, _, res = lab.play("""
        - name: typo
          ansible.windows.win_service: {name: containerd, stat: started}
    """)
    r = one(res, "typo")
    assert rc != 0 and r["failed"]
    assert "Unsupported parameters for (win_service) module: stat" in r["msg"]


def test_misspelt_option_of_a_legacy_module_is_ignored_like_on_windows(lab):
    # win_file uses the legacy Parse-Args, which never checks for unknown options.
    rc, _, res = lab.play(r"""
        - name: typo
          ansible.windows.win_file: {path: 'C:\k', stae: directory}
    """)
    assert "will not be created" in one(res, "typo")["msg"]


def test_wrong_type_fails(lab):
    rc, _, res = lab.play("""
        - name: bad type
          ansible.windows.win_powershell: {script: x, depth: lots}
    """)
    assert rc != 0 and "depth" in one(res, "bad type")["msg"]


def test_check_mode_of_win_file_changes_nothing(lab):
    before = lab.dump()
    rc, _, res = lab.play(r"""
        - name: dir
          ansible.windows.win_file: {path: 'C:\k\new', state: directory}
    """, check=True)
    assert rc == 0 and one(res, "dir")["changed"]
    assert lab.dump() == before


def test_linux_modules_and_raw_do_not_run(lab):
    rc, _, res = lab.play("""
        - name: linux module
          ansible.builtin.file: {path: /tmp/winsim-should-not-exist, state: directory}
          ignore_errors: true
        - name: raw
          ansible.builtin.raw: Get-Service
          ignore_errors: true
    """)
    assert "is not a Windows module" in one(res, "linux module")["module_stderr"]
    assert one(res, "raw")["failed"]
    assert not os.path.exists("/tmp/winsim-should-not-exist")


def test_hns_rules(lab):
    # several adapters and none named: HNS cannot pick one
    core.edit(lab.root, "win-1", lambda st: st["adapters"].append(
        {"name": "Ethernet 2", "ip": "192.168.0.5", "prefix": 24, "mac": "00-15-5D-00-01-05"}))
    rc, _, res = lab.play("""
        - name: no adapter
          kubewin.nodes.win_hns_network: {name: cbr0, type: l2bridge, address_prefix: 10.244.1.0/24}
          ignore_errors: true
        - name: unknown adapter
          kubewin.nodes.win_hns_network: {name: cbr0, type: l2bridge, address_prefix: 10.244.1.0/24, adapter_name: Nope}
          ignore_errors: true
        - name: named adapter
          kubewin.nodes.win_hns_network:
            {name: cbr0, type: l2bridge, address_prefix: 10.244.1.0/24, adapter_name: Ethernet 2}
    """)
    assert "An adapter was not found" in one(res, "no adapter")["msg"]
    assert "An adapter was not found" in one(res, "unknown adapter")["msg"]
    assert one(res, "named adapter")["changed"]
    with core.Host(lab.root, "win-1").open(save=False) as h:
        assert h.state["hns"]["blips"] == [{"adapter": "Ethernet 2", "network": "cbr0", "pending": True}]


def test_hns_refusals_at_the_api():
    st = core.winsim_host.initial_state("x")
    call = core.winsim_hns.call
    net = json.loads(call(st, "POST", "/networks/", json.dumps({"Name": "n", "Type": "NAT"})))["Output"]
    dup = json.loads(call(st, "POST", "/networks/", json.dumps({"Name": "n", "Type": "NAT"})))
    assert not dup["Success"] and "already exist" in dup["Error"]
    ep = json.loads(call(st, "POST", "/endpoints/", json.dumps({"Name": "e", "VirtualNetwork": net["ID"]})))["Output"]
    pl = json.loads(call(st, "POST", "/policylists/", json.dumps({"References": ["/endpoints/" + ep["ID"]]})))["Output"]
    assert "endpoints attached" in json.loads(call(st, "DELETE", "/networks/" + net["ID"], ""))["Error"]
    assert "policy list" in json.loads(call(st, "DELETE", "/endpoints/" + ep["ID"], ""))["Error"]
    for path in ("/policylists/" + pl["ID"], "/endpoints/" + ep["ID"], "/networks/" + net["ID"]):
        assert json.loads(call(st, "DELETE", path, ""))["Success"]


def test_starting_kubelet_without_binary_fails_like_scm(lab):
    rc, _, res = lab.play("""
        - name: start
          kubewin.nodes.win_kubelet_service: {kubelet_version: v1.33.2, state: started}
    """)
    assert rc != 0 and "The system cannot find the file specified" in one(res, "start")["msg"]
    assert lab.dump()["services"]["kubelet"]["status"] == "Stopped"


def test_fault_switch(lab):
    core.set_fault(lab.root, "win-1", "script:hns_state", "fail_once")
    task = """
        - name: net
          kubewin.nodes.win_hns_network: {name: nat, type: nat}
          ignore_errors: true
    """
    rc, _, res = lab.play(task)
    assert "fault injected" in one(res, "net")["msg"]
    assert not one(res, "net", "win-2").get("failed")
    rc, _, res = lab.play(task)
    assert rc == 0 and one(res, "net")["changed"]  # fail_once: the retry succeeds
    core.set_fault(lab.root, "win-1", "win_get_url", "fail_always")
    rc, _, res = lab.play(r"""
        - name: get
          ansible.windows.win_get_url: {url: 'http://127.0.0.1:1/x', dest: 'C:\x'}
          ignore_errors: true
    """)
    assert "fault injected (fail_always) for win_get_url" in one(res, "get")["msg"]


def test_unknown_script_fails_loudly(lab):
    rc, _, res = lab.play("""
        - name: ps
          ansible.windows.win_powershell:
            script: Get-Service kubelet
          ignore_errors: true
        - name: unknown id
          ansible.windows.win_powershell:
            script: "# kubewin.nodes script: does_not_exist\\nparam()"
          ignore_errors: true
    """)
    assert one(res, "ps")["failed"]
    assert "winsim cannot run this PowerShell script" in one(res, "ps")["error"][0]["exception"]["message"]
    assert "no implementation of kubewin.nodes script 'does_not_exist'" in \
        one(res, "unknown id")["error"][0]["exception"]["message"]


def test_win_powershell_check_mode_skips_scripts_without_should_process(lab):
    rc, _, res = lab.play("""
        - name: apply
          ansible.windows.win_powershell:
            script: "# kubewin.nodes script: does_not_exist\\nparam()"
    """, check=True)
    assert rc == 0 and one(res, "apply")["changed"]


def test_state_dump_before_after(lab, tmp_path):
    before = lab.dump()
    src = tmp_path / "a.txt"
    src.write_text("hello")
    rc, _, res = lab.play(r"""
        - name: copy
          ansible.windows.win_copy: {src: '%s', dest: 'C:\k\'}
        - name: copy again
          ansible.windows.win_copy: {src: '%s', dest: 'C:\k\'}
        - name: env
          ansible.windows.win_environment: {name: KUBECONFIG, value: 'C:\etc\kubernetes\kubelet.conf', level: machine}
    """ % (src, src))
    assert rc == 0 and one(res, "copy")["changed"] and not one(res, "copy again")["changed"]
    after = lab.dump()
    assert after != before
    assert set(after["files"]) - set(before["files"]) == {"C:\\k", "C:\\k\\a.txt"}
    rc, _, res = lab.play(r"""
        - name: rm
          ansible.windows.win_file: {path: 'C:\k', state: absent}
        - name: env
          ansible.windows.win_environment: {name: KUBECONFIG, state: absent, level: machine}
    """)
    assert lab.dump() == before


def test_kubeadm_stand_in_binary(lab):
    core.write_binary(os.path.join(lab.root, "hosts", "win-1", "C", "k", "kubeadm.exe"), "kubeadm", "v1.33.2")
    rc, _, res = lab.play(r"""
        - name: version
          ansible.windows.win_command: 'C:\k\kubeadm.exe version -o short'
        - name: missing
          ansible.windows.win_command: 'C:\k\kubectl.exe version'
          ignore_errors: true
        - name: reset
          ansible.windows.win_shell: '& ''C:\k\kubeadm.exe'' reset -f'
    """)
    assert one(res, "version")["stdout"].strip() == "v1.33.2"
    assert "is not recognized as an internal or external command" in one(res, "missing")["stderr"]
    assert one(res, "reset")["rc"] == 0


def test_kubeadm_join_runs_kubelet_version_from_the_path_of_its_process(lab):
    # kubernetes v1.37.2 cmd/kubeadm/app/preflight/checks.go: KubeletVersion and SystemVerification run
    # `kubelet --version` through a Path lookup (preflight/utils.go GetKubeletVersion).
    for tool in ("kubeadm", "kubelet"):
        core.write_binary(os.path.join(lab.root, "hosts", "win-1", "C", "k", tool + ".exe"), tool, "v1.37.2")
    # the joins pass preflight only to meet no server at discovery: fail that at once, not after 60 s
    with open(os.path.join(lab.root, "winsim.json")) as f:
        settings = json.load(f)
    with open(os.path.join(lab.root, "winsim.json"), "w") as f:
        json.dump(dict(settings, discovery_timeout=0), f)
    join = r"""
        - name: join
          ansible.windows.win_command:
            argv: ['C:\k\kubeadm.exe', join, '127.0.0.1:9', --token, abcdef.0123456789abcdef,
                   --discovery-token-unsafe-skip-ca-verification]
          ignore_errors: true
    """
    not_found = ("couldn't get kubelet version: cannot execute 'kubelet --version': exec: \"kubelet\": "
                 "executable file not found in %PATH%")
    rc, _, res = lab.play(join)
    err = one(res, "join")["stderr"]
    assert "[ERROR KubeletVersion]: " + not_found in err and "[ERROR SystemVerification]: " + not_found in err
    # On the machine Path, but the session keeps the environment it started with (a new logon sees it).
    rc, _, res = lab.play(r"""
        - name: path
          ansible.windows.win_path: {elements: ['C:\k'], scope: machine}
    """ + join)
    assert one(res, "path")["changed"] and "KubeletVersion" in one(res, "join")["stderr"]
    # With Path in the environment of the process, the preflight passes (discovery then fails: no server).
    rc, _, res = lab.play(join.replace("ignore_errors: true", "ignore_errors: true\n          environment: "
                                       "{Path: 'C:\\k;C:\\Windows\\system32'}"))
    assert "[preflight]" not in one(res, "join")["stderr"] and "KubeletVersion" not in one(res, "join")["stderr"]


def _dump_answer(host, version=None):
    from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import facts as nf
    with host.open():
        if version:
            host.state["runtime"]["version"] = version
            core.write_binary(host.local_path("C:\\Program Files\\containerd\\containerd.exe"), "containerd", version)
        answer = run_ps(host, "node_facts", nf.script_parameters(), False)["result"]
    return answer, nf.node_facts(answer)


def test_containerd_config_dump_and_the_cni_directories_node_facts_read(tmp_path):
    # Stock containerd 1.7: the Program Files defaults, dumped as go-toml v1 writes them.
    answer, facts = _dump_answer(core.create_host(str(tmp_path), "a", profile="ws2022-containerd-1.7"))
    # Out-String joins the lines with Environment.NewLine: CRLF on Windows
    dump = answer["services"]["containerd"]["config_dump"]
    assert "version = 2\r\n" in dump and '[plugins."io.containerd.grpc.v1.cri".cni]' in dump
    assert '      bin_dir = "C:\\\\Program Files\\\\containerd\\\\cni\\\\bin"' in dump
    assert facts["cni"]["containerd"] == {"bin_dir": "C:\\Program Files\\containerd\\cni\\bin",
                                          "conf_dir": "C:\\Program Files\\containerd\\cni\\conf",
                                          "source": "containerd config dump", "conf_files": [], "max_conf_num": 1}
    # Installed the sig-windows-tools way: config.toml moves both directories.
    _, facts = _dump_answer(core.create_host(str(tmp_path), "b", profile="ws2022-containerd-etc-cni"))
    assert (facts["cni"]["containerd"]["bin_dir"], facts["cni"]["containerd"]["conf_dir"]) == (
        "c:\\opt\\cni\\bin", "c:\\etc\\cni\\net.d")
    # containerd 2.x migrates that version 2 file: bin_dir becomes bin_dirs under io.containerd.cri.v1.runtime.
    host = core.create_host(str(tmp_path), "c", profile="ws2022-containerd-etc-cni")
    # the same read lists the configuration directory the dump names (a TOML literal string here): an older
    # sig-windows-tools NAT configuration there sorts before 10-flannel.conf (realnode F4)
    os.makedirs(host.local_path("c:\\etc\\cni\\net.d\\sub"), exist_ok=True)
    for name in ("0-containerd-nat.json", "10-flannel.conf"):
        with open(host.local_path("c:\\etc\\cni\\net.d\\" + name), "w") as f:
            f.write("{}")
    answer, facts = _dump_answer(host, "2.1.4")
    assert facts["cni"]["containerd"]["conf_files"] == ["0-containerd-nat.json", "10-flannel.conf"]
    dump = answer["services"]["containerd"]["config_dump"]
    assert "version = 3\r\n" in dump and "[plugins.'io.containerd.cri.v1.runtime'.cni]" in dump
    assert "bin_dirs = ['c:/opt/cni/bin']" in dump
    assert facts["cni"]["containerd"]["bin_dir"] == "c:\\opt\\cni\\bin"
    # A config.toml containerd cannot read: node_facts reports it, preflight stops on it.
    host = core.create_host(str(tmp_path), "d")
    with open(host.local_path("C:\\Program Files\\containerd\\config.toml"), "w") as f:
        f.write("version = 2\n[plugins\n")
    _, facts = _dump_answer(host)
    assert facts["cni"]["containerd"] == {"error": "`containerd.exe config dump` did not answer (error: exit code 1)"}
    # The service's own --config is used for the dump too.
    host = core.create_host(str(tmp_path), "e")
    with host.open():
        host.state["services"]["containerd"]["image_path"] = (
            '"C:\\Program Files\\containerd\\containerd.exe" --config "C:\\ctd\\my config.toml" --run-service')
    os.makedirs(os.path.dirname(host.local_path("C:\\ctd\\my config.toml")), exist_ok=True)
    with open(host.local_path("C:\\ctd\\my config.toml"), "w") as f:
        f.write('version = 2\n[plugins."io.containerd.grpc.v1.cri".cni]\nconf_dir = "C:\\\\cni"\n')
    os.makedirs(host.local_path("C:\\cni"), exist_ok=True)
    with open(host.local_path("C:\\cni\\05-other.conflist"), "w") as f:
        f.write("{}")
    answer, facts = _dump_answer(host)
    assert facts["cni"]["containerd"]["conf_dir"] == "C:\\cni"
    # a TOML basic string (containerd 1.x) names the directory listed in the same read
    assert facts["cni"]["containerd"]["conf_files"] == ["05-other.conflist"]


def test_inherited_access_rules():
    assert winsim_files.inherited_sddl(winsim_files.DRIVE_DEFAULT_SDDL, True) == \
        "D:AI(A;OICIID;FA;;;BA)(A;OICIID;FA;;;SY)(A;OICIID;0x1200a9;;;BU)"
    assert winsim_files.inherited_sddl(host_files.RESTRICTED_DIR_SDDL, False) == "D:AI(A;ID;FA;;;SY)(A;ID;FA;;;BA)"


JOIN_TOKEN = "abcdef.0123456789abcdef"


JOIN_PIN = "sha256:" + "ab" * 32


def _join_config(**overrides):
    doc = {"apiVersion": "kubeadm.k8s.io/v1beta4", "kind": "JoinConfiguration",
           "discovery": {"bootstrapToken": {"apiServerEndpoint": "127.0.0.1:1", "token": JOIN_TOKEN,
                                            "caCertHashes": [JOIN_PIN]}},
           "nodeRegistration": {"name": "w", "criSocket": "npipe:////./pipe/containerd-containerd"}}
    doc.update(overrides)
    return json.dumps(doc)


def _kubeadm_join(tmp_path, args, config=None):
    host = core.create_host(str(tmp_path), "w")
    for tool in ("kubeadm", "kubelet"):  # kubeadm's preflight runs `kubelet --version` from its Path
        core.write_binary(host.local_path("C:\\k\\%s.exe" % tool), tool, "v1.37.2")
    if config is not None:
        put(host, "C:\\k\\join.yaml")
        with open(host.local_path("C:\\k\\join.yaml"), "w") as f:
            f.write(config)
    # the process Path the roles give kubeadm (winsim_binaries.session_path reads a variable named Path)
    with host.open(), mock.patch.dict(os.environ, {"Path": "C:\\k;C:\\Windows\\system32"}):
        return winsim_kube.kubeadm(host, "v1.37.2", ["join"] + args, None)


@pytest.mark.parametrize("extra, refused", [
    (["--token", JOIN_TOKEN], "[token]"),
    (["--cri-socket", "npipe:////./pipe/x", "--discovery-token-ca-cert-hash", JOIN_PIN],
     "[cri-socket discovery-token-ca-cert-hash]"),
])
def test_kubeadm_join_refuses_config_mixed_with_other_flags(tmp_path, extra, refused):
    rc, _, err = _kubeadm_join(tmp_path, ["--config", "C:\\k\\join.yaml"] + extra, _join_config())
    assert rc == 1 and "can not mix '--config' with arguments %s" % refused in err


def test_kubeadm_join_config_file_missing_or_without_a_join_configuration(tmp_path):
    rc, _, err = _kubeadm_join(tmp_path, ["--config", "C:\\k\\nope.yaml"])
    assert rc == 1 and 'unable to read config from "C:\\k\\nope.yaml"' in err
    rc, _, err = _kubeadm_join(tmp_path / "b", ["--config", "C:\\k\\join.yaml"],
                               json.dumps({"apiVersion": "kubeadm.k8s.io/v1beta4", "kind": "InitConfiguration"}))
    assert rc == 1 and "no JoinConfiguration found in the supplied config" in err


@pytest.mark.parametrize("overrides, message", [
    ({"apiVersion": "kubeadm.k8s.io/v1beta3"}, 'old API spec: "kubeadm.k8s.io/v1beta3"'),
    ({"discovery": {"bootstrapToken": {"apiServerEndpoint": "127.0.0.1:1", "token": JOIN_TOKEN}}},
     "using token-based discovery without caCertHashes can be unsafe"),
    ({"discovery": {}}, "bootstrapToken or file must be set"),
    ({"nodeRegistration": {"name": "w", "criSocket": "unix:///run/containerd.sock"}},
     'only URL scheme "npipe" is supported'),
])
def test_kubeadm_join_config_is_validated_like_kubeadm(tmp_path, overrides, message):
    rc, _, err = _kubeadm_join(tmp_path, ["--config", "C:\\k\\join.yaml"], _join_config(**overrides))
    assert rc == 1 and message in err


def test_kubeadm_join_config_unknown_field_is_a_warning_and_tls_token_defaults_to_the_token(tmp_path):
    cfg = json.loads(_join_config())
    cfg["discovery"]["timeout"] = "5m"  # a v1beta3 field, gone in v1beta4 (now timeouts.discovery)
    with open(os.path.join(str(tmp_path), "winsim.json"), "w") as f:
        json.dump({"discovery_timeout": 0}, f)
    rc, out, err = _kubeadm_join(tmp_path, ["--config", "C:\\k\\join.yaml"], json.dumps(cfg))
    assert 'strict decoding error: unknown field "discovery.timeout"' in err
    # validation passed (tlsBootstrapToken defaulted to the token); it fails only at discovery (nothing listens)
    assert rc == 1 and "tlsBootstrapToken" not in err, err
    assert "couldn't validate the identity of the API Server" in err and 'API Server "127.0.0.1:1"' in out


def test_processes_log_records_command_lines(tmp_path):
    _kubeadm_join(tmp_path, ["--config", "C:\\k\\join.yaml"], "")
    # kubeadm.kubeadm is called directly above, so nothing is logged; run() is what logs
    host = core.Host(str(tmp_path), "w")
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_binaries
    with host.open():
        winsim_binaries.run(host, ["C:\\k\\kubeadm.exe", "version", "-o", "short"])
    assert core.command_lines(str(tmp_path), "w") == ["C:\\k\\kubeadm.exe version -o short"]



def test_node_facts_lists_cri_dockerds_cni_conf_dir(tmp_path):
    """cri-dockerd's --cni-conf-dir (its service command line) is listed in the same read (realnode F4)."""
    host = core.create_host(str(tmp_path), "a", profile="ws2022-docker-cri")
    with host.open():
        svc = host.state["services"]["cri-dockerd"]
        svc["image_path"] = svc["image_path"] + ' --cni-conf-dir "C:\\my cni\\conf"'
    os.makedirs(host.local_path("C:\\my cni\\conf"), exist_ok=True)
    with open(host.local_path("C:\\my cni\\conf\\0-nat.json"), "w") as f:
        f.write("{}")
    _, facts = _dump_answer(host)
    assert facts["cni"]["docker"]["conf_dir"] == "C:\\my cni\\conf"
    assert facts["cni"]["docker"]["conf_files"] == ["0-nat.json"]
