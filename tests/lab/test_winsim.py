# -*- coding: utf-8 -*-
"""The Windows host simulator, driven by real ansible-playbook runs (no control plane needed)."""

import json
import os
import sys
from unittest import mock

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from winsim import core  # noqa: E402
from winsim.ps.winhost import run_kubewin_script as run_ps  # noqa: E402  (the real script text, interpreted)
from winsim.testing import Lab  # noqa: E402


@pytest.fixture
def lab(tmp_path):
    return Lab(tmp_path / "winsim", nodes=2)


def _one(results, name, host="win-1"):
    return results[name][host]


def test_facts_look_like_windows(lab):
    rc, _, res = lab.play("""
        - name: facts
          ansible.builtin.setup:
    """)
    facts = _one(res, "facts")["ansible_facts"]
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
    r = _one(res, "typo")
    assert rc != 0 and r["failed"]
    assert "Unsupported parameters for (win_service) module: stat" in r["msg"]


def test_misspelt_option_of_a_legacy_module_is_ignored_like_on_windows(lab):
    # win_file uses the legacy Parse-Args, which never checks for unknown options.
    rc, _, res = lab.play(r"""
        - name: typo
          ansible.windows.win_file: {path: 'C:\k', stae: directory}
    """)
    assert "will not be created" in _one(res, "typo")["msg"]


def test_wrong_type_fails(lab):
    rc, _, res = lab.play("""
        - name: bad type
          ansible.windows.win_powershell: {script: x, depth: lots}
    """)
    assert rc != 0 and "depth" in _one(res, "bad type")["msg"]


def test_check_mode_of_win_file_changes_nothing(lab):
    before = lab.dump()
    rc, _, res = lab.play(r"""
        - name: dir
          ansible.windows.win_file: {path: 'C:\k\new', state: directory}
    """, check=True)
    assert rc == 0 and _one(res, "dir")["changed"]
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
    assert "is not a Windows module" in _one(res, "linux module")["module_stderr"]
    assert _one(res, "raw")["failed"]
    assert not os.path.exists("/tmp/winsim-should-not-exist")


def test_hns_network_create_then_idempotent(lab):
    task = """
        - name: net
          kubewin.nodes.hns_network: {name: cbr0, type: l2bridge, address_prefix: 10.244.1.0/24, gateway: 10.244.1.1}
    """
    rc, _, res = lab.play(task)
    assert rc == 0 and _one(res, "net")["changed"]
    dump = lab.dump()
    assert [n["Name"] for n in dump["hns"]["networks"]] == ["cbr0"]
    assert dump["hns"]["vswitches"] == {"Ethernet": "vEthernet (Ethernet)"}
    lab.reset_ops()
    rc, _, res = lab.play(task)
    assert rc == 0 and not _one(res, "net")["changed"]
    assert lab.ops() == ["win_powershell"]  # one read, nothing applied


def test_hns_rules(lab):
    # several adapters and none named: HNS cannot pick one
    core.edit(lab.root, "win-1", lambda st: st["adapters"].append(
        {"name": "Ethernet 2", "ip": "192.168.0.5", "prefix": 24, "mac": "00-15-5D-00-01-05"}))
    rc, _, res = lab.play("""
        - name: no adapter
          kubewin.nodes.hns_network: {name: cbr0, type: l2bridge, address_prefix: 10.244.1.0/24}
          ignore_errors: true
        - name: unknown adapter
          kubewin.nodes.hns_network: {name: cbr0, type: l2bridge, address_prefix: 10.244.1.0/24, adapter_name: Nope}
          ignore_errors: true
        - name: named adapter
          kubewin.nodes.hns_network:
            {name: cbr0, type: l2bridge, address_prefix: 10.244.1.0/24, adapter_name: Ethernet 2}
    """)
    assert "An adapter was not found" in _one(res, "no adapter")["msg"]
    assert "An adapter was not found" in _one(res, "unknown adapter")["msg"]
    assert _one(res, "named adapter")["changed"]
    with core.Host(lab.root, "win-1").open(save=False) as h:
        assert h.state["hns"]["blips"] == [{"adapter": "Ethernet 2", "network": "cbr0"}]


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


def test_hns_cleanup_removes_flannel_network_with_endpoint(lab):
    core.flannel(lab.root, "win-1", backend="host-gw")
    rc, _, res = lab.play("""
        - name: cleanup
          kubewin.nodes.hns_cleanup: {networks: [cbr0]}
    """)
    assert rc == 0 and _one(res, "cleanup")["removed"]["endpoints"] == ["cbr0_ep"]
    assert lab.dump()["hns"]["networks"] == []


def test_kubelet_service_registered_in_scm(lab):
    rc, _, res = lab.play("""
        - name: svc
          kubewin.nodes.win_kubelet_service: {kubelet_version: v1.33.2}
        - name: again
          kubewin.nodes.win_kubelet_service: {kubelet_version: v1.33.2}
    """)
    assert rc == 0 and _one(res, "svc")["changed"] and not _one(res, "again")["changed"]
    svc = lab.dump()["services"]["kubelet"]
    assert svc["status"] == "Stopped" and svc["start"] == 2 and svc["dependencies"] == ["containerd"]
    assert "--windows-service" in svc["image_path"]
    assert svc["failure_actions_on_non_crash"] == 1


