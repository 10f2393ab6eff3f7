"""End to end: the scale_up and reset playbooks against the real lab control plane and simulated
Windows hosts (see lab/README.md for what is real and what is simulated)."""

import ipaddress
import json
import os

import pytest
import scenario
from kubernetes.client.exceptions import ApiException

from ansible_collections.kubewin.nodes.plugins.plugin_utils._host.service import split_windows_command_line

# A fresh scale-up was 15 before the start-up watch of each started service, the machine Path for kubeadm and
# the JoinConfiguration file (written, then removed) were added: 22 measured. The External network that binds
# the vSwitch before flanneld (HNS read, create, then the wait for the host to answer again) adds 3, and its
# HNS read 1 to a re-run: a little room, no more. The inbound firewall rules (kubelet's TCP 10250 in the node role,
# flannel's vxlan UDP port in the network role) add 1 each to both, as win_firewall_rule always runs: 29 and 11
# measured. Issue 22: each start and its watch are one operation (-2 fresh), and the Path and firewall tasks are
# skipped when the facts read shows them as wanted (-3 re-run): 27 and 8 measured. Issue 21: kube-proxy runs with the
# kubelet's kubeconfig, so no credential-file read (-1 both) and no token write (-1 fresh): 25 and 7, the budgets.
BUDGET_FRESH, BUDGET_RERUN = 25, 7
# Control-plane module calls of this two-node run (Python starts on kube_control_plane, counted by the lab's
# counted_local connection): a ratchet at the value measured on 2026-11-27, lowered as issue 22 lands; the issue's
# targets are fresh <= 4 and no-op <= 2 for any number of nodes.
BUDGET_CP_FRESH, BUDGET_CP_RERUN = 6, 3


def node_ready(core, name):
    node = core.read_node(name)
    return any(c.type == "Ready" and c.status == "True" for c in node.status.conditions or [])


def node_gone(core, name):
    with pytest.raises(ApiException) as err:
        core.read_node(name)
    return err.value.status == 404


def transport_keys(sc, host):
    """The machine key containers of the simulated host (lab/winsim/ps/wincrypto.py), by name."""
    h = scenario.core.Host(sc.root, host)
    with h.open(save=False):
        return sorted((h.state.get("machine_keys") or {}).keys())


def ops_count(sc, host):
    return len(sc.ops(host))


@pytest.fixture(scope="module")
def unpinned_daemonset(api):
    """A Linux DaemonSet with no OS selector, as older add-ons have: scale-up must pin it."""
    core, apps = api
    body = {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "legacy-agent", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "legacy-agent"}},
                     "template": {"metadata": {"labels": {"app": "legacy-agent"}},
                                  "spec": {"containers": [{"name": "a", "image": "registry.k8s.io/pause:3.10"}]}}}}
    try:
        apps.delete_namespaced_daemon_set("legacy-agent", "default")
    except Exception:  # not there yet
        pass
    apps.create_namespaced_daemon_set("default", body)
    yield "default/legacy-agent"
    apps.delete_namespaced_daemon_set("legacy-agent", "default")


@pytest.fixture(scope="module")
def vxlan(tmp_path_factory, api, unpinned_daemonset):
    """Two nodes scaled up once (services mode, containerd, flannel vxlan), shared by the tests below."""
    # kube_version as kubespray (since v2.28) writes it, without the v, on win-1; none at all on win-2 (kubespray's
    # sample sets none): both install the API server's release (test_both_nodes_...; issue 22 T5)
    sc = scenario.Scenario(tmp_path_factory.mktemp("vxlan"), nodes=2, kubewin_node_name="vx-{{ inventory_hostname }}",
                           kube_version=None, host_vars={"win-1": {"kube_version": scenario.lab_version().lstrip("v")}},
                           kubewin_pin_daemonsets=["kube-system/kube-proxy", "kube-flannel/kube-flannel-ds",
                                                   unpinned_daemonset],
                           kubewin_node_taints=[{"key": "os", "value": "windows", "effect": "NoSchedule"}],
                           # the simulated hosts' network (winsim_host: 10.0.0.x/24) and a control-plane address,
                           # spelt as users may (a mask, /32): the re-run must still skip the rules (review-s5 F1')
                           kubewin_firewall_remote_addresses=["10.0.0.0/255.255.255.0", "192.0.2.10/32"])
    before = {h: sc.dump(h) for h in sc.hosts}
    rc, doc, text = sc.run("scale_up.yml")
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    sc.before_scale_up = before
    sc.fresh_ops = {h: ops_count(sc, h) for h in sc.hosts}
    sc.fresh_cp = [m for _, m in sc.control_plane_ops()]
    return sc


