"""The real kubeadm.exe under Wine joins the lab's control plane with --dry-run (tests/lab/README.md, "Wine"):
its Windows preflight needs a CRI v1 runtime on containerd's named pipe (the stand-in cripipe.exe answers
Version, Status, RuntimeConfig and ImageFsInfo) and kubelet.exe on PATH. Needs make lab-up."""

import hashlib
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from winsim import core  # noqa: E402,F401,I001  (puts the simulator's collections on sys.path)
import scenario  # noqa: E402
from ansible_collections.ansible.windows.plugins.module_utils import winsim_wine  # noqa: E402

LAB = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(LAB, "_cache")
VERSION = open(os.path.join(LAB, "controlplane", "VERSION")).read().strip()


@pytest.fixture(scope="module")
def join_args(api):
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    kubeadm = os.path.join(CACHE, VERSION, "bin", "kubeadm")
    token = subprocess.run([kubeadm, "token", "create", "--ttl", "10m", "--kubeconfig", scenario.ADMIN_CONF],
                           check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
    with open(os.path.join(LAB, "_run", "kubernetes", "pki", "ca.crt"), "rb") as f:
        spki = x509.load_pem_x509_certificate(f.read()).public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    server = "127.0.0.1:%s" % os.environ.get("LAB_APISERVER_PORT", "16443")
    ca_hash = "sha256:" + hashlib.sha256(spki).hexdigest()
    return ["join", server, "--token", token, "--discovery-token-ca-cert-hash", ca_hash,
            "--cri-socket", "npipe:////./pipe/containerd-containerd", "--node-name", "wine-kubeadm-1", "--dry-run"]


def test_the_real_kubeadm_joins_with_dry_run_when_a_cri_answers_on_the_pipe(join_args):
    res = winsim_wine.kubeadm_with_cri(CACHE, VERSION, join_args)
    out = res["output"]
    assert res["rc"] == 0 and "[ERROR" not in out, out[-3000:]
    # v1.37 writes the CRI socket into instance-config.yaml, no longer into kubeadm-flags.env
    assert "instance-config.yaml" in out
    assert 'KUBELET_KUBEADM_ARGS="--hostname-override=wine-kubeadm-1"' in out
    assert "This node has joined the cluster" in out


def test_without_a_runtime_on_the_pipe_the_real_preflight_fails(join_args):
    res = winsim_wine.kubeadm_with_cri(CACHE, VERSION, join_args, cri=False)
    assert res["rc"] != 0
    errors = [line.strip().split("]: ", 1) for line in res["output"].splitlines() if line.strip().startswith("[ERROR")]
    # both checks connect first (checks.go addCommonChecks); the simulator's join preflight says the same
    assert [name for name, _ in errors] == ["[ERROR CRI", "[ERROR ContainerRuntimeVersion"], res["output"][-3000:]
    assert all(text.startswith("could not connect to the container runtime: failed to create new CRI runtime "
                               "service: validate service connection") for _, text in errors)
