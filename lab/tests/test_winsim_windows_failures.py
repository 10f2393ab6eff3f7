"""Failures as Windows has them (issue 11 items 2 and 4), no control plane needed: kubeadm.exe's
preflight as v1.37 runs and names it on Windows, its plain stop of a service with running dependents,
and programs in use that cannot be written over."""

import base64
import hashlib
import io
import json
import os
import tarfile
from unittest import mock

import pytest
from winsim import core  # noqa: E402
from winsim.ps.winhost import run_kubewin_script as run_ps  # noqa: E402

TOKEN = "abcdef.0123456789abcdef"

from ansible_collections.ansible.windows.plugins.module_utils import winsim_kube, winsim_scm  # noqa: E402


def _put(host, win_path, data=b"x"):
    local = host.local_path(win_path)
    os.makedirs(os.path.dirname(local), exist_ok=True)
    with open(local, "wb") as f:
        f.write(data)


def _kubeadm(host, args, path="C:\\k;C:\\Windows\\system32"):
    with host.open(), mock.patch.dict(os.environ, {"Path": path}):
        return winsim_kube.kubeadm(host, "v1.37.2", args, None)


def _join(host, path="C:\\k;C:\\Windows\\system32"):
    return _kubeadm(host, ["join", "127.0.0.1:1", "--token", TOKEN, "--discovery-token-unsafe-skip-ca-verification"],
                    path)


def _no_discovery_wait(root):
    """A join that passes preflight goes on to discovery, against a server that is not there: fail it at once
    instead of after the simulator's 60 s (these tests are about preflight)."""
    with open(os.path.join(str(root), "winsim.json"), "w") as f:
        json.dump({"discovery_timeout": 0}, f)


def test_join_preflight_as_kubeadm_exe_prints_it_on_windows(tmp_path):
    """What an interrupted join leaves (bootstrap-kubelet.conf, the CA) and a Path without System32 stop the next
    join with kubeadm v1.37's Windows check names: filepath.Join of "/etc/kubernetes" (no drive, backslashes),
    the CA at v1beta4's Windows default as written, xcopy looked up on the Path (checks_windows.go)."""
    _no_discovery_wait(tmp_path)
    host = core.create_host(str(tmp_path), "w")
    for tool in ("kubeadm", "kubelet"):
        core.write_binary(host.local_path("C:\\k\\%s.exe" % tool), tool, "v1.37.2")
    _put(host, "C:\\etc\\kubernetes\\bootstrap-kubelet.conf")
    _put(host, "C:\\etc\\kubernetes\\pki\\ca.crt")
    rc, _, err = _join(host, path="C:\\k")
    assert rc == 1
    errors = [line.strip() for line in err.splitlines() if line.strip().startswith("[ERROR")]
    assert errors == [
        "[ERROR FileAvailable-\\etc\\kubernetes\\bootstrap-kubelet.conf]: \\etc\\kubernetes\\bootstrap-kubelet.conf "
        "already exists",
        "[ERROR FileExisting-xcopy]: xcopy not found in system path",
        "[ERROR FileAvailable-C:-etc-kubernetes-pki-ca.crt]: C:/etc/kubernetes/pki/ca.crt already exists"]
    # no kubelet service: ServiceCheck only warns
    assert "[WARNING Service-kubelet]: kubelet service does not exist" in err
    # the names are what --ignore-preflight-errors takes (compared lower-cased)
    rc, _, err = _kubeadm(host, ["join", "127.0.0.1:1", "--token", TOKEN,
                                 "--discovery-token-unsafe-skip-ca-verification", "--ignore-preflight-errors",
                                 "FileAvailable-\\etc\\kubernetes\\bootstrap-kubelet.conf,FileExisting-xcopy,"
                                 "FileAvailable-C:-etc-kubernetes-pki-ca.crt"], path="C:\\k")
    assert "[ERROR" not in err and "[WARNING FileExisting-xcopy]: xcopy not found in system path" in err