def test_starting_kubelet_without_binary_fails_like_scm(lab):
    rc, _, res = lab.play("""
        - name: start
          kubewin.nodes.win_kubelet_service: {kubelet_version: v1.33.2, state: started}
    """)
    assert rc != 0 and "The system cannot find the file specified" in _one(res, "start")["msg"]
    assert lab.dump()["services"]["kubelet"]["status"] == "Stopped"


def test_fault_switch(lab):
    core.set_fault(lab.root, "win-1", "script:hns_state", "fail_once")
    task = """
        - name: net
          kubewin.nodes.hns_network: {name: nat, type: nat}
          ignore_errors: true
    """
    rc, _, res = lab.play(task)
    assert "fault injected" in _one(res, "net")["msg"]
    assert not _one(res, "net", "win-2").get("failed")
    rc, _, res = lab.play(task)
    assert rc == 0 and _one(res, "net")["changed"]  # fail_once: the retry succeeds
    core.set_fault(lab.root, "win-1", "win_get_url", "fail_always")
    rc, _, res = lab.play(r"""
        - name: get
          ansible.windows.win_get_url: {url: 'http://127.0.0.1:1/x', dest: 'C:\x'}
          ignore_errors: true
    """)
    assert "fault injected (fail_always) for win_get_url" in _one(res, "get")["msg"]


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
    assert _one(res, "ps")["failed"]
    assert "winsim cannot run this PowerShell script" in _one(res, "ps")["error"][0]["exception"]["message"]
    assert "no implementation of kubewin.nodes script 'does_not_exist'" in \
        _one(res, "unknown id")["error"][0]["exception"]["message"]


def test_win_powershell_check_mode_skips_scripts_without_should_process(lab):
    rc, _, res = lab.play("""
        - name: apply
          ansible.windows.win_powershell:
            script: "# kubewin.nodes script: does_not_exist\\nparam()"
    """, check=True)
    assert rc == 0 and _one(res, "apply")["changed"]


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
    assert rc == 0 and _one(res, "copy")["changed"] and not _one(res, "copy again")["changed"]
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
    assert _one(res, "version")["stdout"].strip() == "v1.33.2"
    assert "is not recognized as an internal or external command" in _one(res, "missing")["stderr"]
    assert _one(res, "reset")["rc"] == 0


def test_kubeadm_join_runs_kubelet_version_from_the_path_of_its_process(lab):
    # kubernetes v1.37.2 cmd/kubeadm/app/preflight/checks.go: KubeletVersion and SystemVerification run
    # `kubelet --version` through a Path lookup (preflight/utils.go GetKubeletVersion).
    for tool in ("kubeadm", "kubelet"):
        core.write_binary(os.path.join(lab.root, "hosts", "win-1", "C", "k", tool + ".exe"), tool, "v1.37.2")
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
    err = _one(res, "join")["stderr"]
    assert "[ERROR KubeletVersion]: " + not_found in err and "[ERROR SystemVerification]: " + not_found in err
    # On the machine Path, but the session keeps the environment it started with (a new logon sees it).
    rc, _, res = lab.play(r"""
        - name: path
          ansible.windows.win_path: {elements: ['C:\k'], scope: machine}
    """ + join)
    assert _one(res, "path")["changed"] and "KubeletVersion" in _one(res, "join")["stderr"]
    # With Path in the environment of the process, the preflight passes (discovery then fails: no server).
    rc, _, res = lab.play(join.replace("ignore_errors: true", "ignore_errors: true\n          environment: "
                                       "{Path: 'C:\\k;C:\\Windows\\system32'}"))
    assert "[preflight]" not in _one(res, "join")["stderr"] and "KubeletVersion" not in _one(res, "join")["stderr"]


# --- kubewin.nodes' node scripts: node_facts, files_state/node_sync, service environment ------------
sys.path.insert(0, os.path.join(core.REPO, "tests", "lab"))
import mirror  # noqa: E402
from ansible_collections.ansible.windows.plugins.module_utils import winsim_files  # noqa: E402

from ansible_collections.kubewin.nodes.plugins.module_utils import node_files  # noqa: E402


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("mirror"))
    manifest = mirror.build(root)
    server, url = mirror.start_server(root)
    yield url, manifest, mirror.docroot(root)
    server.shutdown()
    server.server_close()


def _urls(served):
    url, manifest = served[:2]
    v = manifest["versions"]
    kubelet = mirror.layout.kubernetes_path(v["kubernetes"][0], "kubelet.exe")
    return {
        "kubelet": url + "/" + kubelet, "kubelet_sha": manifest["files"][kubelet]["sha512"],
        "cni": url + "/" + mirror.layout.cni_path(v["cni"][0]),
        "flanneld": url + "/" + mirror.layout.flannel_path(v["flannel"][0]),
        "flanneld_sha": manifest["files"][mirror.layout.flannel_path(v["flannel"][0])]["sha512"],
        "version": v["kubernetes"][0],
    }


