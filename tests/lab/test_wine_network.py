"""flanneld and kube-proxy on a simulated Windows node, judged by their real Windows binaries under Wine
(lab/README.md, "Wine"): the real flanneld.exe of each flannel version the lab's mirror serves takes
the command line, environment and files the collection generates up to its first API call; kube-proxy's
overlay start-up checks (pkg/proxy/winkernel/proxier.go newProxierInternal) as the simulated service runs
them once its HNS network exists. The kube-proxy tests need the lab's API server (make lab-up)."""

import json
import os

import pytest
import scenario
import yaml
from winsim import core  # noqa: I001  (puts the simulator's collections on sys.path, so it comes first)

# isort: split
from ansible_collections.ansible.windows.plugins.module_utils import winsim_binaries, winsim_node, winsim_wine
from mirror import layout
from winsim.ps.winhost import run_kubewin_script as run_ps

from ansible_collections.kubewin.nodes.plugins.module_utils import _windows_paths as windows_paths
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import network as node_network
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import service as win_service

LAB = scenario.LAB
CACHE = os.path.join(LAB, "_cache")
FLANNEL_VERSIONS = list(layout.DEFAULT_FLANNEL_VERSIONS)
KUBE_VERSION = open(os.path.join(LAB, "controlplane", "VERSION")).read().strip()
FLANNEL_DIR = windows_paths.FLANNEL_DIR
NODE_IP = "10.0.0.10"  # the simulated host's adapter (winsim_host.initial_state)


def _need(version):
    if not winsim_wine.binary(CACHE, version, "flanneld"):
        pytest.fail("no Windows flanneld.exe %s or Wine prefix in %s: run lab/bin/lab-build" % (version, CACHE))


@pytest.fixture
def host(tmp_path):
    with open(os.path.join(str(tmp_path), "winsim.json"), "w") as f:
        json.dump({"lab_cache": CACHE}, f)
    return core.create_host(str(tmp_path), "win-1")


