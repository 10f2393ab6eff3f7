"""The real kubeadm.exe under Wine joins the lab's control plane with --dry-run (lab/README.md, "Wine"):
its Windows preflight needs a CRI v1 runtime on containerd's named pipe (the stand-in cripipe.exe answers
Version, Status, RuntimeConfig and ImageFsInfo) and kubelet.exe on PATH. Needs make lab-up."""

import hashlib
import json
import os
import subprocess

import pytest
import scenario  # noqa: E402
from ansible_collections.ansible.windows.plugins.module_utils import winsim_wine  # noqa: E402
from winsim import core  # noqa: E402,F401,I001  (puts the simulator's collections on sys.path)

LAB = scenario.LAB
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


def _joined_host(root, lab_cache):
    """A simulated host with what a join leaves under C:\\etc\\kubernetes and C:\\var\\lib\\kubelet, plus a file of
    the operator's own there; lab_cache: the real kubeadm.exe runs the reset (winsim_kube._real_reset)."""
    from winsim import core as winsim_core

    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "winsim.json"), "w") as f:
        json.dump({"lab_cache": lab_cache} if lab_cache else {}, f)
    host = winsim_core.create_host(root, "w")
    for tool in ("kubeadm", "kubelet"):
        winsim_core.write_binary(host.local_path("C:\\k\\%s.exe" % tool), tool, VERSION)
    for win_path in ("C:\\etc\\kubernetes\\kubelet.conf", "C:\\etc\\kubernetes\\pki\\ca.crt",
                     "C:\\etc\\kubernetes\\operator-notes.txt", "C:\\var\\lib\\kubelet\\config.yaml",
                     "C:\\var\\lib\\etcd\\member\\snap\\db",
                     "C:\\var\\lib\\kubelet\\kubeadm-flags.env",
                     "C:\\var\\lib\\kubelet\\pki\\kubelet-client-current.pem"):
        local = host.local_path(win_path)
        os.makedirs(os.path.dirname(local), exist_ok=True)
        with open(local, "w") as f:
            f.write("x")
    os.makedirs(host.local_path("C:\\etc\\kubernetes\\manifests"), exist_ok=True)
    return host


def _left(host):
    found = []
    for top in ("C:\\etc\\kubernetes", "C:\\var\\lib\\kubelet", "C:\\var\\lib\\etcd"):
        local = host.local_path(top)
        for dirpath, dirs, files in os.walk(local):
            found += [os.path.relpath(os.path.join(dirpath, n), host.drive) for n in dirs + files]
    return sorted(found)


def test_the_real_kubeadm_resets_the_simulated_hosts_files_as_the_stand_in_does(tmp_path):
    """kubeadm reset on the lab's hosts runs the real kubeadm.exe under Wine on a copy of the host's directories
    (the simulated SCM stops the kubelet first): it empties the kubelet's directory, etcd's default data directory,
    pki and manifests, deletes its kubeconfigs and leaves other files; the stand-in used without Wine does the same."""
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_kube

    results = {}
    for name, lab_cache in (("real", CACHE), ("stand-in", None)):
        host = _joined_host(str(tmp_path / name), lab_cache)
        with host.open():
            rc, out, err = winsim_kube.kubeadm(host, VERSION, ["reset", "--force"], None)
        assert rc == 0, out + err
        results[name] = (_left(host), out)
    assert results["real"][0] == results["stand-in"][0] == sorted([
        os.path.join("etc", "kubernetes", "manifests"), os.path.join("etc", "kubernetes", "operator-notes.txt"),
        os.path.join("etc", "kubernetes", "pki")])
    real_out = results["real"][1]
    # printed by kubeadm.exe itself (cmd/kubeadm/app/cmd/phases/reset/cleanupnode.go, reset.go)
    assert "[reset] Deleting contents of directories" in real_out
    assert "The reset process does not perform cleanup of CNI plugin configuration" in real_out