def test_node_facts_read_the_host_in_one_operation(lab):
    rc, _, res = lab.play("""
        - name: facts
          kubewin.nodes.win_node_facts:
            extra_paths: ['C:\\Windows\\System32', 'D:\\nothing']
    """, check=True)
    node = _one(res, "facts")["ansible_facts"]["kubewin_node"]
    assert rc == 0 and lab.ops() == ["win_powershell"]
    assert (node["hostname"], node["computer_name"]) == ("win-1", "WIN-1")
    assert node["windows_build"] == "10.0.20348" and node["windows_build_full"] == "10.0.20348.2849"
    assert node["runtimes"]["containerd"] == {"service_exists": True, "service_status": "Running",
                                              "pipe_exists": True, "version": "2.3.5"}
    assert not node["runtimes"]["docker"]["service_exists"] and not node["runtimes"]["docker"]["pipe_exists"]
    assert [(a["name"], a["ipv4"]) for a in node["adapters"]] == [("Ethernet", ["10.0.0.11"])]
    assert node["join_state"] == "fresh" and node["services"]["kubelet"] == {"exists": False, "status": None}
    assert node["paths"]["C:\\Windows\\System32"] is True and node["paths"]["D:\\nothing"] is False
    # an interrupted join, and an HNS network that moved the address to the vSwitch's host vNIC
    core.write_binary(os.path.join(lab.root, "hosts", "win-1", "C", "etc", "kubernetes", "pki", "ca.crt"), "x", "1")
    core.flannel(lab.root, "win-1", backend="host-gw")
    rc, _, res = lab.play("""
        - name: facts
          kubewin.nodes.win_node_facts:
    """)
    node = _one(res, "facts")["ansible_facts"]["kubewin_node"]
    assert node["join_state"] == "partial"
    assert [(a["name"], a["ipv4"]) for a in node["adapters"]] == [("Ethernet", []),
                                                                   ("vEthernet (Ethernet)", ["10.0.0.11"])]


def test_node_facts_script_answer_matches_the_contract(tmp_path):
    host = core.create_host(str(tmp_path), "w", profile="ws2022-docker")
    with host.open():
        answer = run_ps(host, "node_facts", {"Services": ["docker", "containerd"], "VersionOf": ["docker"],
                                             "Paths": ["\\\\.\\pipe\\docker_engine"]}, False)["result"]
    assert answer["pipes"] == ["docker_engine"] and answer["paths"] == {"\\\\.\\pipe\\docker_engine": True}
    assert answer["services"]["docker"]["version_output"].startswith("Docker version 24.0.7, build ")
    assert answer["services"]["containerd"] == {"exists": False, "status": None, "image_path": None,
                                                "version_output": None}
    assert answer["machine_path"] == core.winsim_host.INITIAL_PATH


def _dump_answer(host, version=None):
    from ansible_collections.kubewin.nodes.plugins.module_utils import node_facts as nf
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
                                          "source": "containerd config dump"}
    # Installed the sig-windows-tools way: config.toml moves both directories.
    _, facts = _dump_answer(core.create_host(str(tmp_path), "b", profile="ws2022-containerd-etc-cni"))
    assert (facts["cni"]["containerd"]["bin_dir"], facts["cni"]["containerd"]["conf_dir"]) == (
        "c:\\opt\\cni\\bin", "c:\\etc\\cni\\net.d")
    # containerd 2.x migrates that version 2 file: bin_dir becomes bin_dirs under io.containerd.cri.v1.runtime.
    answer, facts = _dump_answer(core.create_host(str(tmp_path), "c", profile="ws2022-containerd-etc-cni"), "2.1.4")
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
    _, facts = _dump_answer(host)
    assert facts["cni"]["containerd"]["conf_dir"] == "C:\\cni"


def test_inherited_access_rules():
    assert winsim_files.inherited_sddl(winsim_files.DRIVE_DEFAULT_SDDL, True) == \
        "D:AI(A;OICIID;FA;;;BA)(A;OICIID;FA;;;SY)(A;OICIID;0x1200a9;;;BU)"
    assert winsim_files.inherited_sddl(node_files.RESTRICTED_DIR_SDDL, False) == "D:AI(A;ID;FA;;;SY)(A;ID;FA;;;BA)"


def _files_task(served, name="files", **extra):
    u = _urls(served)
    task = {"directories": [{"path": "C:\\k"}, {"path": "C:\\opt\\cni\\bin", "restricted": False}],
            "downloads": [{"url": u["kubelet"], "dest": "C:\\k\\kubelet.exe"},
                          {"url": u["cni"], "extract_dir": "C:\\opt\\cni\\bin"},
                          {"url": u["flanneld"], "dest": "C:\\k\\flannel\\flanneld.exe",
                           "checksum": u["flanneld_sha"]}],
            "files": [{"path": "C:\\k\\flannel\\net-conf.json", "content": '{"Network": "10.244.0.0/16"}\n'}]}
    task.update(extra)
    return "- name: %s\n  kubewin.nodes.win_node_files: %s\n" % (name, json.dumps(task))


