"""Simulated Windows nodes joining the lab's real control plane (needs lab/bin/lab-up)."""

import json
import os
import subprocess

import pytest
import scenario  # noqa: E402  (lab/, on sys.path through tests/lab/conftest.py)
from winsim import core  # noqa: E402
from winsim.testing import Lab  # noqa: E402

LAB = scenario.LAB
ADMIN = os.path.join(LAB, "_run", "admin.conf")
if not os.path.exists(ADMIN):  # part of `make lab-test`, which starts the lab: never skip silently
    raise RuntimeError("the lab control plane is not up (%s absent): run make lab-up" % ADMIN)


def _version():
    with open(os.path.join(LAB, "_run", "VERSION")) as f:
        return f.read().strip()


def kubectl(*args):
    kubectl_bin = os.path.join(LAB, "_cache", _version(), "bin", "kubectl")
    return subprocess.run([kubectl_bin, "--kubeconfig", ADMIN] + list(args), capture_output=True, text=True,
                          timeout=60)


@pytest.fixture
def lab(tmp_path, request):
    lab = Lab(tmp_path / "winsim", nodes=1)
    # Node names must not clash between tests or runs against the same cluster.
    name = "winsim-%s" % request.node.name.replace("_", "-")[-20:].strip("-").lower()
    core.edit(lab.root, "win-1", lambda st: st.update(hostname=name.upper()))
    lab.node = name
    kubectl("delete", "node", name, "--ignore-not-found")
    yield lab
    kubectl("delete", "node", name, "--ignore-not-found")


def _join_play(version):
    return """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: token
      kubewin.nodes.k8s_join_token: {kubeconfig: %(admin)s}
      register: join
- hosts: kube_windows_nodes
  gather_facts: false
  vars:
    j: "{{ hostvars['localhost'].join }}"
  tasks:
    - name: kubeadm
      ansible.windows.win_copy: {content: "KUBEWIN-SIM-BINARY kubeadm %(v)s\\n", dest: 'C:\\k\\kubeadm.exe'}
    - name: kubelet
      ansible.windows.win_copy: {content: "KUBEWIN-SIM-BINARY kubelet %(v)s\\n", dest: 'C:\\k\\kubelet.exe'}
    - name: kube-log-runner
      ansible.windows.win_copy: {content: "KUBEWIN-SIM-BINARY kube-log-runner %(v)s\\n",
                                 dest: 'C:\\k\\kube-log-runner.exe'}
    - name: log directory
      ansible.windows.win_file: {path: 'C:\\var\\log\\kubelet', state: directory}
    - name: service
      kubewin.nodes.win_kubelet_service: {kubelet_version: %(v)s}
    # The lab's certificatesDir is its own directory, so kubelet-config's clientCAFile names it, and a join with
    # flags writes the CA only to kubeadm's default C:/etc/kubernetes/pki (the collection joins with caCertPath
    # instead). Put the CA where this kubelet will read it, as an operator of such a join would.
    - name: the cluster CA where kubelet-config's clientCAFile says
      ansible.windows.win_copy: {content: "%(ca_pem)s", dest: '%(ca_path)s'}
    - name: join
      ansible.windows.win_command:
        argv: ['C:\\k\\kubeadm.exe', join, "{{ j.api_server_endpoint }}", --token, "{{ j.token }}",
               --discovery-token-ca-cert-hash, "{{ j.ca_cert_hashes[0] }}"]
      # kubeadm's preflight runs `kubelet --version` from the Path of its process
      environment: {Path: 'C:\\k;C:\\Windows\\system32'}
    - name: started
      kubewin.nodes.win_kubelet_service: {kubelet_version: %(v)s, state: started}
""" % {"admin": ADMIN, "v": version, "ca_pem": _lab_ca_pem().replace("\n", "\\n"),
       "ca_path": "C:" + os.path.realpath(os.path.join(LAB, "_run", "kubernetes", "pki", "ca.crt")).replace("/", "\\")}


def _lab_ca_pem():
    with open(os.path.join(LAB, "_run", "kubernetes", "pki", "ca.crt")) as f:
        return f.read()


