"""The lab's download mirror: layout like upstream, checksums of the served bytes, up/down scripts."""

import hashlib
import io
import os
import re
import socket
import subprocess
import sys
import tarfile
import urllib.request

import pytest

LAB = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

import mirror  # noqa: E402
from mirror import layout  # noqa: E402

_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _get(url):
    with _NO_PROXY.open(url, timeout=10) as r:
        return r.read()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("mirror"))
    manifest = mirror.build(root)
    server, url = mirror.start_server(root)
    yield url, manifest, root
    server.shutdown()
    server.server_close()


def test_layout_has_the_lab_versions_and_role_defaults(served):
    _, manifest, _ = served
    v = manifest["versions"]
    with open(os.path.join(LAB, "controlplane", "VERSION")) as f:
        assert f.read().strip() in v["kubernetes"]
    for d in os.listdir(os.path.join(LAB, "_cache")) if os.path.isdir(os.path.join(LAB, "_cache")) else []:
        if d.startswith("v1."):
            assert d in v["kubernetes"]
    assert "v0.26.7" in v["flannel"] and "v1.6.2" in v["cni"] and v["flannel_cni"] and "v0.3.1" in v["sdn_cni"]
    paths = set(manifest["files"])
    for k in v["kubernetes"]:
        for name in ("kubelet.exe", "kubeadm.exe", "kube-proxy.exe", "kubectl.exe", "kube-log-runner.exe"):
            assert "release/%s/bin/windows/amd64/%s" % (k, name) in paths
    assert "flannel-io/flannel/releases/download/%s/flanneld.exe" % v["flannel"][0] in paths
    assert "containernetworking/plugins/releases/download/{0}/cni-plugins-windows-amd64-{0}.tgz".format(v["cni"][0]) \
        in paths
    assert "flannel-io/cni-plugin/releases/download/{0}/cni-plugin-flannel-windows-amd64-{0}.tgz".format(
        v["flannel_cni"][0]) in paths
    # windows_exporter's release asset, as its release workflow names it (the tag without its v)
    assert "v0.31.8" in v["windows_exporter"]
    assert "prometheus-community/windows_exporter/releases/download/v0.31.8/windows_exporter-0.31.8-amd64.exe" in paths


def test_checksum_files_match_the_served_bytes(served):
    url, manifest, _ = served
    for path, meta in manifest["files"].items():
        data = _get("%s/%s" % (url, path))
        checksum = _get("%s/%s" % (url, meta["checksum_path"])).decode()
        digest = hashlib.sha512(data).hexdigest()
        assert meta["sha512"] == digest
        if path.startswith("containerd/"):  # containerd's Makefile: sha256sum <archive> > <archive>.sha256sum
            sha256 = hashlib.sha256(data).hexdigest()
            assert meta["checksum_path"] == path + ".sha256sum" and meta["sha256"] == sha256
            assert checksum == "%s  %s\n" % (sha256, path.rsplit("/", 1)[1])
            with tarfile.open(fileobj=io.BytesIO(data)) as t:
                assert t.getnames() == ["bin"] + list(layout.CONTAINERD_MEMBERS)
        elif path.startswith("kubernetes-sigs/"):  # crictl: <archive>.sha256
            assert checksum == hashlib.sha256(data).hexdigest() and meta["checksum_path"] == path + ".sha256"
        elif path.startswith("release/"):
            assert checksum == digest  # dl.k8s.io: the hex digest only
        elif path.startswith("microsoft/"):
            assert checksum == "%s  ./release/%s\n" % (digest, path.rsplit("/", 1)[1])  # shasum ./release/<zip>
        else:
            assert checksum == "%s  %s\n" % (digest, path.rsplit("/", 1)[1])  # sha512sum format


