"""The simulated reboot and HNS restart (winsim_boot, issue 21 point 1 and 5): what HNS keeps by each network's
flags and type, the Service Control Manager's boot order (dependencies first, delayed services last, a service
whose dependency failed not started and not recovered), processes and pipes gone, files, registry and firewall
kept; the same model behind the win_reboot stand-in and behind core.reboot (no remote operation). No control
plane needed."""

import json
import os
from unittest import mock

import pytest
from simhost import one
from winsim import core

# isort: split
# winsim.core has put the stand-in ansible.windows collection on sys.path.
from ansible_collections.ansible.windows.plugins.module_utils import winsim_hns, winsim_scm

SVCHOST = r"C:\Windows\system32\svchost.exe -k LabTest"
RESTART = winsim_scm.encode_failure_actions(86400, [("restart", 10000)] * 3)


@pytest.fixture
def frozen():
    """The host's clock moves only by what the model advances (the delayed start)."""
    with mock.patch.object(winsim_scm.time, "time", return_value=1.9e9):
        yield


@pytest.fixture
def host(tmp_path, frozen):
    return core.create_host(str(tmp_path), "w")


def _post(state, kind, doc):
    answer = json.loads(winsim_hns.call(state, "POST", "/%s/" % kind, json.dumps(doc)))
    assert answer["Success"], answer
    return answer["Output"]


def _networks(host):
    with host.open(save=False):
        hns = host.state["hns"]
        return ({n["Name"]: n["ID"] for n in hns["networks"]}, {e["Name"]: e["VirtualNetworkName"]
                                                                for e in hns["endpoints"]},
                len(hns["policylists"]), dict(hns["vswitches"]))


def _hns_of_a_node(state):
    """External (the network role's, no flags), flannel's vxlan network (Flags 8) with an endpoint, a host-gw bridge
    with its endpoint, Docker's NAT network, and a policy list."""
    ext = _post(state, "networks", {"Name": "External", "Type": "L2Bridge",
                                    "Subnets": [{"AddressPrefix": "192.168.255.0/30"}]})
    winsim_hns.flannel_network(state, "vxlan", 4096, "10.244.1.0/24")
    winsim_hns.flannel_network(state, "host-gw", None, "10.244.9.0/24")
    _post(state, "endpoints", {"Name": "source-vip", "VirtualNetworkName": "flannel.4096", "IPAddress": "10.244.1.254"})
    ep = _post(state, "endpoints", {"Name": "ext-ep", "VirtualNetwork": ext["ID"], "IPAddress": "192.168.255.2"})
    _post(state, "networks", {"Name": "host", "Type": "NAT"})
    _post(state, "policylists", {"References": ["/endpoints/" + ep["ID"]], "Policies": [{"Type": "ELB"}]})
    winsim_hns.take_blip(state)


def test_flannel_records_the_non_persistent_flag_for_vxlan_only(host):
    with host.open():
        winsim_hns.flannel_network(host.state, "vxlan", 4096, "10.244.1.0/24")
        winsim_hns.flannel_network(host.state, "host-gw", None, "10.244.9.0/24")
        flags = {n["Name"]: n["Flags"] for n in host.state["hns"]["networks"]}
    # flannel v0.26.7 device_windows.go: Flags: hcn.EnableNonPersistent (8); hostgw_windows.go: none
    assert flags == {"flannel.4096": 8, "cbr0": 0}


def test_a_reboot_keeps_networks_by_their_flags_and_drops_nat_and_policy_lists(host):
    core.edit(host.root, host.name, _hns_of_a_node)
    before, _, _, _ = _networks(host)
    gone, failed = core.reboot(host.root, host.name)
    after, endpoints, policylists, vswitches = _networks(host)
    assert sorted(gone) == ["flannel.4096", "host"] and failed == {}
    # kept, with the same ID (so the same object) and their endpoints
    assert after == {"External": before["External"], "cbr0": before["cbr0"]}
    assert endpoints == {"ext-ep": "External", "cbr0_ep": "cbr0"}  # the source VIP went with flannel.4096
    assert policylists == 0
    assert vswitches == {"Ethernet": "vEthernet (Ethernet)"}  # External and cbr0 still hold it


def test_a_vswitch_goes_with_the_last_network_on_its_adapter(host):
    core.edit(host.root, host.name, lambda st: winsim_hns.flannel_network(st, "vxlan", 4096, "10.244.1.0/24"))
    core.reboot(host.root, host.name)
    assert _networks(host) == ({}, {}, 0, {})