def test_join_registers_the_node_and_v137_files(lab):
    rc, doc, res = lab.play(None, plays=_join_play(_version()))
    assert rc == 0, json.dumps(res, indent=1)[-3000:]
    node = json.loads(kubectl("get", "node", lab.node, "-o", "json").stdout)
    labels = node["metadata"]["labels"]
    assert labels["kubernetes.io/os"] == "windows"
    assert labels["node.kubernetes.io/windows-build"] == "10.0.20348"
    files = lab.dump()["files"]
    assert "C:\\etc\\kubernetes\\kubelet.conf" in files
    assert "C:\\etc\\kubernetes\\bootstrap-kubelet.conf" not in files
    kubelet_dir = os.path.join(lab.root, "hosts", "win-1", "C", "var", "lib", "kubelet")
    # kubeadm v1.37 (NodeLocalCRISocket, GA since 1.36): the CRI endpoint goes to instance-config.yaml, applied
    # to config.yaml; kubeadm-flags.env keeps only --hostname-override when the node name is not the host name
    # (cmd/kubeadm/app/phases/kubelet/flags.go, config.go)
    with open(os.path.join(kubelet_dir, "kubeadm-flags.env")) as f:
        assert f.read() == 'KUBELET_KUBEADM_ARGS=""\n'
    with open(os.path.join(kubelet_dir, "instance-config.yaml")) as f:
        assert f.read() == 'containerRuntimeEndpoint: "npipe:////./pipe/containerd-containerd"\n'
    with open(os.path.join(kubelet_dir, "config.yaml")) as f:
        assert "containerRuntimeEndpoint: npipe:////./pipe/containerd-containerd" in f.read()
    # registered, but not Ready: this play gives containerd no CNI configuration (lab/README.md "Readiness")
    ready = [c for c in node["status"]["conditions"] if c["type"] == "Ready"]
    assert [(c["status"], c["message"].rsplit(": ", 1)[-1]) for c in ready] == [("False", "cni plugin not initialized")]
    # a second join is refused by preflight, with the check names kubeadm.exe prints (filepath.Join of
    # "/etc/kubernetes" on Windows; the CA path is v1beta4's Windows default as written)
    rc, doc, res = lab.play(None, plays=_join_play(_version()))
    stderr = res["join"]["win-1"]["stderr"]
    assert rc != 0
    assert ("[ERROR FileAvailable-\\etc\\kubernetes\\kubelet.conf]: \\etc\\kubernetes\\kubelet.conf already "
            "exists") in stderr
    assert "[ERROR Port-10250]: Port 10250 is in use" in stderr
    assert "[ERROR FileAvailable-C:-etc-kubernetes-pki-ca.crt]: C:/etc/kubernetes/pki/ca.crt already exists" in stderr


def test_kubelet_with_unknown_flag_does_not_start(lab):
    flags = os.path.join(LAB, "_cache", _version(), "kubelet-flags.txt")
    assert os.path.exists(flags), "no kubelet flag list for %s: run lab/bin/lab-build" % _version()
    rc, _, res = lab.play("""
        - name: kubelet
          ansible.windows.win_copy: {content: "KUBEWIN-SIM-BINARY kubelet %s\\n", dest: 'C:\\k\\kubelet.exe'}
        - name: kube-log-runner
          ansible.windows.win_copy: {content: "KUBEWIN-SIM-BINARY kube-log-runner %s\\n",
                                     dest: 'C:\\k\\kube-log-runner.exe'}
        - name: log directory
          ansible.windows.win_file: {path: 'C:\\var\\log\\kubelet', state: directory}
        - name: start
          kubewin.nodes.win_kubelet_service:
            kubelet_version: %s
            state: started
            extra_args: {no-such-flag: "1"}
          ignore_errors: true
    """ % (_version(), _version(), _version()))
    # flag parsing comes before the kubelet answers the SCM: a failed start, and its log says why
    assert "unknown flag: --no-such-flag" in res["start"]["win-1"]["msg"]
    assert lab.dump()["services"]["kubelet"]["status"] == "Stopped"
    with open(os.path.join(lab.root, "hosts", "win-1", "C", "var", "log", "kubelet", "kubelet.log")) as f:
        assert "unknown flag: --no-such-flag" in f.read()