def test_join_preflight_without_the_runtime_pipe_fails_twice_as_the_real_kubeadm_does(tmp_path):
    """No containerd on its pipe: CRI and ContainerRuntimeVersion both fail with the connect error (the real
    kubeadm.exe under Wine prints the same two, test_wine_kubeadm.py), so ignoring CRI alone does not join."""
    host = core.create_host(str(tmp_path), "w")
    for tool in ("kubeadm", "kubelet"):
        core.write_binary(host.local_path("C:\\k\\%s.exe" % tool), tool, "v1.37.2")
    with host.open() as h:
        h.state["pipes"] = [p for p in h.state.get("pipes", []) if "containerd" not in p]
    rc, _, err = _join(host)
    errors = [line.strip() for line in err.splitlines() if line.strip().startswith("[ERROR")]
    assert rc == 1 and [e.split("]", 1)[0] for e in errors] == ["[ERROR CRI", "[ERROR ContainerRuntimeVersion"], err
    assert all(e.split("]: ", 1)[1].startswith("could not connect to the container runtime: failed to create new CRI "
                                               "runtime service: validate service connection") for e in errors)
    rc, _, err = _kubeadm(host, ["join", "127.0.0.1:1", "--token", TOKEN,
                                 "--discovery-token-unsafe-skip-ca-verification", "--ignore-preflight-errors", "CRI"])
    assert rc == 1 and "[ERROR ContainerRuntimeVersion]" in err and "[ERROR CRI]" not in err


def test_join_preflight_refuses_a_kubelet_three_minors_behind(tmp_path):
    """KubeletVersionCheck: MinimumKubeletVersion is kubeadm's minor minus 3 (constants.go)."""
    _no_discovery_wait(tmp_path)
    host = core.create_host(str(tmp_path), "w")
    core.write_binary(host.local_path("C:\\k\\kubeadm.exe"), "kubeadm", "v1.37.2")
    core.write_binary(host.local_path("C:\\k\\kubelet.exe"), "kubelet", "v1.33.9")
    rc, _, err = _join(host)
    assert rc == 1 and ('[ERROR KubeletVersion]: Kubelet version "1.33.9" is lower than kubeadm can support. '
                        'Please upgrade kubelet') in err
    core.write_binary(host.local_path("C:\\k\\kubelet.exe"), "kubelet", "v1.34.0")
    rc, _, err = _join(host)
    assert "KubeletVersion" not in err


def _services(host, running):
    """kubelet, and flanneld depending on it (as the collection registers them), on a stand-in program that
    answers the SCM; ``running`` are started."""
    core.write_binary(host.local_path("C:\\k\\svc.exe"), "svchost", "10.0")
    with host.open():
        winsim_scm.create(host.state, "kubelet", "C:\\k\\svc.exe")
        winsim_scm.create(host.state, "flanneld", "C:\\k\\svc.exe", dependencies=["kubelet"])
        for name in running:
            winsim_scm.start(host, name)


def test_reset_cannot_stop_a_kubelet_other_services_depend_on(tmp_path):
    """kubeadm's Windows ServiceStop is a plain ControlService(STOP): with flanneld running, Windows refuses it
    (ERROR_DEPENDENT_SERVICES_RUNNING), kubeadm only warns and empties the kubelet's directories under a
    running kubelet. With flanneld stopped first (the reset role's order) it stops the kubelet."""
    host = core.create_host(str(tmp_path), "w")
    core.write_binary(host.local_path("C:\\k\\kubeadm.exe"), "kubeadm", "v1.37.2")
    _services(host, ["kubelet", "flanneld"])
    rc, out, err = _kubeadm(host, ["reset", "--force"])
    assert rc == 0 and "[reset] The kubelet service could not be stopped by kubeadm: [could not stop service " \
                       "kubelet: A stop control has been sent to a service that other running services are " \
                       "dependent on.]" in err
    assert core.dump(str(tmp_path), "w")["services"]["kubelet"]["status"] == "Running"
    with host.open():
        winsim_scm.stop(host, "flanneld", force=False)
    rc, out, err = _kubeadm(host, ["reset", "--force"])
    assert rc == 0 and "could not be stopped" not in err
    assert core.dump(str(tmp_path), "w")["services"]["kubelet"]["status"] == "Stopped"


def test_join_cannot_restart_a_kubelet_other_services_depend_on(tmp_path):
    """TryStopKubelet/TryStartKubelet use the same ServiceStop: with a dependent running, the join's restart of
    the kubelet is refused, and kubeadm only warns (phases/kubelet/kubelet.go). The join then stops at the
    Port-10250 preflight check already: the running kubelet holds its port."""
    host = core.create_host(str(tmp_path), "w")
    for tool in ("kubeadm", "kubelet"):
        core.write_binary(host.local_path("C:\\k\\%s.exe" % tool), tool, "v1.37.2")
    _services(host, ["kubelet", "flanneld"])
    rc, _, err = _join(host)
    assert rc == 1 and "[ERROR Port-10250]: Port 10250 is in use" in err