def test_both_nodes_are_ready_windows_nodes_in_the_real_api(vxlan, api):
    core, apps = api
    for host in vxlan.hosts:
        name = "vx-" + host
        assert node_ready(core, name), "%s is not Ready" % name
        node = core.read_node(name)
        assert node.metadata.labels["kubernetes.io/os"] == "windows"
        assert node.metadata.labels["node.kubernetes.io/windows-build"].startswith("10.0.")
        assert [(t.key, t.effect) for t in node.spec.taints or []] == [("os", "NoSchedule")]
        # kube_version 1.x.y (win-1) or unset (win-2): the API server's release
        assert node.status.node_info.kubelet_version == scenario.lab_version()


def test_linux_daemonsets_are_pinned(vxlan, api):
    core, apps = api
    ds = apps.read_namespaced_daemon_set("legacy-agent", "default")
    assert ds.spec.template.spec.node_selector == {"kubernetes.io/os": "linux"}


def test_services_run_natively_with_recovery(vxlan):
    dump = vxlan.dump("win-1")
    services = dump["services"]
    assert services["kubelet"]["status"] == "Running"
    assert "--windows-service" in services["kubelet"]["image_path"]
    assert services["kube-proxy"]["status"] == "Running" and services["flanneld"]["status"] == "Running"
    assert [d.lower() for d in services["kube-proxy"]["dependencies"]] == ["flanneld"]


def test_kubelet_and_kube_proxy_log_to_files_through_kube_log_runner(vxlan):
    """Neither has --log-file (v1.37); a service's output goes nowhere unless something writes it."""
    from winsim import core as winsim_core
    services = vxlan.dump("win-1")["services"]
    for name in ("kubelet", "kube-proxy"):
        argv = split_windows_command_line(services[name]["image_path"])
        assert argv[:2] == ["C:\\k\\kube-log-runner.exe", "-log-file=C:\\var\\log\\kubelet\\%s.log" % name], argv
        assert "C:\\k\\%s.exe" % name in argv and "--windows-service" in argv
        host = winsim_core.Host(vxlan.root, "win-1")
        assert os.path.isfile(host.local_path("C:\\var\\log\\kubelet\\%s.log" % name))


def test_the_kubelet_finds_the_cluster_ca_where_the_clusters_kubelet_config_puts_it(vxlan, api):
    """kubelet-config's clientCAFile is <certificatesDir>/ca.crt (the lab's certificatesDir is not kubeadm's
    default, as kubespray's /etc/kubernetes/ssl is not); kubeadm join writes the CA only to its caCertPath."""
    import yaml
    from winsim import core as winsim_core
    core, _ = api
    client_ca = yaml.safe_load(core.read_namespaced_config_map("kubelet-config", "kube-system").data["kubelet"])[
        "authentication"]["x509"]["clientCAFile"]
    assert not client_ca.startswith("/etc/kubernetes/pki/"), client_ca
    for h in vxlan.hosts:
        host = winsim_core.Host(vxlan.root, h)
        with open(host.local_path("C:\\var\\lib\\kubelet\\config.yaml")) as f:
            on_node = yaml.safe_load(f)["authentication"]["x509"]["clientCAFile"]
        assert on_node == "C:" + client_ca.replace("/", "\\")
        assert os.path.isfile(host.local_path(on_node)), "%s: no CA at %s" % (h, on_node)