def test_node_files_download_extract_write_then_nothing(lab, served):
    u = _urls(served)
    before = lab.dump()
    rc, _, res = lab.play(_files_task(served), check=True)
    assert rc == 0 and _one(res, "files")["changed"] and lab.dump() == before  # check mode changes nothing
    lab.reset_ops()
    rc, out, res = lab.play(_files_task(served))
    r = _one(res, "files")
    assert rc == 0 and r["changed"], r
    assert lab.ops() == ["win_powershell", "win_powershell"]  # one read, one write
    drive = os.path.join(lab.root, "hosts", "win-1", "C")
    with open(os.path.join(drive, "k", "kubelet.exe")) as f:
        assert f.readline().split() == ["KUBEWIN-SIM-BINARY", "kubelet", u["version"]]
    assert sorted(os.listdir(os.path.join(drive, "opt", "cni", "bin"))) == [
        # README.md and LICENSE are in the release archive too (containernetworking/plugins release workflow)
        ".kubewin-cni-plugins-windows-amd64-v1.6.2.tgz.sha512", "LICENSE", "README.md", "host-local.exe",
        "win-bridge.exe", "win-overlay.exe"]
    assert not [f for _, _, fs in os.walk(drive) for f in fs if f.endswith(".kubewin-download")]
    dump = lab.dump()
    assert dump["sddl"] == {"c:\\k": node_files.RESTRICTED_DIR_SDDL}
    with core.Host(lab.root, "win-1").open(save=False) as h:
        assert winsim_files.effective_sddl(h, "C:\\opt\\cni\\bin") == \
            "D:AI(A;OICIID;FA;;;BA)(A;OICIID;FA;;;SY)(A;OICIID;0x1200a9;;;BU)"
        assert winsim_files.effective_sddl(h, "C:\\k\\kubelet.exe") == "D:AI(A;ID;FA;;;SY)(A;ID;FA;;;BA)"
    lab.reset_ops()
    rc, _, res = lab.play(_files_task(served))
    assert rc == 0 and not _one(res, "files")["changed"]
    assert lab.ops() == ["win_powershell"]  # exactly one remote operation on a converged node
    assert lab.dump() == dump


def test_node_files_checksum_mismatch_leaves_nothing(lab, served):
    u = _urls(served)
    wrong = "0" * 128
    rc, _, res = lab.play("""
        - name: files
          kubewin.nodes.win_node_files:
            downloads: [{url: '%s', dest: 'C:\\k\\kubelet.exe', checksum: '%s'}]
          ignore_errors: true
    """ % (u["kubelet"], wrong))
    msg = _one(res, "files")["msg"]
    assert "checksum mismatch for %s: expected sha512 %s, got %s" % (u["kubelet"], wrong, u["kubelet_sha"]) in msg
    assert os.listdir(os.path.join(lab.root, "hosts", "win-1", "C", "k")) == []


def test_node_files_from_a_file_share_and_through_a_proxy(lab, served):
    u = _urls(served)
    share = os.path.join(lab.root, "shares", "FileServer", "k8s")
    os.makedirs(share)
    with open(os.path.join(share, "kubelet.exe"), "wb") as f, \
            open(os.path.join(served[2], mirror.layout.kubernetes_path(u["version"], "kubelet.exe")), "rb") as src:
        f.write(src.read())
    proxy = mirror.ForwardProxy(served[0])
    try:
        proxied = u["kubelet"].replace(served[0], "http://mirror.kubewin.test")
        rc, _, res = lab.play("""
            - name: share
              kubewin.nodes.win_node_files:
                downloads: [{url: '\\\\fileserver\\K8S\\kubelet.exe', dest: 'C:\\k\\a.exe', checksum: '%s'}]
            - name: proxy
              kubewin.nodes.win_node_files:
                downloads: [{url: '%s', dest: 'C:\\k\\b.exe'}]
                proxy: '%s'
        """ % (u["kubelet_sha"], proxied, proxy.url))
    finally:
        proxy.close()
    assert rc == 0 and _one(res, "share")["changed"] and _one(res, "proxy")["changed"], res
    # for each of the two hosts, the controller fetched the checksum and the node the file, both through the proxy
    assert sorted(proxy.requests) == [proxied] * 2 + [proxied + ".sha512"] * 2, proxy.requests
    files = lab.dump()["files"]
    assert files["C:\\k\\a.exe"] == files["C:\\k\\b.exe"]


def test_node_files_fault_switch(lab, served):
    core.set_fault(lab.root, "win-1", "script:node_sync", "fail_once")
    rc, _, res = lab.play(_files_task(served) + "  ignore_errors: true\n")
    assert "fault injected (fail_once) for script:node_sync" in _one(res, "files")["msg"]
    assert "C:\\k" not in lab.dump()["files"]
    rc, _, res = lab.play(_files_task(served))
    assert rc == 0 and _one(res, "files")["changed"]