def _put(host, win_path, data):
    local = host.local_path(win_path)
    os.makedirs(os.path.dirname(local), exist_ok=True)
    with open(local, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


KUBELET_PEM = "C:\\var\\lib\\kubelet\\pki\\kubelet-client-current.pem"


def _client_pem():
    """A client certificate and key in one PEM file, as the kubelet's TLS bootstrap writes kubelet-client-current.pem
    (Ed25519, fixed dates: the same bytes every run, so Wine's memoised answers stay valid)."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519
    from cryptography.x509.oid import NameOID

    key = ed25519.Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
    name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "system:nodes"),
                      x509.NameAttribute(NameOID.COMMON_NAME, "system:node:win-1")])
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(datetime.datetime(2026, 1, 1))
            .not_valid_after(datetime.datetime(2027, 1, 1)).sign(key, None))
    return cert.public_bytes(serialization.Encoding.PEM) + key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


def _flannel_files(host, backend="vxlan"):
    """What flanneld reads: net-conf.json (network role) and the kubelet's kubeconfig as kubeadm join's TLS bootstrap
    leaves it (client-certificate and client-key: the rotated kubelet-client-current.pem)."""
    _put(host, FLANNEL_DIR + "\\net-conf.json", node_network.net_conf("10.244.0.0/16", backend))
    _put(host, node_network.FLANNELD_KUBECONFIG, yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "default-context",
        "clusters": [{"name": "default-cluster", "cluster": {"server": "https://10.0.0.1:6443"}}],
        "contexts": [{"name": "default-context", "context": {"cluster": "default-cluster", "user": "default-auth"}}],
        "users": [{"name": "default-auth", "user": {"client-certificate": KUBELET_PEM, "client-key": KUBELET_PEM}}]}))
    _put(host, KUBELET_PEM, _client_pem())


def _env(**extra):
    return {k.upper(): (k, v) for k, v in dict({"NODE_NAME": "win-1"}, **extra).items()}


@pytest.mark.parametrize("backend", ["vxlan", "host-gw"])
@pytest.mark.parametrize("version", FLANNEL_VERSIONS)
def test_the_real_flanneld_accepts_the_generated_command_line(host, version, backend):
    _need(version)
    _flannel_files(host, backend)
    spec, defaults = winsim_node._flanneld_real_check(host, version, node_network.flanneld_args(NODE_IP),
                                                      _env(), "C:\\k")
    # the flags the simulation reads are the real program's, with their real defaults
    assert spec["kube-subnet-mgr"] == "bool" and spec["iface"] == "slice"
    assert defaults["kube-annotation-prefix"] == "flannel.alpha.coreos.com"


@pytest.mark.parametrize("version", FLANNEL_VERSIONS)
def test_flanneld_refuses_an_unknown_flag_and_exits_0(host, version):
    _need(version)
    # Go's flag package prints the error and flannel's usage function exits 0 (main.go usage)
    _flannel_files(host)
    with pytest.raises(winsim_binaries.ProcessExit) as e:
        winsim_node._flanneld_real_check(host, version, node_network.flanneld_args(NODE_IP) + ["--no-such-flag"],
                                         _env(), "C:\\k")
    assert "real flanneld.exe under Wine: flag provided but not defined: -no-such-flag" in str(e.value)
    assert e.value.code == 0


@pytest.mark.parametrize("missing, message", [
    ("NODE_NAME", "Failed to create SubnetManager: env variables POD_NAME and POD_NAMESPACE must be set"),
    # client-go clientcmd validateAuthInfo: the kubelet's certificate file must be readable
    ("kubelet-client-current.pem", "Failed to create SubnetManager: fail to create kubernetes config: invalid "
                                   "configuration: [unable to read client-cert C:\\var\\lib\\kubelet\\pki\\"
                                   "kubelet-client-current.pem for default-auth due to open C:\\var\\lib\\kubelet\\"
                                   "pki\\kubelet-client-current.pem"),
    # (up to the path: Wine gets only the files flanneld names, so it finds no directory either and says "path")
    ("net-conf.json", "Failed to create SubnetManager: failed to read net conf: open "
                      "C:\\etc\\kube-flannel\\net-conf.json: The system cannot find the "),
])
def test_flanneld_stops_on_what_it_reads_before_the_api(host, missing, message):
    _need(FLANNEL_VERSIONS[0])
    _flannel_files(host)
    env = _env()
    if missing == "NODE_NAME":
        env = {}
    else:
        os.remove(host.local_path(KUBELET_PEM if missing.endswith(".pem") else FLANNEL_DIR + "\\" + missing))
    with pytest.raises(winsim_binaries.ProcessExit) as e:
        winsim_node._flanneld_real_check(host, FLANNEL_VERSIONS[0], node_network.flanneld_args(NODE_IP), env, "C:\\k")
    assert message in str(e.value) and e.value.code == 1


def test_a_flanneld_the_real_binary_refuses_pauses_its_nssm_service(host):
    """Through the SCM and NSSM as the network role installs it: NSSM reports Running, flanneld exits
    with the real error (a net-conf.json flannel cannot parse), the service shows Paused and the log
    holds the error."""
    _need(FLANNEL_VERSIONS[0])
    _flannel_files(host)
    _put(host, FLANNEL_DIR + "\\net-conf.json", '{"Network": "10.244.0.0/33"}')
    core.write_binary(host.local_path("C:\\k\\flanneld.exe"), "flanneld", FLANNEL_VERSIONS[0])
    core.write_binary(host.local_path("C:\\k\\nssm.exe"), "nssm", "2.24")
    os.makedirs(host.local_path("C:\\var\\log\\kubelet"), exist_ok=True)
    params = {"Application": "C:\\k\\flanneld.exe", "AppDirectory": "C:\\k",
              "AppParameters": " ".join(node_network.flanneld_args(NODE_IP)),
              "AppEnvironmentExtra": ["NODE_NAME=win-1"], "AppStderr": "C:\\var\\log\\kubelet\\flanneld.log"}
    with host.open():
        run_ps(host, "service_apply", {"Name": "flanneld", "Action": "create", "Run": "start",
                                       "CommandLine": "C:\\k\\nssm.exe", "Parameters": params,
                                       "ParameterTypes": win_service.parameter_types(params)}, False)
        error = host.state["services"]["flanneld"]["last_error"]
    assert "error parsing subnet config: invalid CIDR address: 10.244.0.0/33" in error, error
    with open(host.local_path("C:\\var\\log\\kubelet\\flanneld.log")) as f:
        assert "invalid CIDR address: 10.244.0.0/33" in f.read()


# --- kube-proxy on overlay ----------------------------------------------------------------------
@pytest.fixture
def node(api, host):
    """A Node win-1 with the host's address, and an admin kubeconfig where kube-proxy reads one: the kubelet's."""
    import scenario
    from kubernetes import client

    core_v1, _ = api
    name = "wine-net-%d" % os.getpid()
    body = client.V1Node(metadata=client.V1ObjectMeta(name=name, labels={"kubernetes.io/os": "windows"}))
    core_v1.create_node(body)
    core_v1.patch_node_status(name, {"status": {"addresses": [{"type": "InternalIP", "address": NODE_IP}]}})
    with open(scenario.ADMIN_CONF, "rb") as f:
        _put(host, windows_paths.KUBELET_CONF, f.read())
    yield name
    core_v1.delete_node(name)


def _start_kube_proxy(host, args, network=True):
    core.write_binary(host.local_path("C:\\k\\kube-proxy.exe"), "kube-proxy", KUBE_VERSION)
    if network:
        core.flannel(host.root, host.name, backend="vxlan", pod_subnet="10.244.3.0/24")
    with host.open():
        run_ps(host, "service_apply", {"Name": "kube-proxy", "Action": "create", "Run": "start",
                                       "FailureActions": "restart/10000",
                                       "CommandLine": "C:\\k\\kube-proxy.exe " + " ".join(args)}, False)
        return host.state["services"]["kube-proxy"], (host.state.get("processes") or {}).get("kube-proxy")


def _proxy_args(node_name, pod_cidr="10.244.3.0/24"):
    """kube-proxy's arguments as win_host_service's kube_proxy makes them (kube_proxy_argv, after the program)."""
    argv = node_network.kube_proxy_argv(node_name, "10.244.0.0/16", "vxlan", 4096, pod_cidr=pod_cidr,
                                        kube_version=KUBE_VERSION)
    return argv[argv.index(node_network.KUBE_PROXY_EXE) + 1:]


def test_kube_proxy_on_overlay_finds_the_host_mac_of_the_node_ip(host, node):
    svc, proc = _start_kube_proxy(host, _proxy_args(node))
    assert svc["status"] == "Running" and not svc.get("crash"), svc.get("last_error")
    assert proc["node_ip"] == NODE_IP and "sync_error" not in proc


def test_kube_proxy_on_overlay_without_source_vip_stops(host, node):
    args = [a for a in _proxy_args(node) if not a.startswith("--source-vip")]
    svc, proc = _start_kube_proxy(host, args)
    assert svc["crash"] and "source-vip flag not set" in svc["last_error"] and proc is None


def test_kube_proxy_on_overlay_without_a_host_mac_for_the_node_ip_stops(host, node, api):
    api[0].patch_node_status(node, {"status": {"addresses": [{"type": "InternalIP", "address": "10.9.9.9"}]}})
    svc, _ = _start_kube_proxy(host, _proxy_args(node))
    assert svc["crash"] and "could not find host mac address for 10.9.9.9" in svc["last_error"]


def test_kube_proxy_with_no_node_takes_loopback_which_has_no_mac(host, node):
    svc, _ = _start_kube_proxy(host, _proxy_args(node + "-missing"))
    assert "could not find host mac address for 127.0.0.1" in svc["last_error"]


def test_a_source_vip_outside_the_pod_subnet_programs_no_service(host, node):
    args = _proxy_args(node, pod_cidr="10.244.7.0/24")  # the network flannel made is 10.244.3.0/24
    svc, proc = _start_kube_proxy(host, args)
    assert svc["status"] == "Running"
    assert "Source Vip endpoint creation failed" in proc["sync_error"] and "10.244.7.254" in proc["sync_error"]


def test_the_overlay_checks_run_when_flannel_creates_the_network_later(host, node):
    # kube-proxy waits for its network (getNetworkInfo); once flanneld made it, it checks and stops
    args = [a for a in _proxy_args(node) if not a.startswith("--source-vip")]
    svc, proc = _start_kube_proxy(host, args, network=False)
    assert svc["status"] == "Running" and proc is not None and not proc.get("network_checked")
    core.flannel(host.root, host.name, backend="vxlan", pod_subnet="10.244.3.0/24")
    with host.open():
        svc = host.state["services"]["kube-proxy"]
        assert svc["crash"] and "source-vip flag not set" in svc["last_error"]
        assert "kube-proxy" not in (host.state.get("processes") or {})


def test_a_locked_win_overlay_gate_set_false_stops_kube_proxy(host, node):
    # WinOverlay is GA and locked from 1.34 (pkg/features/kube_features.go): the real kube-proxy.exe refuses
    svc, _ = _start_kube_proxy(host, _proxy_args(node) + ["--feature-gates=WinOverlay=false"])
    assert "real kube-proxy.exe under Wine" in svc["last_error"]
    assert "cannot set feature gate WinOverlay to false, feature is locked to true" in svc["last_error"]