def test_kube_proxy_flags_follow_the_version_and_its_source_vip_is_reserved(vxlan, api):
    core, _ = api
    from winsim import core as winsim_core
    argv = split_windows_command_line(vxlan.dump("win-1")["services"]["kube-proxy"]["image_path"])
    # WinOverlay is GA and locked in the lab's version: passing it would only break on its removal
    assert not [a for a in argv if a.startswith("--feature-gates")], argv
    pod_cidr = core.read_node("vx-win-1").spec.pod_cidr
    vip = str(ipaddress.ip_network(pod_cidr).broadcast_address - 1)
    assert "--source-vip=%s" % vip in argv
    # host-local's store holds the address for kube-proxy, so no pod is ever given it
    host = winsim_core.Host(vxlan.root, "win-1")
    with open(host.local_path("C:\\var\\lib\\cni\\networks\\flannel.4096\\" + vip), "rb") as f:
        assert f.read() == b"kubewin-kube-proxy-source-vip\r\nsource-vip"


def _cni_problems(sc, host):
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_containerd
    from winsim import core
    with core.Host(sc.root, host).open(save=False) as h:
        return winsim_containerd.cni_problems(h)


def test_cni_config_is_where_containerd_reads_it_and_names_plugins_it_has(vxlan):
    for host in vxlan.hosts:
        assert _cni_problems(vxlan, host) == [], host


def _inbound_allowed(sc, host, proto, port, remote="10.0.0.99"):
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_firewall
    from winsim import core
    with core.Host(sc.root, host).open(save=False) as h:
        return winsim_firewall.inbound_allowed(h.state, proto, port, remote=remote)


def test_the_firewall_lets_the_api_server_reach_the_kubelet_and_other_nodes_send_vxlan(vxlan, api):
    """Windows Server blocks inbound traffic no rule allows: kubectl logs/exec need TCP 10250, the overlay
    flannel's UDP port (the cluster's, from kube-flannel-cfg)."""
    core, _ = api
    net_conf = json.loads(core.read_namespaced_config_map("kube-flannel-cfg", "kube-flannel").data["net-conf.json"])
    port = net_conf["Backend"]["Port"]
    for host in vxlan.hosts:
        assert _inbound_allowed(vxlan, host, "tcp", 10250), host
        assert _inbound_allowed(vxlan, host, "udp", port), host
        assert not _inbound_allowed(vxlan, host, "tcp", port), host  # only what the node needs
        # only from kubewin_firewall_remote_addresses (security-2 N10)
        assert _inbound_allowed(vxlan, host, "tcp", 10250, remote="192.0.2.10"), host
        assert not _inbound_allowed(vxlan, host, "tcp", 10250, remote="192.0.2.11"), host
        assert not _inbound_allowed(vxlan, host, "udp", port, remote="172.16.0.1"), host


def test_a_pod_running_as_container_user_can_use_its_volumes(vxlan):
    """Issue 20 N1: on the node the role made, what the kubelet (SYSTEM, no security descriptor of its own) puts in
    a pod's volumes is readable by ContainerUser (a member of Users, not Administrators) and its emptyDir writable,
    checked against the effective host DACL (winsim_files.container_user_token: containerd#6183,
    windows-testing#35); the kubelet's keys are not. The pod's directory is removed again afterwards."""
    import shutil

    from ansible_collections.ansible.windows.plugins.module_utils import winsim_files
    from winsim import core as winsim_core
    with winsim_core.Host(vxlan.root, "win-1").open(save=False) as h:
        pod = "C:\\var\\lib\\kubelet\\pods\\issue20-pod"
        token = pod + "\\volumes\\kubernetes.io~projected\\kube-api-access\\token"
        empty_dir = pod + "\\volumes\\kubernetes.io~empty-dir\\cache"
        os.makedirs(os.path.dirname(h.local_path(token)))
        os.makedirs(h.local_path(empty_dir))
        try:
            with open(h.local_path(token), "w") as f:
                f.write("jwt")
            assert winsim_files.container_can_read(h, token)
            winsim_files.container_writes(h, empty_dir, "data.bin")
            assert not winsim_files.container_can_read(h, "C:\\var\\lib\\kubelet\\config.yaml")
        finally:
            shutil.rmtree(h.local_path(pod))


def test_fresh_scale_up_stays_within_the_remote_operation_budget(vxlan):
    for host, count in vxlan.fresh_ops.items():
        assert count <= BUDGET_FRESH, "%s took %d remote operations" % (host, count)
    assert len(vxlan.fresh_cp) <= BUDGET_CP_FRESH, "%d control-plane module calls: %s" % (
        len(vxlan.fresh_cp), vxlan.fresh_cp)