def test_node_files_secret_stays_out_of_verbose_output(lab):
    import subprocess
    secret = "kubewin-secret-9f1c2e7d"
    play = os.path.join(lab.root, "secret.yml")
    with open(play, "w") as f:
        f.write("""- hosts: win-1
  gather_facts: false
  tasks:
    - name: secret
      kubewin.nodes.win_node_files:
        files: [{path: 'C:\\etc\\kubernetes\\bootstrap-kubelet.conf', content: '%s', secret: true,
                 restricted: true}]
""" % secret)
    env = dict(os.environ, ANSIBLE_CONFIG=lab.cfg, ANSIBLE_NOCOLOR="1")
    p = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), play, "-vvv", "--diff"],
                       env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    assert secret not in p.stdout + p.stderr
    local = os.path.join(lab.root, "hosts", "win-1", "C", "etc", "kubernetes", "bootstrap-kubelet.conf")
    with open(local) as f:
        assert f.read() == secret
    with open(os.path.join(lab.root, "hosts", "win-1", "ops.log")) as f:
        assert secret not in f.read()
    assert lab.dump()["sddl"]["c:\\etc\\kubernetes\\bootstrap-kubelet.conf"] == node_files.RESTRICTED_FILE_SDDL


def test_node_service_environment(lab):
    svc = "kubewin.nodes.win_node_service: {name: kube-proxy, state: present, path: 'C:\\k\\kube-proxy.exe', " \
          "args: [--windows-service], environment: %s}"
    rc, _, res = lab.play("""
        - name: create
          %s
        - name: again
          %s
        - name: change
          %s
    """ % (svc % "{NODE_NAME: win-1, KUBE_NETWORK: cbr0}", svc % "{KUBE_NETWORK: cbr0, NODE_NAME: win-1}",
           svc % "{KUBE_NETWORK: vxlan0, NODE_NAME: win-1}"))
    assert rc == 0 and _one(res, "create")["changed"] and not _one(res, "again")["changed"]
    assert _one(res, "change")["differences"] == ["environment"]
    assert lab.dump()["services"]["kube-proxy"]["environment"] == ["KUBE_NETWORK=vxlan0", "NODE_NAME=win-1"]
    rc, _, res = lab.play("""
        - name: remove env
          %s
    """ % (svc % "{}"))
    assert rc == 0 and _one(res, "remove env")["changed"]
    assert lab.dump()["services"]["kube-proxy"]["environment"] == []


# --- files_state Paths, node_sync Remove/Prune, broken runtimes, Parameters, node components ------
from ansible_collections.ansible.windows.plugins.module_utils import winsim_scripts  # noqa: E402


def _put(host, *paths):
    for p in paths:
        local = host.local_path(p)
        os.makedirs(os.path.dirname(local), exist_ok=True)
        with open(local, "w") as f:
            f.write("x")


def test_files_state_paths_and_node_sync_remove_prune(tmp_path):
    host = core.create_host(str(tmp_path), "w")
    _put(host, "C:\\k\\a\\b.txt", "C:\\k\\c.txt", "C:\\var\\log\\kubelet\\x.log", "C:\\etc\\other\\keep.txt")
    os.makedirs(host.local_path("C:\\run\\flannel"))
    with host.open():
        paths = run_ps(host, "files_state", {"Paths": ["C:\\k", "C:\\run\\flannel", "C:\\K\\C.TXT", "C:\\nope",
                                                     "D:\\x"]}, False)["result"]["paths"]
        # a drive the host does not have is no "absent": Get-Item fails with DriveNotFoundException
        assert paths == {"C:\\k": "dir", "C:\\run\\flannel": "empty-dir", "C:\\K\\C.TXT": "file", "C:\\nope": None,
                         "D:\\x": "unreadable"}
        run_ps(host, "node_sync", {
            "Remove": ["C:\\k", "C:\\missing", "C:\\var\\log\\kubelet", "C:\\run\\flannel"],
            # in order: C:\var\log first, then C:\var (empty by then); C:\etc keeps what others put there
            "Prune": ["C:\\var\\log", "C:\\var", "C:\\etc", "C:\\run", "C:\\missing"]}, False)
        paths = run_ps(host, "files_state", {"Paths": ["C:\\k", "C:\\var", "C:\\etc", "C:\\run"]},
                       False)["result"]["paths"]
    assert paths == {"C:\\k": None, "C:\\var": None, "C:\\etc": "dir", "C:\\run": None}


def test_node_sync_remove_stops_at_the_program_of_a_running_service(tmp_path):
    host = core.create_host(str(tmp_path), "w")
    core.write_binary(host.local_path("C:\\k\\kube-proxy.exe"), "kube-proxy", "v1.33.2")
    _put(host, "C:\\k\\a\\x.txt", "C:\\k\\z.txt", "C:\\etc\\kube-proxy\\kubeconfig")
    with host.open():
        run_ps(host, "service_apply", {"Name": "kube-proxy", "Action": "create", "Run": "start", "CommandLine":
                                       "C:\\k\\kube-proxy.exe --windows-service "
                                       "--kubeconfig=C:\\etc\\kube-proxy\\kubeconfig --network-name=cbr0"}, False)
        with pytest.raises(core.SimError) as e:
            run_ps(host, "node_sync", {"Remove": ["C:\\k"]}, False)
        assert "Cannot remove item C:\\k\\kube-proxy.exe: Access to the path" in str(e.value)
        # subdirectories go first, then files in name order: a\ is gone, kube-proxy.exe and z.txt stay
        assert sorted(os.listdir(host.local_path("C:\\k"))) == ["kube-proxy.exe", "z.txt"]
        run_ps(host, "service_apply", {"Name": "kube-proxy", "Action": "none", "Run": "stop"}, False)
        run_ps(host, "node_sync", {"Remove": ["C:\\k"]}, False)
    assert not os.path.exists(host.local_path("C:\\k"))