def test_binaries_are_stand_ins_the_simulator_runs(served):
    url, manifest, _ = served
    v = manifest["versions"]
    first = _get("%s/%s" % (url, layout.kubernetes_path(v["kubernetes"][0], "kubelet.exe"))).splitlines()[0]
    assert first.decode() == "KUBEWIN-SIM-BINARY kubelet %s" % v["kubernetes"][0]
    # containerd's and crictl's role defaults are written without the v (kubespray's spelling) and still served
    assert re.match(r"^\d+\.\d+\.\d+$", v["containerd"][0]) and re.match(r"^\d+\.\d+\.\d+$", v["crictl"][0])
    with tarfile.open(fileobj=io.BytesIO(_get("%s/%s" % (url, layout.containerd_path(v["containerd"][0]))))) as t:
        first = t.extractfile("bin/containerd.exe").read().splitlines()[0]
    assert first.decode() == "KUBEWIN-SIM-BINARY containerd %s" % v["containerd"][0]
    first = _get("%s/%s" % (url, layout.flannel_path(v["flannel"][0]))).splitlines()[0]
    assert first.decode() == "KUBEWIN-SIM-BINARY flanneld %s" % v["flannel"][0]
    with tarfile.open(fileobj=io.BytesIO(_get("%s/%s" % (url, layout.cni_path(v["cni"][0]))))) as t:
        names = t.getnames()  # tarfile reads the "./" entry as "."
        # containernetworking/plugins v1.6.2 plugins/windows_only.txt: no flannel (it left in v1.0.0)
        # and README.md, LICENSE: the release workflow (windows_releases) copies them into bin/ before tarring it
        assert sorted(names) == [".", "./LICENSE", "./README.md", "./host-local.exe", "./win-bridge.exe",
                                 "./win-overlay.exe"]
        assert t.extractfile("./win-bridge.exe").readline().decode().split() == \
            ["KUBEWIN-SIM-BINARY", "win-bridge", v["cni"][0]]
    with tarfile.open(fileobj=io.BytesIO(_get("%s/%s" % (url, layout.flannel_cni_path(v["flannel_cni"][0]))))) as t:
        assert t.getnames() == ["flannel-amd64.exe"]
    import zipfile
    assert layout.sdn_cni_path("v0.3.1") == ("microsoft/windows-container-networking/releases/download/v0.3.1/"
                                             "windows-container-networking-cni-amd64-0.3.1.zip")
    with zipfile.ZipFile(io.BytesIO(_get("%s/%s" % (url, layout.sdn_cni_path("v0.3.1"))))) as z:
        # Makefile `release`: zip -j of out/ (no directory entries) after `all`
        assert z.namelist() == ["sdnbridge.exe", "sdnoverlay.exe", "nat.exe", "generateCNIConfig.ps1"]
    assert layout.nssm_path() == "nssm/release/nssm-2.24.zip"
    with zipfile.ZipFile(io.BytesIO(_get("%s/%s" % (url, layout.nssm_path())))) as z:
        assert [n for n in z.namelist() if not n.endswith("/")] == ["nssm-2.24/win64/nssm.exe",
                                                                    "nssm-2.24/win32/nssm.exe"]
        assert z.read("nssm-2.24/win64/nssm.exe").decode().split("\n")[0] == "KUBEWIN-SIM-BINARY nssm 2.24"


def test_build_is_reproducible(served, tmp_path):
    _, manifest, _ = served
    again = mirror.build(str(tmp_path / "again"))
    assert {p: m["sha512"] for p, m in again["files"].items()} == {p: m["sha512"] for p, m in manifest["files"].items()}


def test_missing_file_is_404(served):
    url = served[0]
    with pytest.raises(urllib.error.HTTPError) as e:
        _get(url + "/release/v0.0.0/bin/windows/amd64/kubelet.exe")
    assert e.value.code == 404


def test_role_vars_point_at_the_mirror(served):
    url, manifest, _ = served
    rv = mirror.role_vars(url, manifest)
    assert rv["kubewin_kubernetes_download_url"] == url + "/release"
    assert rv["kubewin_nssm_download_url"] == url + "/nssm/release/nssm-2.24.zip"
    # pins are keyed by the URL the node downloads, as the roles build it from the base URLs
    assert rv["kubewin_checksums"][rv["kubewin_nssm_download_url"]] == manifest["files"][layout.nssm_path()]["sha512"]
    flannel_v = manifest["versions"]["flannel"][0]
    flanneld_url = "%s/%s/flanneld.exe" % (rv["kubewin_flannel_download_url"], flannel_v)
    assert rv["kubewin_checksums"][flanneld_url] == manifest["files"][layout.flannel_path(flannel_v)]["sha512"]
    # windows_exporter: the URL the roles build (roles/kubewin/vars/main.yml _kubewin_windows_exporter_downloads)
    exporter_url = "%s/v0.31.8/windows_exporter-0.31.8-amd64.exe" % rv["kubewin_windows_exporter_download_url"]
    assert rv["kubewin_checksums"][exporter_url] == \
        manifest["files"][layout.windows_exporter_path("v0.31.8")]["sha512"]
    assert rv["kubewin_allow_insecure_downloads"] is True


def test_mirror_up_and_down(tmp_path):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    env = dict(os.environ, LAB_MIRROR_PORT=str(port), LAB_MIRROR_ROOT=str(tmp_path / "root"),
               LAB_MIRROR_PIDFILE=str(tmp_path / "pids" / "mirror.pid"), LAB_MIRROR_LOG=str(tmp_path / "mirror.log"),
               LAB_PYTHON=sys.executable)
    up = os.path.join(LAB, "mirror", "mirror-up")
    down = os.path.join(LAB, "mirror", "mirror-down")
    try:
        p = subprocess.run([up], env=env, capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        assert p.stdout.strip().splitlines()[-1] == "http://127.0.0.1:%d" % port
        pid = int((tmp_path / "pids" / "mirror.pid").read_text())
        p = subprocess.run([up], env=env, capture_output=True, text=True, timeout=120)
        assert p.returncode == 0 and "already up" in p.stdout
        assert _get("http://127.0.0.1:%d/release/" % port)
    finally:
        p = subprocess.run([down, "--purge"], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "stopped (pid %d)" % pid in p.stdout
    assert not os.path.exists("/proc/%d" % pid) or open("/proc/%d/stat" % pid).read().split()[2] == "Z"
    assert not (tmp_path / "root").exists()
