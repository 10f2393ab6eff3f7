# -*- coding: utf-8 -*-
"""The Windows host simulator, driven by real ansible-playbook runs (no control plane needed)."""

import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from winsim import core  # noqa: E402
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