def test_an_hns_restart_drops_the_same_objects_and_leaves_the_processes_running(host):
    def setup(st):
        _hns_of_a_node(st)
        st.setdefault("processes", {})["kube-proxy"] = {"program": "kube-proxy", "network_name": "flannel.4096"}
    core.edit(host.root, host.name, setup)
    before, _, _, _ = _networks(host)
    assert sorted(core.hns_service_restart(host.root, host.name)) == ["flannel.4096", "host"]
    after, _, policylists, _ = _networks(host)
    assert after == {"External": before["External"], "cbr0": before["cbr0"]} and policylists == 0
    with host.open(save=False):
        assert "kube-proxy" in host.state["processes"]
        assert host.state["services"]["containerd"]["status"] == "Running"
        assert "boot_log" not in host.state and not host.state["reboots"]


def _services(st):
    """A chain as the collection registers it (late -> a -> containerd), a service whose program is missing and its
    dependent with restart recovery actions, a delayed service, a non-delayed one depending on a delayed one, and a
    demand-start service."""
    winsim_scm.create(st, "a", SVCHOST, dependencies=["containerd"])
    winsim_scm.create(st, "broken", r"C:\k\missing.exe")
    dep = winsim_scm.create(st, "needs-broken", SVCHOST, dependencies=["broken"])
    dep.update(failure_actions=RESTART, failure_actions_on_non_crash=1)
    winsim_scm.create(st, "delayed", SVCHOST)["delayed_autostart"] = 1
    winsim_scm.create(st, "b-delayed-dep", SVCHOST)["delayed_autostart"] = 1
    winsim_scm.create(st, "c-early", SVCHOST, dependencies=["b-delayed-dep"])
    winsim_scm.create(st, "manual", SVCHOST, start=3)
    winsim_scm.create(st, "disabled", SVCHOST, start=4)
    winsim_scm.create(st, "aa-needs-disabled", SVCHOST, dependencies=["disabled"])


def test_the_scm_boots_dependencies_first_and_delayed_services_last(host):
    core.edit(host.root, host.name, _services)
    _, failed = core.reboot(host.root, host.name)
    with host.open(save=False):
        log = host.state["boot_log"]
        status = {k: s["status"] for k, s in host.state["services"].items()}
    order = [e["service"] for e in log]
    assert order.index("containerd") < order.index("a")
    assert order.index("b-delayed-dep") < order.index("c-early")  # a dependency is started early, delayed or not
    assert not next(e for e in log if e["service"] == "b-delayed-dep")["delayed"]
    delayed = [e for e in log if e["delayed"]]
    assert [e["service"] for e in delayed] == ["delayed"] and order[-1] == "delayed"
    assert delayed[0]["at"] - log[0]["at"] >= 120  # after the others plus the delay
    assert "manual" not in order and status["manual"] == "Stopped"
    assert status["delayed"] == status["a"] == status["c-early"] == "Running"
    assert set(failed) == {"broken", "needs-broken", "disabled", "aa-needs-disabled"}
    assert failed["needs-broken"].startswith("1068") and failed["aa-needs-disabled"].startswith("1068")
    assert order.count("broken") == 1  # tried once, not again for its dependent


def test_a_service_whose_dependency_failed_stays_stopped_and_is_not_recovered(host):
    core.edit(host.root, host.name, _services)
    core.reboot(host.root, host.name)
    with host.open():
        svc = host.state["services"]["needs-broken"]
        assert svc["last_error"] == 1068 and "crash" not in svc
        winsim_scm.advance(host, 3600)  # its restart actions (10 s) would have run long ago
        assert winsim_scm.observe(host, svc) == ("Stopped", 0)


def test_a_reboot_ends_processes_and_pipes_and_keeps_files_registry_and_firewall(host):
    def setup(st):
        st.setdefault("processes", {})["flanneld"] = {"wrapper": "nssm", "application": r"C:\k\flanneld.exe",
                                                      "state": "running"}
        st["pipes"].append(r"\\.\pipe\someone-else")
        st["registry"]["HKLM:\\SOFTWARE\\LabTest"] = {"Value": "kept"}
        st["firewall"]["rules"].append({"name": "kubewin-kubelet-10250-tcp", "enabled": True})
        st["env"]["LABTEST"] = "1"
    core.edit(host.root, host.name, setup)
    local = host.local_path("C:\\k\\kubelet.conf")
    os.makedirs(os.path.dirname(local), exist_ok=True)
    with open(local, "w") as f:
        f.write("kept")
    before = core.dump(host.root, host.name)
    core.reboot(host.root, host.name)
    after = core.dump(host.root, host.name)
    for part in ("files", "registry", "firewall", "env", "acls", "sddl"):
        assert after[part] == before[part], part
    assert after["processes"] == {}
    # only the pipe of the runtime the boot started again is back
    assert after["pipes"] == [r"\\.\pipe\containerd-containerd"]
    with host.open(save=False):
        assert host.state["env_boot"]["LABTEST"] == "1" and host.state["reboots"] == 1