def test_rerun_changes_nothing(vxlan):
    for h in vxlan.hosts:
        vxlan.reset_ops(h)
    vxlan.reset_control_plane_ops()
    rc, doc, text = vxlan.run("scale_up.yml")
    assert rc == 0, "\n".join(scenario.failures(doc))
    assert scenario.changed_tasks(doc) == {}
    assert all(s["changed"] == 0 for s in doc["stats"].values()), doc["stats"]
    for h in vxlan.hosts:
        assert ops_count(vxlan, h) <= BUDGET_RERUN, vxlan.ops(h)
    cp = [m for _, m in vxlan.control_plane_ops()]
    assert len(cp) <= BUDGET_CP_RERUN, "%d control-plane module calls: %s" % (len(cp), cp)


def test_reset_leaves_the_hosts_as_before_and_scale_up_works_again(vxlan, api):
    core, _ = api
    rc, doc, text = vxlan.run("reset.yml", "-e", "skip_confirmation=true")
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    # the kubelet was stopped before kubeadm reset, so kubeadm's own stop (a plain ControlService(STOP), refused
    # while a dependent such as flanneld runs, and then only a warning) found nothing to do and warned nothing
    stop = [t["hosts"] for p in doc["plays"] for t in p["tasks"] if "Stop the kubelet and wait" in t["task"]["name"]]
    assert stop and all(r.get("changed") for hosts in stop for r in hosts.values()), stop
    leave = [t["hosts"] for p in doc["plays"] for t in p["tasks"] if "Leave the cluster" in t["task"]["name"]]
    assert leave and all("[reset] Stopping the kubelet service" in r["stdout"] and "could not be stopped" not in
                         r["stderr"] for hosts in leave for r in hosts.values()), leave
    # the real kubeadm.exe under Wine did the rest (lab/README.md, "The real kubeadm.exe"): its own words
    assert all("The reset process does not perform cleanup of CNI plugin configuration" in r["stdout"]
               for hosts in leave for r in hosts.values()), leave
    for h in vxlan.hosts:
        # no transport key secrets were sealed to (the dump leaves the key store out: a --check run makes it)
        assert transport_keys(vxlan, h) == [], "reset left the transport key on %s" % h
        assert vxlan.dump(h) == vxlan.before_scale_up[h], "reset left something behind on %s" % h
        assert node_gone(core, "vx-" + h)
    rc, doc, text = vxlan.run("reset.yml", "-e", "skip_confirmation=true")
    assert rc == 0, "reset is not safe to run twice: %s" % scenario.failures(doc)
    # the second reset's facts read made the key again, and its win_host_files deleted it, reporting no change
    assert all(transport_keys(vxlan, h) == [] for h in vxlan.hosts), [transport_keys(vxlan, h) for h in vxlan.hosts]
    changed = scenario.changed_tasks(doc)
    assert not any("transport key" in n for names in changed.values() for n in names), changed
    rc, doc, text = vxlan.run("scale_up.yml")
    assert rc == 0, "\n".join(scenario.failures(doc))
    assert all(node_ready(core, "vx-" + h) for h in vxlan.hosts)


def test_check_mode_on_fresh_nodes_changes_nothing(tmp_path, api):
    core, _ = api
    sc = scenario.Scenario(tmp_path, nodes=1, kubewin_node_name="chk-{{ inventory_hostname }}")
    before = sc.dump("win-1")
    token_type = "type=bootstrap.kubernetes.io/token"
    tokens_before = len(core.list_namespaced_secret("kube-system", field_selector=token_type).items)
    rc, doc, text = sc.run("scale_up.yml", "--check", "--diff")
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    assert sc.dump("win-1") == before
    assert len(core.list_namespaced_secret("kube-system", field_selector=token_type).items) == tokens_before
    assert node_gone(core, "chk-win-1")
    diffs = [r.get("diff") for p in doc["plays"] for t in p["tasks"] for r in t["hosts"].values() if r.get("diff")]
    assert any("C:\\k\\kubelet.exe" in (d.get("after") or {}) for d in diffs), "--diff showed no file changes"