def _tgz(members):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_unpacking_over_the_program_of_a_running_service_fails(tmp_path):
    """Windows does not let a running program's file be written: tar.exe cannot create it (the other members
    are unpacked) and exits 1; node_sync stops with tar's words. Stopped, the same download unpacks."""
    host = core.create_host(str(tmp_path), "w")
    core.write_binary(host.local_path("C:\\k\\svc.exe"), "svchost", "10.0")
    archive = _tgz({"./svc.exe": b"new", "./other.exe": b"other"})
    _put(host, "C:\\dl\\bundle.tgz", archive)
    with host.open():
        winsim_scm.create(host.state, "svc", "C:\\k\\svc.exe")
        winsim_scm.start(host, "svc")
    params = {"Downloads": [{"url": "C:\\dl\\bundle.tgz", "dest": "C:\\k\\bundle.stamp", "extract_dir": "C:\\k",
                             "sha512": hashlib.sha512(archive).hexdigest()}]}
    with host.open():
        with pytest.raises(core.SimError, match=r"tar.exe could not unpack C:\\dl\\bundle.tgz \(exit code 1\): "
                                                r"tar.exe: svc.exe: Can't create"):
            run_ps(host, "node_sync", params, False)
        winsim_scm.stop(host, "svc", force=False)
        run_ps(host, "node_sync", params, False)
    with open(host.local_path("C:\\k\\svc.exe"), "rb") as f:
        assert f.read() == b"new"


def test_writing_over_the_program_of_a_running_service_is_a_sharing_violation(tmp_path):
    """[IO.File]::WriteAllBytes onto a running program: IOException, the sharing violation's text."""
    host = core.create_host(str(tmp_path), "w")
    core.write_binary(host.local_path("C:\\k\\svc.exe"), "svchost", "10.0")
    with host.open():
        winsim_scm.create(host.state, "svc", "C:\\k\\svc.exe")
        winsim_scm.start(host, "svc")
        from winsim.ps import winhost
        script = ("param([string]$P)\n$ErrorActionPreference = 'Stop'\n"
                  "[System.IO.File]::WriteAllBytes($P, [Convert]::FromBase64String('%s'))\n$Ansible.Result = @{}\n"
                  % base64.b64encode(b"new").decode())
        answer = winhost.execute(host, script, "write", {"P": "C:\\k\\svc.exe"}, error_action="Stop")
    assert answer["failed"]
    assert answer["error"][0]["exception"]["message"] == (
        'Exception calling "WriteAllBytes" with "2" argument(s): "The process cannot access the file '
        '\'C:\\k\\svc.exe\' because it is being used by another process."')


def test_the_first_vswitch_cuts_the_host_off_for_a_moment(tmp_path):
    """Creating the first L2Bridge/Overlay network on an adapter binds it to a new vSwitch: the host drops off the
    network for a few seconds (microsoft/SDN start.ps1: "it causes network blip"), so the next remote operation
    is unreachable, as over WinRM. A network on the same vSwitch does not blip; waiting for the connection does
    what the network role does after its External network."""
    from winsim.testing import Lab
    lab = Lab(tmp_path / "winsim", nodes=1)
    rc, _, res = lab.play("""
        - name: external
          kubewin.nodes.win_hns_network: {name: External, type: overlay, address_prefix: 192.168.255.0/30,
                                      gateway: 192.168.255.1, vsid: 9999}
        - name: next
          kubewin.nodes.win_host_facts: {}
          ignore_unreachable: true
        - name: wait
          ansible.builtin.wait_for_connection: {delay: 1, sleep: 1, timeout: 60}
        - name: flannel
          kubewin.nodes.win_hns_network: {name: flannel.4096, type: overlay, address_prefix: 10.244.9.0/24,
                                      gateway: 10.244.9.1, vsid: 4096}
        - name: after
          kubewin.nodes.win_host_facts: {}
    """)
    assert res["external"]["win-1"]["changed"]
    nxt = res["next"]["win-1"]
    assert nxt.get("unreachable") and "Hyper-V virtual switch" in nxt["msg"], nxt
    assert rc == 0 and not res["after"]["win-1"].get("unreachable"), res["after"]
    assert lab.dump()["hns"]["vswitches"] == {"Ethernet": "vEthernet (Ethernet)"}


