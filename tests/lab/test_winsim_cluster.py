# -*- coding: utf-8 -*-
"""Simulated Windows nodes joining the lab's real control plane (needs tests/lab/bin/lab-up)."""

import json
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from winsim import core  # noqa: E402
from winsim.testing import Lab  # noqa: E402

LAB = os.path.dirname(os.path.abspath(__file__))
ADMIN = os.path.join(LAB, "_run", "admin.conf")
pytestmark = pytest.mark.skipif(not os.path.exists(ADMIN),
                                reason="the lab control plane is not up (%s absent; run tests/lab/bin/lab-up)" % ADMIN)


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
      kubewin.nodes.kubeadm_join_token: {kubeconfig: %(admin)s}
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
    - name: service
      kubewin.nodes.win_kubelet_service: {kubelet_version: %(v)s}
    - name: join
      ansible.windows.win_command:
        argv: ['C:\\k\\kubeadm.exe', join, "{{ j.api_server_endpoint }}", --token, "{{ j.token }}",
               --discovery-token-ca-cert-hash, "{{ j.ca_cert_hashes[0] }}"]
    - name: started
      kubewin.nodes.win_kubelet_service: {kubelet_version: %(v)s, state: started}
""" % {"admin": ADMIN, "v": version}


def test_join_ends_with_ready_node(lab):
    rc, doc, res = lab.play(None, plays=_join_play(_version()))
    assert rc == 0, json.dumps(res, indent=1)[-3000:]
    node = json.loads(kubectl("get", "node", lab.node, "-o", "json").stdout)
    labels = node["metadata"]["labels"]
    assert labels["kubernetes.io/os"] == "windows"
    assert labels["node.kubernetes.io/windows-build"] == "10.0.20348"
    files = lab.dump()["files"]
    assert "C:\\etc\\kubernetes\\kubelet.conf" in files
    assert "C:\\etc\\kubernetes\\bootstrap-kubelet.conf" not in files
    with open(os.path.join(lab.root, "hosts", "win-1", "C", "var", "lib", "kubelet", "kubeadm-flags.env")) as f:
        assert f.read() == 'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=npipe:////./pipe/containerd-containerd"\n'
    ready = kubectl("wait", "--for=condition=Ready", "node/" + lab.node, "--timeout=60s")
    assert ready.returncode == 0, ready.stderr
    # a second join is refused by preflight (kubelet.conf and ca.crt exist)
    rc, doc, res = lab.play(None, plays=_join_play(_version()))
    assert rc != 0 and "FileAvailable--etc-kubernetes-kubelet.conf" in res["join"]["win-1"]["stderr"]


def test_kubelet_with_unknown_flag_does_not_start(lab):
    flags = os.path.join(LAB, "_cache", _version(), "kubelet-flags.txt")
    if not os.path.exists(flags):
        pytest.skip("no kubelet flag list for %s yet (tests/lab/bin/lab-build writes it)" % _version())
    rc, _, res = lab.play("""
        - name: kubelet
          ansible.windows.win_copy: {content: "KUBEWIN-SIM-BINARY kubelet %s\\n", dest: 'C:\\k\\kubelet.exe'}
        - name: start
          kubewin.nodes.win_kubelet_service:
            kubelet_version: %s
            state: started
            extra_args: {no-such-flag: "1"}
          ignore_errors: true
    """ % (_version(), _version()))
    assert "unknown flag: --no-such-flag" in res["start"]["win-1"]["msg"]
    assert lab.dump()["services"]["kubelet"]["status"] == "Stopped"