def test_node_facts_reports_a_broken_runtime(tmp_path):
    host = core.create_host(str(tmp_path), "w")
    os.remove(host.local_path("C:\\Program Files\\containerd\\containerd.exe"))
    with host.open():
        answer = run_ps(host, "node_facts", {"Services": ["containerd"], "VersionOf": ["containerd"]},
                        False)["result"]
    assert answer["services"]["containerd"]["version_output"].startswith(
        "error: The term 'C:\\Program Files\\containerd\\containerd.exe' is not recognized as the name of a cmdlet")


def test_service_parameters(lab):
    core.write_binary(os.path.join(lab.root, "hosts", "win-1", "C", "k", "nssm.exe"), "nssm", "2.24")
    svc = ("kubewin.nodes.win_node_service: {name: demo, state: present, path: 'C:\\k\\nssm.exe', "
           "parameters: %s}")
    rc, _, res = lab.play("""
        - name: create
          %s
        - name: again
          %s
    """ % (svc % "{Application: 'C:\\k\\x.exe', AppEnvironmentExtra: [A=1, B=2]}",
           svc % "{Application: 'C:\\k\\x.exe', AppEnvironmentExtra: [A=1, B=2]}"))
    assert rc == 0 and _one(res, "create")["changed"] and not _one(res, "again")["changed"], res
    assert lab.dump()["services"]["demo"]["parameters"] == {"Application": "C:\\k\\x.exe",
                                                            "AppEnvironmentExtra": ["A=1", "B=2"]}
    # a value NSSM keeps itself survives an update (the key is not recreated)
    core.edit(lab.root, "win-1", lambda st: st["services"]["demo"]["parameters"].update(AppExit="Restart"))
    rc, _, res = lab.play("""
        - name: change
          %s
    """ % (svc % "{Application: 'C:\\k\\y.exe', AppEnvironmentExtra: [A=1]}"))
    assert rc == 0 and _one(res, "change")["differences"] == ["parameters"], res
    assert lab.dump()["services"]["demo"]["parameters"] == {"Application": "C:\\k\\y.exe", "AppExit": "Restart",
                                                            "AppEnvironmentExtra": ["A=1"]}
    rc, _, res = lab.play("""
        - name: remove
          kubewin.nodes.win_node_service: {name: demo, state: absent}
    """)
    assert rc == 0 and "demo" not in lab.dump()["services"]
    core.edit(lab.root, "win-1", lambda st: winsim_scm_create(st))
    assert lab.dump()["services"]["demo"]["parameters"] == {}  # a new service with that name starts empty


def winsim_scm_create(st):
    core.winsim_scm.create(st, "demo", "C:\\k\\nssm.exe")


def test_kube_proxy_as_a_service(lab):
    drive = os.path.join(lab.root, "hosts", "win-1", "C")
    core.write_binary(os.path.join(drive, "k", "kube-proxy.exe"), "kube-proxy", "v1.37.2")
    core.write_binary(os.path.join(drive, "k", "kube-log-runner.exe"), "kube-log-runner", "v1.37.2")
    os.makedirs(os.path.join(drive, "var", "log", "kubelet"), exist_ok=True)
    core.edit(lab.root, "win-1", lambda st: st["hns"]["policylists"].append(
        {"ID": "6E2B1F2A-0000-4000-8000-000000000001", "References": [], "Policies": [{"Type": "ELB"}]}))
    task = """
        - name: %s
          kubewin.nodes.win_node_service:
            name: kube-proxy
            path: %s
            args: %s
            log_files: ['C:\\var\\log\\kubelet\\kube-proxy.log']
          ignore_errors: true
    """
    log = "C:\\var\\log\\kubelet\\kube-proxy.log"
    runner = ["-log-file=" + log, "-log-file-size=100Mi", "-log-file-age=168h", "C:\\k\\kube-proxy.exe"]
    args = ["--proxy-mode=kernelspace", "--kubeconfig=C:\\etc\\kube-proxy\\kubeconfig",
            "--hostname-override=win-1", "--network-name=flannel.4096"]
    rc, _, res = lab.play(
        task % ("plain", json.dumps("C:\\k\\kube-proxy.exe"), json.dumps(args))
        + task % ("no kubeconfig, no log", json.dumps("C:\\k\\kube-proxy.exe"),
                  json.dumps(["--windows-service"] + args))
        + task % ("no kubeconfig", json.dumps("C:\\k\\kube-log-runner.exe"),
                  json.dumps(runner + ["--windows-service"] + args)), hosts="win-1")
    assert "1053: The service did not respond" in _one(res, "plain")["msg"]
    # kube-proxy reports Running, then exits: Start-Service succeeds, the watch after it does not.
    # Run directly, its words go nowhere (a service's stdout and stderr are discarded).
    quiet = _one(res, "no kubeconfig, no log")["msg"]
    assert "was started and reported Running, then went Stopped" in quiet and "1067" in quiet
    assert log + " is empty or missing" in quiet
    # Under kube-log-runner they are in its log file, and the error quotes them.
    msg = _one(res, "no kubeconfig")["msg"]
    assert msg.startswith("win_node_service kube-proxy on win-1: service kube-proxy was started and reported Running, "
                          "then went Stopped within"), msg
    assert "CreateFile C:\\etc\\kube-proxy\\kubeconfig: The system cannot find the file specified." in msg
    assert log + " ends with:" in msg and "Get-Content -Tail 50 " + log in msg
    # the recovery actions keep restarting it: later reads see it Stopped or restarted, never fixed
    assert lab.dump()["services"]["kube-proxy"]["status"] in ("Stopped", "Running")
    # End the crash loop first (the operator stops it): a recovery restart launched before the fix would still
    # exit after it (it read the missing file), and whether one falls inside the next run's start-up watch
    # depends on timing, which would make this step racy.
    def stopped(st):
        st["services"]["kube-proxy"].pop("crash", None)
        st["services"]["kube-proxy"].update(status="Stopped", pid=0)
    core.edit(lab.root, "win-1", stopped)
    _put(core.Host(lab.root, "win-1"), "C:\\etc\\kube-proxy\\kubeconfig")
    rc, _, res = lab.play(task % ("service", json.dumps("C:\\k\\kube-log-runner.exe"),
                                  json.dumps(runner + ["--windows-service"] + args)), hosts="win-1")
    assert rc == 0 and _one(res, "service").get("status") == "Running", _one(res, "service").get("msg")
    dump = lab.dump()
    assert dump["services"]["kube-proxy"]["status"] == "Running"
    assert dump["hns"]["policylists"] == []  # removed at start-up
    proc = dump["processes"]["kube-proxy"]
    assert proc["network_name"] == "flannel.4096" and proc["network_found"] is False  # waits for flannel
    core.flannel(lab.root, "win-1", backend="vxlan")
    assert lab.dump()["processes"]["kube-proxy"]["network_found"] is True