def test_kubelet_exits_after_its_tls_bootstrap_without_its_client_ca_file(tmp_path):
    """The kubelet reads authentication.x509.clientCAFile in run()'s BuildAuth, after its API client (the TLS
    bootstrap) and before the runtime check and healthz (cmd/kubelet/app/server.go, auth.go v1.37.2): a CA that is
    not where the config says (kubespray's /etc/kubernetes/ssl while kubeadm join wrote C:/etc/kubernetes/pki/ca.crt)
    ends it with os.ReadFile's Windows error; an empty file with dynamiccertificates' own."""
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_binaries

    host = core.create_host(str(tmp_path), "w")
    config = {"authentication": {"x509": {"clientCAFile": "C:\\etc\\kubernetes\\ssl\\ca.crt"}}}
    _put(host, "C:\\etc\\kubernetes\\pki\\ca.crt")
    with pytest.raises(winsim_binaries.ExitsAfterRunning) as e:
        winsim_kube._client_ca_check(host, {}, config)
    assert str(e.value) == ("failed to run Kubelet: open C:\\etc\\kubernetes\\ssl\\ca.crt: The system cannot find "
                            "the path specified.")
    os.makedirs(host.local_path("C:\\etc\\kubernetes\\ssl"))
    with pytest.raises(winsim_binaries.ExitsAfterRunning, match="cannot find the file specified"):
        winsim_kube._client_ca_check(host, {}, config)
    _put(host, "C:\\etc\\kubernetes\\ssl\\ca.crt", b"")
    with pytest.raises(winsim_binaries.ExitsAfterRunning, match='missing content for CA bundle '
                                                                '"client-ca-bundle::C:\\\\etc'):
        winsim_kube._client_ca_check(host, {}, config)
    _put(host, "C:\\etc\\kubernetes\\ssl\\ca.crt")
    winsim_kube._client_ca_check(host, {}, config)
    # --client-ca-file wins over the config file
    winsim_kube._client_ca_check(host, {"client-ca-file": "C:\\etc\\kubernetes\\pki\\ca.crt"},
                                 {"authentication": {"x509": {"clientCAFile": "C:\\nowhere\\ca.crt"}}})
    winsim_kube._client_ca_check(host, {}, {})  # no client CA configured: nothing read


def test_before_1_36_a_missing_client_ca_fails_the_kubelets_start_and_a_rooted_path_is_on_c(tmp_path):
    """Up to 1.35 InitializeTLS reads the client CA in RunE, before Run reports to the SCM (kubernetes v1.35.0
    cmd/kubelet/app/server.go): the start fails, with its own words. A path rooted without a drive (the real
    kubeadm.exe under Wine writes those at upgrade node) is found on the system drive, as Windows resolves it."""
    host = core.create_host(str(tmp_path), "w")
    config = {"authentication": {"x509": {"clientCAFile": "\\etc\\kubernetes\\ssl\\ca.crt"}}}
    with pytest.raises(winsim_kube.SimError) as e:
        winsim_kube._client_ca_check(host, {}, config, before_run=True)
    assert str(e.value).startswith("1067: The process terminated unexpectedly. (failed to construct kubelet "
                                   "dependencies: unable to load client CA file \\etc\\kubernetes\\ssl\\ca.crt: open")
    _put(host, "C:\\etc\\kubernetes\\ssl\\ca.crt")
    winsim_kube._client_ca_check(host, {}, config, before_run=True)
    winsim_kube._client_ca_check(host, {}, config)


@pytest.mark.parametrize("ca, ok", [("C:\\etc\\kubernetes\\ssl\\ca.crt", True), ("\\etc\\k\\ca.crt", True),
                                    ("C:\\etc\\kubernetes\\ssl\\ca.pem", False), ("pki\\ca.crt", False)])
def test_kubeadm_join_validates_its_ca_cert_path(ca, ok):
    """ValidateJoinConfiguration: caCertPath absolute (Windows isAbs) and ending in .crt."""
    cfg = {"has_token": True, "file": None, "endpoint": "192.0.2.10:6443", "token": "abcdef.0123456789abcdef",
           "tls_token": "abcdef.0123456789abcdef", "pins": ["sha256:" + "a" * 64], "skip_verify": False,
           "node_name": "win-1", "cri": "npipe:////./pipe/containerd-containerd", "ignore": [], "ca_cert_path": ca}
    if ok:
        winsim_kube._validate_join(cfg)
    else:
        with pytest.raises(winsim_kube._KubeadmExit, match="the ca certificate path must be an absolute path"):
            winsim_kube._validate_join(cfg)