def test_kubelet_that_exits_after_running_is_a_failed_start_with_its_log(lab):
    """The kubelet reports Running before it connects to the runtime: Start-Service succeeds, then it
    exits and the recovery actions restart it. The task watches it and fails with its log."""
    core.edit(lab.root, "win-1", lambda st: st.update(pipes=[]))  # containerd is not running
    rc, _, res = lab.play("""
        - name: kubelet
          ansible.windows.win_copy: {content: "KUBEWIN-SIM-BINARY kubelet %s\\n", dest: 'C:\\k\\kubelet.exe'}
        - name: kube-log-runner
          ansible.windows.win_copy: {content: "KUBEWIN-SIM-BINARY kube-log-runner %s\\n",
                                     dest: 'C:\\k\\kube-log-runner.exe'}
        - name: log directory
          ansible.windows.win_file: {path: 'C:\\var\\log\\kubelet', state: directory}
        - name: config
          ansible.windows.win_copy:
            {content: "apiVersion: kubelet.config.k8s.io/v1beta1\\nkind: KubeletConfiguration\\n",
             dest: 'C:\\var\\lib\\kubelet\\config.yaml'}
        - name: start
          kubewin.nodes.win_kubelet_service: {kubelet_version: %s, state: started, dependencies: []}
          ignore_errors: true
    """ % (_version(), _version(), _version()))
    msg = res["start"]["win-1"]["msg"]
    assert msg.startswith("win_kubelet_service on win-1: service kubelet was started and reported Running, "
                          "then went Stopped within"), msg
    assert "last exit code 1067" in msg
    assert "C:\\var\\log\\kubelet\\kubelet.log ends with:" in msg
    assert "validate CRI v1 runtime API for endpoint" in msg


# --- flanneld under NSSM against the lab's API server --------------------------------------------
def _flannel_token_kubeconfig(secret_name, token_file):
    """(kubeconfig, token) for the lab's flannel ServiceAccount (kube-flannel/flannel, bound to the
    upstream flannel ClusterRole: get/list/watch nodes, patch nodes/status), from a token Secret; the
    kubeconfig reads the token from ``token_file`` as the collection's do."""
    import base64
    import time

    manifest = json.dumps({"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
                           "metadata": {"name": secret_name, "namespace": "kube-flannel",
                                        "annotations": {"kubernetes.io/service-account.name": "flannel"}}})
    p = subprocess.run([os.path.join(LAB, "_cache", _version(), "bin", "kubectl"), "--kubeconfig", ADMIN, "apply",
                        "-f", "-"], input=manifest, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    for _ in range(60):
        secret = json.loads(kubectl("-n", "kube-flannel", "get", "secret", secret_name, "-o", "json").stdout)
        if (secret.get("data") or {}).get("token"):
            break
        time.sleep(1)
    with open(ADMIN) as f:
        import yaml
        server = yaml.safe_load(f)["clusters"][0]["cluster"]["server"]
    token = base64.b64decode(secret["data"]["token"]).decode()
    # a kubeconfig that reads its token from a file (client-go's tokenFile), as flanneld's of earlier releases did
    kubeconfig = json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "default",
        "clusters": [{"name": "default", "cluster": {"server": server,
                                                     "certificate-authority-data": secret["data"]["ca.crt"]}}],
        "users": [{"name": "flannel", "user": {"tokenFile": token_file}}],
        "contexts": [{"name": "default", "context": {"cluster": "default", "user": "flannel"}}]})
    return kubeconfig, token


