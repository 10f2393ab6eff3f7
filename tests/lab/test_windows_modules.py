"""Tests of the collection's Windows modules and scripts on the simulated Windows hosts: what win_hns_network,
win_hns_cleanup, win_kubelet_service, win_host_facts, win_host_files and win_host_service do to a host, run by real
ansible-playbook runs or as the real script text through the lab's interpreter. No control plane needed. The
simulator itself is tested in lab/winsim/test_simulator.py."""

import json
import os
import sys

import mirror
import pytest
from simhost import one, put
from winsim import core
from winsim.ps.winhost import run_kubewin_script as run_ps  # the real script text, interpreted

# isort: split
# winsim.core has put the stand-in ansible.windows collection and kubewin.nodes on sys.path.
from ansible_collections.ansible.windows.plugins.module_utils import winsim_files, winsim_scripts

from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import files as host_files


def test_hns_network_create_then_idempotent(lab):
    task = """
        - name: net
          kubewin.nodes.win_hns_network:
            {name: cbr0, type: l2bridge, address_prefix: 10.244.1.0/24, gateway: 10.244.1.1}
    """
    # the new vSwitch cuts the host off for a moment (winsim_hns): wait for it as the network role does
    rc, _, res = lab.play(task + """
        - name: wait
          ansible.builtin.wait_for_connection: {delay: 1, sleep: 1, timeout: 60}
    """)
    assert rc == 0 and one(res, "net")["changed"]
    dump = lab.dump()
    assert [n["Name"] for n in dump["hns"]["networks"]] == ["cbr0"]
    assert dump["hns"]["vswitches"] == {"Ethernet": "vEthernet (Ethernet)"}
    lab.reset_ops()
    rc, _, res = lab.play(task)
    assert rc == 0 and not one(res, "net")["changed"]
    assert lab.ops() == ["win_powershell"]  # one read, nothing applied


def test_hns_cleanup_removes_flannel_network_with_endpoint(lab):
    core.flannel(lab.root, "win-1", backend="host-gw")
    rc, _, res = lab.play("""
        - name: cleanup
          kubewin.nodes.win_hns_cleanup: {networks: [cbr0]}
    """)
    assert rc == 0 and one(res, "cleanup")["removed"]["endpoints"] == ["cbr0_ep"]
    assert lab.dump()["hns"]["networks"] == []