def test_flanneld_runs_only_under_nssm(lab):
    drive = os.path.join(lab.root, "hosts", "win-1", "C")
    core.write_binary(os.path.join(drive, "k", "flanneld.exe"), "flanneld", "v0.26.7")
    core.write_binary(os.path.join(drive, "k", "nssm", "nssm-2.24", "win64", "nssm.exe"), "nssm", "2.24")
    rc, _, res = lab.play("""
        - name: direct
          kubewin.nodes.win_node_service: {name: flanneld, path: 'C:\\k\\flanneld.exe', args: [--kube-subnet-mgr]}
          ignore_errors: true
        - name: remove
          kubewin.nodes.win_node_service: {name: flanneld, state: absent}
        - name: no application
          kubewin.nodes.win_node_service:
            name: flanneld
            path: 'C:\\k\\nssm\\nssm-2.24\\win64\\nssm.exe'
            parameters: {Application: 'C:\\k\\missing.exe'}
          ignore_errors: true
        - name: flanneld fails
          kubewin.nodes.win_node_service:
            name: flanneld
            path: 'C:\\k\\nssm\\nssm-2.24\\win64\\nssm.exe'
            parameters:
              Application: 'C:\\k\\flanneld.exe'
              AppParameters: --kube-subnet-mgr --kubeconfig-file=C:\\etc\\kube-flannel\\kubeconfig
              AppStderr: 'C:\\k\\flanneld.log'
          ignore_errors: true
    """, hosts="win-1")
    assert "1053: The service did not respond" in _one(res, "direct")["msg"]
    assert "Failed to start service 'flanneld (flanneld)'" in _one(res, "no application")["msg"]
    assert "CreateProcess() failed for C:\\k\\missing.exe" in _one(res, "no application")["msg"]
    # flanneld exits (no kubeconfig) after NSSM reported Running: NSSM keeps restarting it, throttled,
    # and the service shows Paused; the watch after the start sees it and quotes AppStderr
    msg = _one(res, "flanneld fails")["msg"]
    assert "service flanneld was started and reported Running, then went Paused" in msg, msg
    assert "C:\\k\\flanneld.log ends with:" in msg and "Failed to create SubnetManager" in msg
    dump = lab.dump()
    assert dump["services"]["flanneld"]["status"] == "Paused"
    assert dump["processes"]["flanneld"]["state"] == "exited"
    with open(os.path.join(drive, "k", "flanneld.log")) as f:
        assert "Failed to create SubnetManager: fail to create kubernetes config: CreateFile " \
               "C:\\etc\\kube-flannel\\kubeconfig: The system cannot find the file specified." in f.read()


