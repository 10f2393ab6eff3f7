"""The real Windows kubelet.exe and kube-proxy.exe under Wine judge the command lines the collection
generates, for each version the lab serves (lab/README.md, "Wine"). No control plane needed:
needs `lab/bin/lab-build` (the Windows binaries and the Wine prefix in lab/_cache)."""

import datetime
import json
import os

import pytest
import scenario  # noqa: E402  (lab/, on sys.path through tests/lab/conftest.py)
from ansible_collections.ansible.windows.plugins.module_utils import winsim_kube, winsim_wine  # noqa: E402
from winsim import core  # noqa: E402,I001
from winsim.ps.winhost import run_kubewin_script as run_ps  # noqa: E402  (the real script text, interpreted)

from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import kubelet as kubelet_service  # noqa: E402
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import network as host_network  # noqa: E402

LAB = scenario.LAB
CACHE = os.path.join(LAB, "_cache")


def _read(name):
    with open(os.path.join(LAB, "controlplane", name)) as f:
        return f.read().strip()


VERSIONS = [_read("VERSION"), _read("UPGRADE_FROM")]
CRI = {"containerd": "npipe:////./pipe/containerd-containerd", "docker": "npipe:////./pipe/cri-dockerd"}
KUBELET_DIR = "C:\\var\\lib\\kubelet"
CONFIG = KUBELET_DIR + "\\config.yaml"


def _need(version):
    for program in ("kubelet", "kube-proxy", "kubeadm"):
        if not winsim_wine.binary(CACHE, version, program):
            pytest.fail("no Windows %s.exe %s or Wine prefix in %s: run lab/bin/lab-build"
                        % (program, version, CACHE))


@pytest.fixture
def host(tmp_path):
    _need(VERSIONS[0])
    with open(os.path.join(str(tmp_path), "winsim.json"), "w") as f:
        json.dump({"lab_cache": CACHE}, f)
    return core.create_host(str(tmp_path), "w")