def test_kubelet_service_registered_in_scm(lab):
    rc, _, res = lab.play("""
        - name: svc
          kubewin.nodes.win_kubelet_service: {kubelet_version: v1.33.2}
        - name: again
          kubewin.nodes.win_kubelet_service: {kubelet_version: v1.33.2}
    """)
    assert rc == 0 and one(res, "svc")["changed"] and not one(res, "again")["changed"]
    svc = lab.dump()["services"]["kubelet"]
    assert svc["status"] == "Stopped" and svc["start"] == 2 and svc["dependencies"] == ["containerd"]
    assert "--windows-service" in svc["image_path"]
    assert svc["failure_actions_on_non_crash"] == 1


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
          kubewin.nodes.win_host_facts:
            extra_paths: ['C:\\Windows\\System32', 'D:\\nothing']
    """, check=True)
    node = one(res, "facts")["ansible_facts"]["kubewin_host"]
    assert rc == 0 and lab.ops() == ["win_powershell"]
    assert (node["hostname"], node["computer_name"]) == ("win-1", "WIN-1")
    assert node["windows_build"] == "10.0.20348" and node["windows_build_full"] == "10.0.20348.2849"
    assert node["runtimes"]["containerd"] == {"service_exists": True, "service_status": "Running",
                                              "pipe_exists": True, "version": "2.3.5"}
    assert not node["runtimes"]["docker"]["service_exists"] and not node["runtimes"]["docker"]["pipe_exists"]
    # each address with its prefix length (the node's subnet: realnode F8)
    assert [(a["name"], a["ipv4"]) for a in node["adapters"]] == [("Ethernet", ["10.0.0.11/24"])]
    assert node["join_state"] == "fresh" and node["services"]["kubelet"] == {"exists": False, "status": None}
    assert node["paths"]["C:\\Windows\\System32"] is True and node["paths"]["D:\\nothing"] is False
    # an interrupted join, and an HNS network that moved the address to the vSwitch's host vNIC
    core.write_binary(os.path.join(lab.root, "hosts", "win-1", "C", "etc", "kubernetes", "pki", "ca.crt"), "x", "1")
    core.flannel(lab.root, "win-1", backend="host-gw")
    rc, _, res = lab.play("""
        - name: facts
          kubewin.nodes.win_host_facts:
    """)
    node = one(res, "facts")["ansible_facts"]["kubewin_host"]
    assert node["join_state"] == "partial"
    assert [(a["name"], a["ipv4"]) for a in node["adapters"]] == [("Ethernet", []),
                                                                   ("vEthernet (Ethernet)", ["10.0.0.11/24"])]


def test_node_facts_script_answer_matches_the_contract(tmp_path):
    host = core.create_host(str(tmp_path), "w", profile="ws2022-docker")
    with host.open():
        answer = run_ps(host, "node_facts", {"Services": ["docker", "containerd"], "VersionOf": ["docker"],
                                             "Paths": ["\\\\.\\pipe\\docker_engine"]}, False)["result"]
    assert answer["pipes"] == ["docker_engine"] and answer["paths"] == {"\\\\.\\pipe\\docker_engine": True}
    assert answer["services"]["docker"]["version_output"].startswith("Docker version 24.0.7, build ")
    assert answer["services"]["containerd"] == {"exists": False, "status": None, "image_path": None,
                                                "version_output": None, "definition": None}
    # a service's whole definition only for those in DefinitionOf (the roles' services; none asked for here)
    assert answer["services"]["docker"]["definition"] is None and answer["flags_file_content"] is None
    assert answer["machine_path"] == core.winsim_host.INITIAL_PATH


def _files_task(served, name="files", **extra):
    u = _urls(served)
    task = {"directories": [{"path": "C:\\k"}, {"path": "C:\\opt\\cni\\bin", "restricted": False}],
            "downloads": [{"url": u["kubelet"], "dest": "C:\\k\\kubelet.exe"},
                          {"url": u["cni"], "extract_dir": "C:\\opt\\cni\\bin"},
                          {"url": u["flanneld"], "dest": "C:\\k\\flannel\\flanneld.exe",
                           "checksum": u["flanneld_sha"]}],
            "files": [{"path": "C:\\k\\flannel\\net-conf.json", "content": '{"Network": "10.244.0.0/16"}\n'}]}
    task.update(extra)
    return "- name: %s\n  kubewin.nodes.win_host_files: %s\n" % (name, json.dumps(task))


def test_host_files_download_extract_write_then_nothing(lab, served):
    u = _urls(served)
    before = lab.dump()
    rc, _, res = lab.play(_files_task(served), check=True)
    assert rc == 0 and one(res, "files")["changed"] and lab.dump() == before  # check mode changes nothing
    lab.reset_ops()
    rc, out, res = lab.play(_files_task(served))
    r = one(res, "files")
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
    assert dump["sddl"] == {"c:\\k": host_files.RESTRICTED_DIR_SDDL}
    with core.Host(lab.root, "win-1").open(save=False) as h:
        assert winsim_files.effective_sddl(h, "C:\\opt\\cni\\bin") == \
            "D:AI(A;OICIID;FA;;;BA)(A;OICIID;FA;;;SY)(A;OICIID;0x1200a9;;;BU)"
        assert winsim_files.effective_sddl(h, "C:\\k\\kubelet.exe") == "D:AI(A;ID;FA;;;SY)(A;ID;FA;;;BA)"
    lab.reset_ops()
    rc, _, res = lab.play(_files_task(served))
    assert rc == 0 and not one(res, "files")["changed"]
    assert lab.ops() == ["win_powershell"]  # exactly one remote operation on a converged node
    assert lab.dump() == dump


def test_host_files_checksum_mismatch_leaves_nothing(lab, served):
    u = _urls(served)
    wrong = "0" * 128
    rc, _, res = lab.play("""
        - name: files
          kubewin.nodes.win_host_files:
            downloads: [{url: '%s', dest: 'C:\\k\\kubelet.exe', checksum: '%s'}]
          ignore_errors: true
    """ % (u["kubelet"], wrong))
    msg = one(res, "files")["msg"]
    assert "checksum mismatch for %s: expected sha512 %s, got %s" % (u["kubelet"], wrong, u["kubelet_sha"]) in msg
    assert os.listdir(os.path.join(lab.root, "hosts", "win-1", "C", "k")) == []


def test_host_files_from_a_file_share_and_through_a_proxy(lab, served):
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
              kubewin.nodes.win_host_files:
                downloads: [{url: '\\\\fileserver\\K8S\\kubelet.exe', dest: 'C:\\k\\a.exe', checksum: '%s'}]
            - name: proxy
              kubewin.nodes.win_host_files:
                downloads: [{url: '%s', dest: 'C:\\k\\b.exe'}]
                proxy: '%s'
        """ % (u["kubelet_sha"], proxied, proxy.url))
    finally:
        proxy.close()
    assert rc == 0 and one(res, "share")["changed"] and one(res, "proxy")["changed"], res
    # for each of the two hosts, the controller fetched the checksum and the node the file, both through the proxy
    assert sorted(proxy.requests) == [proxied] * 2 + [proxied + ".sha512"] * 2, proxy.requests
    files = lab.dump()["files"]
    assert files["C:\\k\\a.exe"] == files["C:\\k\\b.exe"]