def test_service_restart_starts_again_the_dependents_that_were_running(tmp_path):
    """Stop-Service -Force stops kubelet's dependents too; service_apply's restart starts those again."""
    host = core.create_host(str(tmp_path), "w")
    core.write_binary(host.local_path("C:\\k\\kube-proxy.exe"), "kube-proxy", "v1.33.2")
    _put(host, "C:\\etc\\kube-proxy\\kubeconfig")
    line = "C:\\k\\kube-proxy.exe --windows-service --kubeconfig=C:\\etc\\kube-proxy\\kubeconfig --network-name=cbr0"
    with host.open():
        for name, deps, run in (("base", [], "start"), ("mid", ["base"], "start"), ("top", ["mid"], "start"),
                                ("idle", ["base"], "none")):
            run_ps(host, "service_apply", {"Name": name, "Action": "create", "Run": run, "CommandLine": line,
                                           "Dependencies": deps}, False)
        reply = run_ps(host, "service_apply", {"Name": "base", "Action": "none", "Run": "restart"}, False)
        status = {n: core.winsim_scm.find(host.state, n)["status"] for n in ("base", "mid", "top", "idle")}
    assert status == {"base": "Running", "mid": "Running", "top": "Running", "idle": "Stopped"}
    assert reply["result"]["restarted_dependents"] == ["mid", "top"]


def test_nssm_numbers_are_dwords(lab):
    core.write_binary(os.path.join(lab.root, "hosts", "win-1", "C", "k", "nssm.exe"), "nssm", "2.24")
    svc = ("kubewin.nodes.win_node_service: {name: demo, state: present, path: 'C:\\k\\nssm.exe', parameters: "
           "{Application: 'C:\\k\\x.exe', AppRotateFiles: 1, AppRotateBytes: 10485760, "
           "AppStopMethodSkip: '4294967295'}}")
    rc, _, res = lab.play("""
        - name: create
          %s
        - name: again
          %s
    """ % (svc, svc))
    assert rc == 0 and _one(res, "create")["changed"] and not _one(res, "again")["changed"], res
    assert lab.dump()["services"]["demo"]["parameters"] == {"Application": "C:\\k\\x.exe", "AppRotateFiles": 1,
                                                            "AppRotateBytes": 10485760, "AppStopMethodSkip": -1}
    # written as text by an older release (REG_SZ "1", which NSSM misreads): rewritten as a DWORD
    core.edit(lab.root, "win-1", lambda st: st["services"]["demo"]["parameters"].update(AppRotateFiles="1"))
    rc, _, res = lab.play("""
        - name: retype
          %s
    """ % svc)
    assert rc == 0 and _one(res, "retype")["differences"] == ["parameters"], res
    assert lab.dump()["services"]["demo"]["parameters"]["AppRotateFiles"] == 1


def test_secret_file_access_rules_that_drifted_are_repaired(lab):
    task = """
        - name: secret
          kubewin.nodes.win_node_files:
            files: [{path: 'C:\\etc\\kube-proxy\\kubeconfig', content: 'token', secret: true, restricted: true}]
    """
    rc, _, res = lab.play(task)
    assert rc == 0 and _one(res, "secret")["changed"]
    key = "c:\\etc\\kube-proxy\\kubeconfig"
    assert lab.dump()["sddl"][key] == node_files.RESTRICTED_FILE_SDDL
    assert not [k for k in lab.dump()["sddl"] if k.endswith(".kubewin-new")]
    rc, _, res = lab.play(task)
    assert rc == 0 and not _one(res, "secret")["changed"]
    # someone gives local Users read access again
    with core.Host(lab.root, "win-1").open() as h:
        winsim_files.set_sddl(h, "C:\\etc\\kube-proxy\\kubeconfig", winsim_files.DRIVE_DEFAULT_SDDL)
    rc, _, res = lab.play(task)
    assert rc == 0 and _one(res, "secret")["changed"] and _one(res, "secret")["written"] == [
        "C:\\etc\\kube-proxy\\kubeconfig"]
    assert lab.dump()["sddl"][key] == node_files.RESTRICTED_FILE_SDDL


def test_node_sync_cannot_replace_the_program_of_a_running_service(tmp_path):
    host = core.create_host(str(tmp_path), "w")
    core.write_binary(host.local_path("C:\\k\\kube-proxy.exe"), "kube-proxy", "v1.33.2")
    _put(host, "C:\\etc\\kube-proxy\\kubeconfig")
    new = {"Files": [{"path": "C:\\k\\kube-proxy.exe", "content": winsim_scripts.b64(b"new"), "sddl": ""}]}
    with host.open():
        run_ps(host, "service_apply", {"Name": "kube-proxy", "Action": "create", "Run": "start", "CommandLine":
                                       "C:\\k\\kube-proxy.exe --windows-service "
                                       "--kubeconfig=C:\\etc\\kube-proxy\\kubeconfig --network-name=cbr0"}, False)
        with pytest.raises(core.SimError, match="Unable to remove the file to be replaced"):
            run_ps(host, "node_sync", new, False)
        assert not os.path.exists(host.local_path("C:\\k\\kube-proxy.exe.kubewin-new"))
        run_ps(host, "service_apply", {"Name": "kube-proxy", "Action": "none", "Run": "stop"}, False)
        run_ps(host, "node_sync", new, False)
    with open(host.local_path("C:\\k\\kube-proxy.exe"), "rb") as f:
        assert f.read() == b"new"


# --- kubeadm join --config: read like kubeadm, refused like kubeadm ----------------------------------
from ansible_collections.ansible.windows.plugins.module_utils import winsim_kube  # noqa: E402

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
        _put(host, "C:\\k\\join.yaml")
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