def _put(host, win_path, data):
    local = host.local_path(win_path)
    os.makedirs(os.path.dirname(local), exist_ok=True)
    with open(local, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def _ca_pem():
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubernetes")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True).sign(key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM)


def _joined_node_files(host, version, feature_gates=None):
    """What kubeadm join leaves for the kubelet: the cluster's KubeletConfiguration (kubeadm's
    defaults for the version, printed by the real kubeadm.exe of that version under Wine) with the
    Windows path mutation (cmd/kubeadm/app/componentconfigs/kubelet_windows.go: resolvConf "",
    staticPodPath and clientCAFile on the kubeadm drive), and the cluster CA."""
    import yaml

    res = winsim_wine.run(CACHE, version, "kubeadm",
                          ["config", "print", "init-defaults", "--component-configs", "KubeletConfiguration"], {})
    docs = [d for d in yaml.safe_load_all(res["output"][res["output"].find("apiVersion"):]) if d]
    config = [d for d in docs if d.get("kind") == "KubeletConfiguration"]
    assert res["rc"] == 0 and config, res["output"][-2000:]
    config = config[0]
    config["resolvConf"] = ""
    config["staticPodPath"] = "C:\\etc\\kubernetes\\manifests"
    config["authentication"]["x509"]["clientCAFile"] = "C:\\etc\\kubernetes\\pki\\ca.crt"
    if feature_gates:
        config["featureGates"] = feature_gates
    _put(host, CONFIG, yaml.safe_dump(config))
    _put(host, "C:\\etc\\kubernetes\\pki\\ca.crt", _ca_pem())


def _kubelet_args(version, runtime="containerd", extra_args=None):
    """The kubelet command line win_kubelet_service builds after a join (kubelet_service.compute_flags),
    with kubeadm-flags.env as the lab's kubeadm writes it."""
    flags, _warnings = kubelet_service.compute_flags(
        version, flags_env_text='KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=%s"\n' % CRI[runtime],
        extra_args=extra_args, config_file=CONFIG, kubeconfig="C:\\etc\\kubernetes\\kubelet.conf",
        bootstrap_kubeconfig="C:\\etc\\kubernetes\\bootstrap-kubelet.conf", cert_dir=KUBELET_DIR + "\\pki")
    return ["--%s" % n if v is None else "--%s=%s" % (n, v) for n, v in flags.items()]


@pytest.mark.parametrize("runtime", sorted(CRI))
@pytest.mark.parametrize("version", VERSIONS)
def test_the_real_kubelet_accepts_the_generated_command_line(host, version, runtime):
    _need(version)
    _joined_node_files(host, version)
    args = _kubelet_args(version, runtime, extra_args={"node-labels": "kubewin.io/os=windows", "v": 2})
    assert args[0] == "--windows-service"
    assert winsim_kube._kubelet_real_check(host, version, args) is True


@pytest.mark.parametrize("version", VERSIONS)
def test_an_unknown_kubelet_flag_fails_the_service_start(host, version):
    _need(version)
    _joined_node_files(host, version)
    # compute_flags takes any well-formed name: only the real kubelet knows its flags.
    args = _kubelet_args(version, extra_args={"no-such-flag": "x"})
    with pytest.raises(core.SimError) as e:
        winsim_kube._kubelet_real_check(host, version, args)
    assert str(e.value).startswith("1067: The process terminated unexpectedly.")
    assert "unknown flag: --no-such-flag" in str(e.value)


def test_an_unknown_feature_gate_in_the_kubelet_config_fails(host):
    version = VERSIONS[0]
    _joined_node_files(host, version, feature_gates={"NoSuchGate": True})
    with pytest.raises(core.SimError) as e:
        winsim_kube._kubelet_real_check(host, version, _kubelet_args(version))
    assert "unrecognized feature gate: NoSuchGate" in str(e.value)


def test_a_kubelet_config_the_real_kubelet_refuses_fails_the_start(host):
    """Through the SCM path: Start-Service of a kubelet whose config the real kubelet.exe refuses."""
    import yaml

    version = VERSIONS[0]
    _joined_node_files(host, version)
    config = yaml.safe_load(open(host.local_path(CONFIG)))
    config["healthzPort"] = 70000
    _put(host, CONFIG, yaml.safe_dump(config))
    core.write_binary(host.local_path("C:\\k\\kubelet.exe"), "kubelet", version)
    with host.open():
        with pytest.raises(core.SimError) as e:
            run_ps(host, "service_apply", {
                "Name": "kubelet", "Action": "create", "Run": "start",
                "CommandLine": "C:\\k\\kubelet.exe " + " ".join(_kubelet_args(version))}, False)
    assert "real kubelet.exe under Wine" in str(e.value)
    assert "healthzPort (--healthz-port) 70000 must be between 1 and 65535" in str(e.value)


def _proxy_args(version, backend="vxlan"):
    """kube-proxy's arguments as win_host_service's kube_proxy makes them (kube_proxy_argv: what follows the program
    in the service's command line, under kube-log-runner)."""
    argv = host_network.kube_proxy_argv("win-1", "10.244.0.0/16", backend, 4096, pod_cidr="10.244.3.0/24",
                                        kube_version=version)
    return argv[argv.index(host_network.KUBE_PROXY_EXE) + 1:]


@pytest.mark.parametrize("backend", ["vxlan", "host-gw"])
@pytest.mark.parametrize("version", VERSIONS)
def test_the_real_kube_proxy_accepts_the_generated_command_line(host, version, backend):
    _need(version)
    args = _proxy_args(version, backend)
    err, effective = winsim_wine.kube_proxy_validate(CACHE, version, args, {})
    assert err is None, err
    import yaml

    effective = yaml.safe_load(effective)
    # what the operator asked for is what kube-proxy took
    assert effective["mode"] == "kernelspace"
    assert effective["hostnameOverride"] == "win-1"
    assert effective["winkernel"]["networkName"] == host_network.network_name(backend, 4096)
    if backend == "vxlan":
        assert effective["winkernel"]["sourceVip"] == host_network.source_vip("10.244.3.0/24")


def _start_kube_proxy(host, version, args):
    core.write_binary(host.local_path("C:\\k\\kube-proxy.exe"), "kube-proxy", version)
    _put(host, "C:\\etc\\kube-proxy\\kubeconfig", "{}")
    with host.open():
        run_ps(host, "service_apply", {"Name": "kube-proxy", "Action": "create", "Run": "start",
                                       "CommandLine": "C:\\k\\kube-proxy.exe " + " ".join(args)}, False)


def test_an_unknown_kube_proxy_flag_fails_the_service_start(host):
    # pflag refuses it before initForOS: the process exits before it reports to the SCM.
    version = VERSIONS[0]
    with pytest.raises(core.SimError) as e:
        _start_kube_proxy(host, version, _proxy_args(version) + ["--no-such-flag=1"])
    assert "1067: The process terminated unexpectedly." in str(e.value)
    assert "real kube-proxy.exe under Wine: Error: unknown flag: --no-such-flag" in str(e.value)


@pytest.mark.parametrize("bad, message", [
    # the real kube-proxy checks --feature-gates in Complete, after initForOS (not while parsing)
    ("--feature-gates=NoSuchGate=true", "failed complete: unrecognized feature gate: NoSuchGate"),
    ("--proxy-mode=iptables", "failed validate"),
])
def test_a_kube_proxy_refusal_after_init_crashes_the_running_service(host, bad, message):
    # initForOS reported Running first (cmd/kube-proxy/app/server.go): Start-Service succeeds and
    # the service stops a moment later with the real error.
    version = VERSIONS[0]
    _start_kube_proxy(host, version, _proxy_args(version) + [bad])
    with host.open():
        svc = host.state["services"]["kube-proxy"]
    assert message in svc["last_error"] and "real kube-proxy.exe under Wine" in svc["last_error"], svc