def test_host_files_fault_switch(lab, served):
    core.set_fault(lab.root, "win-1", "script:node_sync", "fail_once")
    rc, _, res = lab.play(_files_task(served) + "  ignore_errors: true\n")
    assert "fault injected (fail_once) for script:node_sync" in one(res, "files")["msg"]
    assert "C:\\k" not in lab.dump()["files"]
    rc, _, res = lab.play(_files_task(served))
    assert rc == 0 and one(res, "files")["changed"]


def test_host_files_secret_stays_out_of_verbose_output(lab):
    import subprocess
    secret = "kubewin-secret-9f1c2e7d"
    play = os.path.join(lab.root, "secret.yml")
    with open(play, "w") as f:
        f.write("""- hosts: win-1
  gather_facts: false
  tasks:
    - name: secret
      kubewin.nodes.win_host_files:
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
    assert lab.dump()["sddl"]["c:\\etc\\kubernetes\\bootstrap-kubelet.conf"] == host_files.RESTRICTED_FILE_SDDL


def test_host_service_environment(lab):
    svc = "kubewin.nodes.win_host_service: {name: kube-proxy, state: present, path: 'C:\\k\\kube-proxy.exe', " \
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
    assert rc == 0 and one(res, "create")["changed"] and not one(res, "again")["changed"]
    assert one(res, "change")["differences"] == ["environment"]
    assert lab.dump()["services"]["kube-proxy"]["environment"] == ["KUBE_NETWORK=vxlan0", "NODE_NAME=win-1"]
    rc, _, res = lab.play("""
        - name: remove env
          %s
    """ % (svc % "{}"))
    assert rc == 0 and one(res, "remove env")["changed"]
    assert lab.dump()["services"]["kube-proxy"]["environment"] == []


def test_files_state_paths_and_node_sync_remove_prune(tmp_path):
    host = core.create_host(str(tmp_path), "w")
    put(host, "C:\\k\\a\\b.txt", "C:\\k\\c.txt", "C:\\var\\log\\kubelet\\x.log", "C:\\etc\\other\\keep.txt")
    os.makedirs(host.local_path("C:\\run\\flannel"))
    with host.open():
        paths = run_ps(host, "files_state", {"Paths": ["C:\\k", "C:\\run\\flannel", "C:\\K\\C.TXT", "C:\\nope",
                                                     "D:\\x"]}, False)["result"]["paths"]
        # a drive the host does not have is no "absent": Get-Item fails with DriveNotFoundException
        assert paths == {"C:\\k": "dir", "C:\\run\\flannel": "empty-dir", "C:\\K\\C.TXT": "file", "C:\\nope": None,
                         "D:\\x": "unreadable"}
        removed = run_ps(host, "node_sync", {
            "Remove": ["C:\\k", "C:\\missing", "C:\\var\\log\\kubelet", "C:\\run\\flannel"],
            # in order: C:\var\log first, then C:\var (empty by then); C:\etc keeps what others put there
            "Prune": ["C:\\var\\log", "C:\\var", "C:\\etc", "C:\\run", "C:\\missing"],
            "Owners": list(host_files.TRUSTED_OWNERS)}, False)["result"]["removed"]
        # what win_host_files reports for a removal it did not read first (issue 22): only what was there
        assert removed == ["C:\\k", "C:\\var\\log\\kubelet", "C:\\run\\flannel", "C:\\var\\log", "C:\\var",
                           "C:\\run"]
        paths = run_ps(host, "files_state", {"Paths": ["C:\\k", "C:\\var", "C:\\etc", "C:\\run"]},
                       False)["result"]["paths"]
    assert paths == {"C:\\k": None, "C:\\var": None, "C:\\etc": "dir", "C:\\run": None}


def test_node_sync_remove_stops_at_the_program_of_a_running_service(tmp_path):
    host = core.create_host(str(tmp_path), "w")
    core.write_binary(host.local_path("C:\\k\\kube-proxy.exe"), "kube-proxy", "v1.33.2")
    put(host, "C:\\k\\a\\x.txt", "C:\\k\\z.txt", "C:\\etc\\kube-proxy\\kubeconfig")
    with host.open():
        run_ps(host, "service_apply", {"Name": "kube-proxy", "Action": "create", "Run": "start", "CommandLine":
                                       "C:\\k\\kube-proxy.exe --windows-service "
                                       "--kubeconfig=C:\\etc\\kube-proxy\\kubeconfig --network-name=cbr0"}, False)
        with pytest.raises(core.SimError) as e:
            run_ps(host, "node_sync", {"Remove": ["C:\\k"], "Owners": list(host_files.TRUSTED_OWNERS)}, False)
        assert "Cannot remove item C:\\k\\kube-proxy.exe: Access to the path" in str(e.value)
        # subdirectories go first, then files in name order: a\ is gone, kube-proxy.exe and z.txt stay
        assert sorted(os.listdir(host.local_path("C:\\k"))) == ["kube-proxy.exe", "z.txt"]
        run_ps(host, "service_apply", {"Name": "kube-proxy", "Action": "none", "Run": "stop"}, False)
        run_ps(host, "node_sync", {"Remove": ["C:\\k"], "Owners": list(host_files.TRUSTED_OWNERS)}, False)
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
    svc = ("kubewin.nodes.win_host_service: {name: demo, state: present, path: 'C:\\k\\nssm.exe', "
           "parameters: %s}")
    rc, _, res = lab.play("""
        - name: create
          %s
        - name: again
          %s
    """ % (svc % "{Application: 'C:\\k\\x.exe', AppEnvironmentExtra: [A=1, B=2]}",
           svc % "{Application: 'C:\\k\\x.exe', AppEnvironmentExtra: [A=1, B=2]}"))
    assert rc == 0 and one(res, "create")["changed"] and not one(res, "again")["changed"], res
    assert lab.dump()["services"]["demo"]["parameters"] == {"Application": "C:\\k\\x.exe",
                                                            "AppEnvironmentExtra": ["A=1", "B=2"]}
    # a value NSSM keeps itself survives an update (the key is not recreated)
    core.edit(lab.root, "win-1", lambda st: st["services"]["demo"]["parameters"].update(AppExit="Restart"))
    rc, _, res = lab.play("""
        - name: change
          %s
    """ % (svc % "{Application: 'C:\\k\\y.exe', AppEnvironmentExtra: [A=1]}"))
    assert rc == 0 and one(res, "change")["differences"] == ["parameters"], res
    assert lab.dump()["services"]["demo"]["parameters"] == {"Application": "C:\\k\\y.exe", "AppExit": "Restart",
                                                            "AppEnvironmentExtra": ["A=1"]}
    rc, _, res = lab.play("""
        - name: remove
          kubewin.nodes.win_host_service: {name: demo, state: absent}
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
          kubewin.nodes.win_host_service:
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
    assert "1053: The service did not respond" in one(res, "plain")["msg"]
    # kube-proxy reports Running, then exits: Start-Service succeeds, the watch after it does not.
    # Run directly, its words go nowhere (a service's stdout and stderr are discarded).
    quiet = one(res, "no kubeconfig, no log")["msg"]
    assert "was started and reported Running, then went Stopped" in quiet and "1067" in quiet
    assert log + " is empty or missing" in quiet
    # Under kube-log-runner they are in its log file, and the error quotes them.
    msg = one(res, "no kubeconfig")["msg"]
    assert msg.startswith("win_host_service on win-1: service kube-proxy was started and reported Running, "
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
    put(core.Host(lab.root, "win-1"), "C:\\etc\\kube-proxy\\kubeconfig")
    rc, _, res = lab.play(task % ("service", json.dumps("C:\\k\\kube-log-runner.exe"),
                                  json.dumps(runner + ["--windows-service"] + args)), hosts="win-1")
    assert rc == 0 and one(res, "service").get("status") == "Running", one(res, "service").get("msg")
    dump = lab.dump()
    assert dump["services"]["kube-proxy"]["status"] == "Running"
    assert dump["hns"]["policylists"] == []  # removed at start-up
    proc = dump["processes"]["kube-proxy"]
    assert proc["network_name"] == "flannel.4096" and proc["network_found"] is False  # waits for flannel
    # flanneld's network is an Overlay: newProxierInternal (pkg/proxy/winkernel/proxier.go) now needs
    # --source-vip, which this command line lacks, so kube-proxy stops after reporting Running
    core.flannel(lab.root, "win-1", backend="vxlan")
    assert "kube-proxy" not in lab.dump()["processes"]
    with core.Host(lab.root, "win-1").open(save=False) as h:
        assert 'err="source-vip flag not set"' in h.state["services"]["kube-proxy"]["last_error"]


def test_flanneld_runs_only_under_nssm(lab):
    drive = os.path.join(lab.root, "hosts", "win-1", "C")
    core.write_binary(os.path.join(drive, "k", "flanneld.exe"), "flanneld", "v0.26.7")
    core.write_binary(os.path.join(drive, "k", "nssm", "nssm-2.24", "win64", "nssm.exe"), "nssm", "2.24")
    rc, _, res = lab.play("""
        - name: direct
          kubewin.nodes.win_host_service: {name: flanneld, path: 'C:\\k\\flanneld.exe', args: [--kube-subnet-mgr]}
          ignore_errors: true
        - name: remove
          kubewin.nodes.win_host_service: {name: flanneld, state: absent}
        - name: no application
          kubewin.nodes.win_host_service:
            name: flanneld
            path: 'C:\\k\\nssm\\nssm-2.24\\win64\\nssm.exe'
            parameters: {Application: 'C:\\k\\missing.exe'}
          ignore_errors: true
        - name: flanneld fails
          kubewin.nodes.win_host_service:
            name: flanneld
            path: 'C:\\k\\nssm\\nssm-2.24\\win64\\nssm.exe'
            parameters:
              Application: 'C:\\k\\flanneld.exe'
              AppParameters: --kube-subnet-mgr --kubeconfig-file=C:\\etc\\kube-flannel\\kubeconfig
              AppStderr: 'C:\\k\\flanneld.log'
          ignore_errors: true
    """, hosts="win-1")
    assert "1053: The service did not respond" in one(res, "direct")["msg"]
    assert "Failed to start service 'flanneld (flanneld)'" in one(res, "no application")["msg"]
    assert "CreateProcess() failed for C:\\k\\missing.exe" in one(res, "no application")["msg"]
    # flanneld exits (no kubeconfig) after NSSM reported Running: NSSM keeps restarting it, throttled,
    # and the service shows Paused; the watch after the start sees it and quotes AppStderr
    msg = one(res, "flanneld fails")["msg"]
    assert "service flanneld was started and reported Running, then went Paused" in msg, msg
    assert "C:\\k\\flanneld.log ends with:" in msg and "Failed to create SubnetManager" in msg
    dump = lab.dump()
    assert dump["services"]["flanneld"]["status"] == "Paused"
    assert dump["processes"]["flanneld"]["state"] == "exited"
    with open(os.path.join(drive, "k", "flanneld.log")) as f:
        # what the real flanneld.exe says under Wine (its directory does not exist either: "path", not "file")
        assert "Failed to create SubnetManager: fail to create kubernetes config: GetFileAttributesEx " \
               "C:\\etc\\kube-flannel\\kubeconfig: The system cannot find the path specified." in f.read()


def test_service_restart_starts_again_the_dependents_that_were_running(tmp_path):
    """Stop-Service -Force stops kubelet's dependents too; service_apply's restart starts those again."""
    host = core.create_host(str(tmp_path), "w")
    core.write_binary(host.local_path("C:\\k\\kube-proxy.exe"), "kube-proxy", "v1.33.2")
    put(host, "C:\\etc\\kube-proxy\\kubeconfig")
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
    svc = ("kubewin.nodes.win_host_service: {name: demo, state: present, path: 'C:\\k\\nssm.exe', parameters: "
           "{Application: 'C:\\k\\x.exe', AppRotateFiles: 1, AppRotateBytes: 10485760, "
           "AppStopMethodSkip: '4294967295'}}")
    rc, _, res = lab.play("""
        - name: create
          %s
        - name: again
          %s
    """ % (svc, svc))
    assert rc == 0 and one(res, "create")["changed"] and not one(res, "again")["changed"], res
    assert lab.dump()["services"]["demo"]["parameters"] == {"Application": "C:\\k\\x.exe", "AppRotateFiles": 1,
                                                            "AppRotateBytes": 10485760, "AppStopMethodSkip": -1}
    # written as text by an older release (REG_SZ "1", which NSSM misreads): rewritten as a DWORD
    core.edit(lab.root, "win-1", lambda st: st["services"]["demo"]["parameters"].update(AppRotateFiles="1"))
    rc, _, res = lab.play("""
        - name: retype
          %s
    """ % svc)
    assert rc == 0 and one(res, "retype")["differences"] == ["parameters"], res
    assert lab.dump()["services"]["demo"]["parameters"]["AppRotateFiles"] == 1


def test_secret_file_access_rules_that_drifted_are_repaired(lab):
    task = """
        - name: secret
          kubewin.nodes.win_host_files:
            files: [{path: 'C:\\etc\\kube-proxy\\kubeconfig', content: 'token', secret: true, restricted: true}]
    """
    rc, _, res = lab.play(task)
    assert rc == 0 and one(res, "secret")["changed"]
    key = "c:\\etc\\kube-proxy\\kubeconfig"
    assert lab.dump()["sddl"][key] == host_files.RESTRICTED_FILE_SDDL
    assert not [k for k in lab.dump()["sddl"] if k.endswith(".kubewin-new")]
    rc, _, res = lab.play(task)
    assert rc == 0 and not one(res, "secret")["changed"]
    # someone gives local Users read access again
    with core.Host(lab.root, "win-1").open() as h:
        winsim_files.set_sddl(h, "C:\\etc\\kube-proxy\\kubeconfig", winsim_files.DRIVE_DEFAULT_SDDL)
    rc, _, res = lab.play(task)
    assert rc == 0 and one(res, "secret")["changed"] and one(res, "secret")["written"] == [
        "C:\\etc\\kube-proxy\\kubeconfig"]
    assert lab.dump()["sddl"][key] == host_files.RESTRICTED_FILE_SDDL


def test_node_sync_cannot_replace_the_program_of_a_running_service(tmp_path):
    host = core.create_host(str(tmp_path), "w")
    core.write_binary(host.local_path("C:\\k\\kube-proxy.exe"), "kube-proxy", "v1.33.2")
    put(host, "C:\\etc\\kube-proxy\\kubeconfig")
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