def _node(name, pod_cidr):
    spec = {"podCIDR": pod_cidr, "podCIDRs": [pod_cidr]} if pod_cidr else {}
    manifest = json.dumps({"apiVersion": "v1", "kind": "Node", "spec": spec, "metadata": {
        "name": name, "annotations": {"kwok.x-k8s.io/node": "fake"},
        "labels": {"kubernetes.io/os": "windows", "kubernetes.io/hostname": name}}})
    p = subprocess.run([os.path.join(LAB, "_cache", _version(), "bin", "kubectl"), "--kubeconfig", ADMIN, "create",
                        "-f", "-"], input=manifest, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr


def _flanneld_play(node):
    return """
        - name: flanneld
          kubewin.nodes.win_host_service:
            name: flanneld
            path: 'C:\\k\\nssm\\nssm-2.24\\win64\\nssm.exe'
            parameters:
              Application: 'C:\\k\\flanneld.exe'
              AppParameters: >-
                --kube-subnet-mgr --kubeconfig-file=C:\\etc\\kube-flannel\\kubeconfig
                --net-config-path=C:\\etc\\kube-flannel\\net-conf.json --iface=10.0.0.11 --ip-masq=false
              AppDirectory: 'C:\\k'
              AppEnvironmentExtra: [NODE_NAME=%s]
              AppStderr: 'C:\\k\\flanneld.log'
          ignore_errors: true
    """ % node


@pytest.fixture
def flannel_host(lab):
    from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import network as host_network
    secret = "winsim-flanneld-" + lab.node[-20:]
    host = core.Host(lab.root, "win-1")
    core.write_binary(host.local_path("C:\\k\\flanneld.exe"), "flanneld", "v0.26.7")
    core.write_binary(host.local_path("C:\\k\\nssm\\nssm-2.24\\win64\\nssm.exe"), "nssm", "2.24")
    os.makedirs(host.local_path("C:\\etc\\kube-flannel"))
    kubeconfig, token = _flannel_token_kubeconfig(secret, "C:\\etc\\kube-flannel\\token")
    with open(host.local_path("C:\\etc\\kube-flannel\\kubeconfig"), "w") as f:
        f.write(kubeconfig)
    with open(host.local_path("C:\\etc\\kube-flannel\\token"), "w") as f:
        f.write(token)
    with open(host.local_path("C:\\etc\\kube-flannel\\net-conf.json"), "w") as f:
        f.write(host_network.net_conf("10.244.0.0/16", "vxlan", 4096, 4789))
    # the adapter is on its vSwitch already (the network role's External network): flanneld's network does not
    # blip the host (winsim_hns), so the start's watch reaches it
    core.edit(lab.root, "win-1", lambda st: st["hns"]["vswitches"].update(Ethernet="vEthernet (Ethernet)"))
    yield host
    kubectl("-n", "kube-flannel", "delete", "secret", secret, "--ignore-not-found")


def test_nssm_runs_flanneld_which_creates_its_network(lab, flannel_host):
    _node(lab.node, "10.244.77.0/24")
    rc, _, res = lab.play(_flanneld_play(lab.node))
    r = res["flanneld"]["win-1"]
    assert rc == 0 and r["status"] == "Running", r
    dump = lab.dump()
    nets = dump["hns"]["networks"]
    assert [(n["Name"], n["Type"]) for n in nets] == [("flannel.4096", "Overlay")]
    assert nets[0]["Subnets"][0]["AddressPrefix"] == "10.244.77.0/24"
    assert nets[0]["Subnets"][0]["GatewayAddress"] == "10.244.77.1"
    assert dump["processes"]["flanneld"]["state"] == "running"
    with open(flannel_host.local_path("C:\\run\\flannel\\subnet.env")) as f:
        assert f.read() == ("FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.77.1/24\nFLANNEL_MTU=1450\n"
                            "FLANNEL_IPMASQ=false\n")
    node = json.loads(kubectl("get", "node", lab.node, "-o", "json").stdout)
    ann = node["metadata"]["annotations"]
    assert ann["flannel.alpha.coreos.com/backend-type"] == "vxlan"
    assert ann["flannel.alpha.coreos.com/public-ip"] == "10.0.0.11"
    assert json.loads(ann["flannel.alpha.coreos.com/backend-data"])["VNI"] == 4096
    # stopping flanneld leaves its network; a restart reuses it
    rc, _, res = lab.play("""
        - name: stop
          kubewin.nodes.win_host_service:
            {name: flanneld, state: stopped, path: 'C:\\k\\nssm\\nssm-2.24\\win64\\nssm.exe'}
    """)
    assert rc == 0 and [n["Name"] for n in lab.dump()["hns"]["networks"]] == ["flannel.4096"]
    assert "flanneld" not in lab.dump()["processes"]


def test_flanneld_for_an_unknown_node_keeps_failing(lab, flannel_host):
    # (The lab's controller-manager allocates node CIDRs, so a Node without podCIDR does not stay
    # so; the unknown node takes the same path: AcquireLease fails and flanneld exits.)
    rc, _, res = lab.play(_flanneld_play(lab.node))
    assert "service flanneld was started and reported Running, then went Paused" in res["flanneld"]["win-1"]["msg"]
    dump = lab.dump()
    assert dump["services"]["flanneld"]["status"] == "Paused" and dump["hns"]["networks"] == []
    with open(flannel_host.local_path("C:\\k\\flanneld.log")) as f:
        assert 'failed to acquire lease: node "%s" not found' % lab.node in f.read()


def test_flanneld_without_its_token_file_exits_with_the_read_error(lab, flannel_host):
    # The kubeconfig names a tokenFile: clientcmd reads it when the client is built, so a missing file
    # stops flanneld before it reaches the API server (what a node looks like after a half-done reset).
    os.remove(flannel_host.local_path("C:\\etc\\kube-flannel\\token"))
    _node(lab.node, "10.244.78.0/24")
    rc, _, res = lab.play(_flanneld_play(lab.node))
    assert "then went Paused" in res["flanneld"]["win-1"]["msg"]
    with open(flannel_host.local_path("C:\\k\\flanneld.log")) as f:
        assert ("fail to create kubernetes config: open C:\\etc\\kube-flannel\\token: The system cannot find the "
                "file specified.") in f.read()
    assert lab.dump()["hns"]["networks"] == []