def test_core_reboot_is_no_remote_operation(host):
    core.reboot(host.root, host.name)
    assert core.ops(host.root, host.name) == []


def test_the_win_reboot_stand_in_uses_the_same_model(lab):
    """One remote operation; External keeps its ID, flannel's vxlan network is gone (the old stand-in wiped both)."""
    core.edit(lab.root, "win-1", _hns_of_a_node)
    before, _, _, _ = _networks(core.Host(lab.root, "win-1"))
    lab.reset_ops()
    rc, _, res = lab.play("""
        - name: reboot
          ansible.windows.win_reboot:
    """)
    assert rc == 0 and one(res, "reboot")["rebooted"], res
    after, _, _, _ = _networks(core.Host(lab.root, "win-1"))
    assert after == {"External": before["External"], "cbr0": before["cbr0"]}
    assert lab.ops() == ["winsim_reboot"]
    with core.Host(lab.root, "win-1").open(save=False) as h:
        assert [e["service"] for e in h.state["boot_log"]]


def test_the_kubelet_renews_its_client_certificate_at_client_gos_jittered_deadline():
    """client-go util/certificate/certificate_manager.go: nextRotationDeadline = notBefore + jitteryDuration(total),
    jitteryDuration = wait.Jitter(total, 0.2) - 0.3 * total, so 70 % to 90 % of the certificate's life."""
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_kube
    assert winsim_kube.rotation_deadline(1000, 2000, 0.0) == pytest.approx(1700)
    assert winsim_kube.rotation_deadline(1000, 2000, 1.0) == pytest.approx(1900)
    assert all(1700 <= winsim_kube.rotation_deadline(1000, 2000) <= 1900 for dummy in range(50))


def _kubelet_certificate(host, not_before, not_after):
    """kubelet.conf naming kubelet-client-current.pem, which holds a certificate valid from ``not_before`` to
    ``not_after`` (epoch seconds) and its key, as the TLS bootstrap leaves them."""
    import datetime

    from ansible_collections.ansible.windows.plugins.module_utils import winsim_kube
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "system:node:w")])
    when = [datetime.datetime.fromtimestamp(t, datetime.timezone.utc) for t in (not_before, not_after)]
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(7).not_valid_before(when[0]).not_valid_after(when[1]).sign(key, hashes.SHA256()))
    current = winsim_kube.KUBELET_DIR + "\\pki\\kubelet-client-current.pem"
    winsim_kube._write(host, current, cert.public_bytes(serialization.Encoding.PEM) + key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()))
    winsim_kube._write(host, winsim_kube.ETC + "\\kubelet.conf", winsim_kube._kubeconfig(
        "https://192.0.2.1:6443", b"CA", {"client-certificate": current, "client-key": current}))


@pytest.mark.parametrize("offset, rotate, outcome", [
    (0, True, None),  # before 70 % of its life: kept, no CSR
    (0.95, False, None),  # past 90 %, without rotateCertificates (the kubelet's default): kept
    (0.95, True, "renewed"),  # past 90 %: a CSR with the certificate it has (stubbed here; the lab test sends it)
    (1.01, True, "exits"),  # expired: the bootstrap kubeconfig it would fall back to is gone, the kubelet exits
])
def test_the_kubelet_at_start_keeps_renews_or_cannot_use_its_client_certificate(host, offset, rotate, outcome):
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_binaries, winsim_kube
    life = 365 * 86400.0
    now = winsim_scm.time.time()
    with host.open():
        _kubelet_certificate(host, now - 1000, now - 1000 + life)
        host.state["clock_offset"] = offset * life
        sent = []
        with mock.patch.object(winsim_kube, "_client_certificate_csr",
                               side_effect=lambda h, api, node, cert_dir, what: sent.append((node, what, api.cert))):
            args = (host, winsim_kube.ETC + "\\kubelet.conf", winsim_kube.KUBELET_DIR + "\\pki", "w",
                    {}, {"rotateCertificates": rotate})
            if outcome == "exits":
                with pytest.raises(winsim_binaries.ExitsAfterRunning, match="unable to load bootstrap kubeconfig.*"
                                   "expired"):
                    winsim_kube._client_certificate_rotation(*args)
            else:
                winsim_kube._client_certificate_rotation(*args)
    assert [(n, w) for n, w, dummy in sent] == ([("w", "kubelet client certificate rotation")]
                                                if outcome == "renewed" else [])
    assert all(cert for dummy, dummy2, cert in sent)  # sent with the client certificate, not a token
