"""End to end: the scale_up and reset playbooks against the real lab control plane and simulated
Windows hosts (see lab/README.md for what is real and what is simulated)."""

import datetime
import ipaddress
import json
import os

import pytest
import scenario
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from ansible_collections.kubewin.nodes.plugins.plugin_utils._host.service import split_windows_command_line

# A fresh scale-up was 15 before the start-up watch of each started service, the machine Path for kubeadm and
# the JoinConfiguration file (written, then removed) were added: 22 measured. The External network that binds
# the vSwitch before flanneld (HNS read, create, then the wait for the host to answer again) adds 3, and its
# HNS read 1 to a re-run: a little room, no more. The inbound firewall rules (kubelet's TCP 10250 in the node role,
# flannel's vxlan UDP port in the network role) add 1 each to both, as win_firewall_rule always runs: 29 and 11
# measured. Issue 22: each start and its watch are one operation (-2 fresh), and the Path and firewall tasks are
# skipped when the facts read shows them as wanted (-3 re-run): 27 and 8 measured. Issue 21: kube-proxy runs with the
# kubelet's kubeconfig, so no credential-file read (-1 both) and no token write (-1 fresh): 25 and 7. Issue 22: the
# first look of the kubelet, flanneld and kube-proxy tasks at their service is preflight's facts read (-3 both), and
# the JoinConfiguration's removal is one node_sync without a read (-1 fresh): 20 and 4 measured, the re-run at issue
# 22's target of 4.
BUDGET_FRESH, BUDGET_RERUN = 20, 4
# Control-plane module calls of this two-node run (Python starts on kube_control_plane, counted by the lab's
# counted_local connection): a ratchet at the value measured on 2026-11-27, lowered as issue 22 lands; the issue's
# targets are fresh <= 4 and no-op <= 2 for any number of nodes. The re-run's 2 (2026-11-28): k8s_node_credentials
# is skipped for nodes k8s_join_info found with their RBAC in place.
BUDGET_CP_FRESH, BUDGET_CP_RERUN = 6, 2


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


def test_each_service_logs_to_a_file_through_kube_log_runner(vxlan):
    """Neither has --log-file (v1.37); a service's output goes nowhere unless something writes it. Each file is
    C:\\var\\log\\<service>\\<service>.log, where the kubelet's node log query looks (below), rotated by size."""
    from winsim import core as winsim_core
    services = vxlan.dump("win-1")["services"]
    for name in ("kubelet", "kube-proxy"):
        argv = split_windows_command_line(services[name]["image_path"])
        log = "C:\\var\\log\\%s\\%s.log" % (name, name)
        assert argv[:4] == ["C:\\k\\kube-log-runner.exe", "-log-file=" + log, "-log-file-size=100Mi",
                            "-log-file-age=168h"], argv
        assert "C:\\k\\%s.exe" % name in argv and "--windows-service" in argv
        host = winsim_core.Host(vxlan.root, "win-1")
        assert os.path.isfile(host.local_path(log))
    # flanneld: NSSM runs kube-log-runner, which runs flanneld (NSSM never deletes the files it rotates)
    params = services["flanneld"]["parameters"]
    app = split_windows_command_line("x " + params["AppParameters"])[1:]
    assert params["Application"] == "C:\\k\\kube-log-runner.exe"
    assert app[:4] == ["-log-file=C:\\var\\log\\flanneld\\flanneld.log", "-log-file-size=100Mi", "-log-file-age=168h",
                       "C:\\k\\flanneld.exe"], app
    assert params["AppStderr"] == "C:\\var\\log\\flanneld\\kube-log-runner.log"


def test_the_node_log_query_returns_each_services_log(vxlan):
    """kubectl get --raw "/api/v1/nodes/<node>/proxy/logs/?query=<service>", answered by the simulated kubelet from
    its configuration (config.yaml and the --config-dir drop-in the node role wrote) and the host's files, as the
    kubelet's source reads them (lab/winsim/logquery.py). Each service's file gets a line, as the service would
    write it, which the query must return."""
    from winsim import core as winsim_core
    from winsim import logquery
    argv = split_windows_command_line(vxlan.dump("win-1")["services"]["kubelet"]["image_path"])
    assert "--config-dir=C:\\var\\lib\\kubelet\\config.d" in argv
    host = winsim_core.Host(vxlan.root, "win-1")
    lines = {}
    for name in ("kubelet", "kube-proxy", "flanneld"):
        lines[name] = "I1128 00:00:00.000000 1 test.go:1] a line of %s for the node log query\n" % name
        with open(host.local_path("C:\\var\\log\\%s\\%s.log" % (name, name)), "a") as f:
            f.write(lines[name])
    for name, line in lines.items():
        status, body = logquery.serve(vxlan.root, "win-1", "", {"query": [name]})
        assert status == 200 and body.endswith(line), (name, status, body[-500:])
    # the runtime: containerd's log is the runtime installer's (its event log provider with --register-service),
    # which the simulated host does not have: the kubelet's file heuristics find nothing
    assert logquery.serve(vxlan.root, "win-1", "", {"query": ["containerd"]}) == (
        200, "\nlog not found for containerd\n")


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
    assert not any("k8s_node_credentials" in m for m in cp), cp  # the nodes' RBAC was read in place


def test_each_windows_node_runs_kube_proxy_as_itself_with_credentials_that_rotate_themselves(vxlan, api, tmp_path):
    """Issue 21 point 2: kube-proxy and flanneld run with the kubelet's kubeconfig (system:node:<node>, a client
    certificate the kubelet rotates), so no credential a run issued can expire under them; one binding per node gives
    what the Node authorizer does not, and deleting it takes exactly that away. Against the real API server.
    On this module's nodes (issue 22 T7: it was a fresh two-node scale-up of its own in test_secrets.py); what it
    changes (win-1's binding deleted, an older release's layout planted) its own runs put back, the last changing
    nothing, so the reset test after it, which checks that reset deletes this RBAC, finds the nodes as scale-up left
    them."""
    from test_secrets import (
        RETIRED_FILES,
        AsToken,
        authenticated,
        flanneld_credential,
        kube_proxy_record,
        managed_secret_values,
        node_credential,
        plant_old_flanneld_layout,
        plant_old_kube_proxy_layout,
        service_kubeconfig,
        until,
    )
    core, _ = api
    as_token = AsToken(tmp_path)
    rbac = client.RbacAuthorizationV1Api(config.new_client_from_config(config_file=scenario.ADMIN_CONF))
    sc = vxlan

    # 1. kube-proxy names the kubelet's kubeconfig; no token, no token kubeconfig, no ServiceAccount; its binding
    # keeps kubeadm's role for kube-proxy and names the node
    for host in sc.hosts:
        assert service_kubeconfig(sc, host, "kube-proxy") == "C:\\etc\\kubernetes\\kubelet.conf"
        files = {f.lower() for f in sc.dump(host)["files"]}
        assert not files & RETIRED_FILES, files & RETIRED_FILES
        binding = rbac.read_cluster_role_binding("kubewin-kube-proxy-vx-" + host)
        assert (binding.role_ref.kind, binding.role_ref.name) == ("ClusterRole", "system:node-proxier")
        assert [(s.kind, s.name) for s in binding.subjects] == [("User", "system:node:vx-" + host)]
    assert not [a.metadata.name for a in core.list_service_account_for_all_namespaces().items
                if a.metadata.name.startswith("kubewin-") and a.metadata.name.endswith(("-vx-win-1", "-vx-win-2"))]
    assert managed_secret_values(core) == []
    # the simulated kube-proxy listed what it proxies through the real API with that credential
    record = kube_proxy_record(sc, "win-1")
    assert "sync_error" not in record and set(record["synced"]) == {"*v1.Service", "*v1.EndpointSlice",
                                                                     "*v1.ServiceCIDR"}, record

    # 2. the node's own certificate (what both services run with) reads what kube-proxy v1.37 needs
    # (cmd/kube-proxy/app/server.go L591-620, pkg/proxy/node.go) and posts Events; the rest stays refused
    as_proxy = node_credential(sc, "win-1", tmp_path, "kube-proxy")
    as_flanneld = flanneld_credential(sc, "win-1", tmp_path)
    needs = ("/apis/discovery.k8s.io/v1/endpointslices?labelSelector=%21service.kubernetes.io%2Fheadless",
             "/apis/networking.k8s.io/v1/servicecidrs",
             "/api/v1/services?labelSelector=%21service.kubernetes.io%2Fservice-proxy-name"
             "&fieldSelector=spec.clusterIP%21%3DNone",
             "/api/v1/nodes?fieldSelector=metadata.name%3Dvx-win-1", "/api/v1/nodes/vx-win-1")
    for path in needs:
        assert as_proxy("GET", path) == 200, path
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000000Z")
    event = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"generateName": "kubewin-probe-"},
             "eventTime": now, "reportingController": "kube-proxy", "reportingInstance": "kube-proxy-vx-win-1",
             "action": "StartKubeProxy", "reason": "Starting", "type": "Normal",
             "regarding": {"kind": "Node", "name": "vx-win-1", "apiVersion": "v1"}}
    assert as_proxy("POST", "/apis/events.k8s.io/v1/namespaces/default/events?dryRun=All", event) == 201
    # flanneld as the node: NodeRestriction applies (security-2.md N1: a flanneld token could set
    # node-restriction.kubernetes.io/ labels on its Node)
    label = {"metadata": {"labels": {"node-restriction.kubernetes.io/probe": "1"}}}
    assert as_flanneld("PATCH", "/api/v1/nodes/vx-win-1/status?dryRun=All", label) == 403
    assert as_flanneld("PATCH", "/api/v1/nodes/vx-win-2/status?dryRun=All",
                       {"metadata": {"labels": {"kubewin.test/probe": "1"}}}) == 403
    assert as_flanneld("PATCH", "/api/v1/nodes/vx-win-1/status?dryRun=All",
                       {"metadata": {"annotations": {"flannel.alpha.coreos.com/public-ip": "10.0.0.10"}}}) == 200
    assert as_flanneld("GET", "/api/v1/nodes") == 200  # flannel's node informer lists every Node
    assert as_flanneld("GET", "/api/v1/namespaces/kube-flannel/pods") == 403
    labels = {"metadata": {"labels": {"node-restriction.kubernetes.io/probe": "1", "kubewin.test/probe": "1"}}}
    for path in ("/api/v1/nodes/vx-win-2?dryRun=All", "/api/v1/nodes/vx-win-2/status?dryRun=All",
                 "/api/v1/nodes/vx-win-1/status?dryRun=All"):
        assert as_proxy("PATCH", path, labels) == 403, path
    assert as_proxy("DELETE", "/api/v1/nodes/vx-win-2?dryRun=All") == 403
    for path in ("/api/v1/namespaces/kube-system/secrets", "/api/v1/namespaces/kube-system/configmaps",
                 "/api/v1/pods", "/api/v1/namespaces/kube-system/serviceaccounts"):
        assert as_proxy("GET", path) == 403, path
    # the same chain (Node authorizer, then RBAC) as SelfSubjectAccessReviews. Creating a CSR is allowed: it is how
    # the kubelet rotates this certificate (the ServiceAccount of earlier releases could not)
    allowed = {("watch", "discovery.k8s.io", "endpointslices"), ("list", "networking.k8s.io", "servicecidrs"),
               ("watch", "", "services"), ("create", "events.k8s.io", "events", "", "", "default"),
               ("watch", "", "nodes"), ("create", "certificates.k8s.io", "certificatesigningrequests")}
    # (pods create is allowed here: the Node authorizer lets a node create mirror pods, NodeRestriction limits them)
    denied = {("create", "", "serviceaccounts", "token", "kubewin-kube-proxy-vx-win-1", "kube-system"),
              ("list", "", "secrets", "", "", "kube-system"), ("list", "", "configmaps", "", "", "kube-system"),
              ("delete", "", "nodes", "", "vx-win-2"), ("update", "rbac.authorization.k8s.io", "clusterrolebindings",
                                                         "", "kubewin-kube-proxy-vx-win-1")}
    for review in allowed | denied:
        assert as_proxy.can(*review) is (review in allowed), review

    # 3. the binding is what gives EndpointSlices and ServiceCIDRs (RBAC, not the Node authorizer): without it they
    # are refused and the simulated kube-proxy syncs nothing; a re-run makes it again
    rbac.delete_cluster_role_binding("kubewin-kube-proxy-vx-win-1")
    assert until(lambda: as_proxy("GET", needs[0]) == 403), "EndpointSlices still allowed without the binding"
    assert as_proxy("GET", needs[1]) == 403 and as_proxy("GET", needs[2]) == 200
    record = kube_proxy_record(sc, "win-1", relist=True)
    assert "synced" not in record and "*v1.EndpointSlice" in record["sync_error"], record
    assert "Not syncing hns" in record["sync_error"] and "403" in record["sync_error"]
    assert "synced" in kube_proxy_record(sc, "win-2", relist=True)  # the other node keeps its own binding
    rc, doc, text = sc.run("scale_up.yml")
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    binding = rbac.read_cluster_role_binding("kubewin-kube-proxy-vx-win-1")
    assert [(s.kind, s.name) for s in binding.subjects] == [("User", "system:node:vx-win-1")]
    assert doc["stats"]["win-1"]["changed"] > 0 and doc["stats"]["win-2"]["changed"] == 0, doc["stats"]
    assert until(lambda: as_proxy("GET", needs[0]) == 200) and as_proxy("GET", needs[1]) == 200
    record = kube_proxy_record(sc, "win-1", relist=True)
    assert "sync_error" not in record and "synced" in record, record

    # 4. an upgrade from the previous release: its ServiceAccount with a token file and token kubeconfig, the binding
    # naming the ServiceAccount, kube-proxy's service running with that kubeconfig, and flanneld's older layout too.
    # One run retires it all: the old tokens fail, the files go, the binding names the node; the next changes nothing
    old_proxy_token = plant_old_kube_proxy_layout(sc, "win-1", "vx-win-1")
    old_flannel_token = plant_old_flanneld_layout(sc, "win-1", "vx-win-1")
    assert as_token(old_proxy_token, "GET", needs[0]) == 200
    assert as_token(old_flannel_token, "PATCH", "/api/v1/nodes/vx-win-1/status?dryRun=All", label) == 200
    rc, doc, text = sc.run("scale_up.yml")
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    assert all(s["changed"] == 0 for h, s in doc["stats"].items() if h == "win-2"), doc["stats"]
    assert until(lambda: as_token(old_proxy_token, "GET", needs[0]) == 401), "the old kube-proxy token still works"
    assert not authenticated(old_proxy_token) and not authenticated(old_flannel_token)
    etc = os.path.join(sc.root, "hosts", "win-1", "C", "etc")
    for rel in (("kube-proxy", "token"), ("kube-proxy", "kubeconfig"), ("kube-flannel", "token"),
                ("kube-flannel", "kubeconfig")):
        assert not os.path.exists(os.path.join(etc, *rel)), rel
    binding = rbac.read_cluster_role_binding("kubewin-kube-proxy-vx-win-1")
    assert [(s.kind, s.name) for s in binding.subjects] == [("User", "system:node:vx-win-1")]
    assert binding.role_ref.name == "system:node-proxier"
    assert service_kubeconfig(sc, "win-1", "kube-proxy") == "C:\\etc\\kubernetes\\kubelet.conf"
    assert as_flanneld("PATCH", "/api/v1/nodes/vx-win-1/status?dryRun=All", label) == 403
    record = kube_proxy_record(sc, "win-1", relist=True)
    assert "sync_error" not in record and record["kubeconfig"] == "C:\\etc\\kubernetes\\kubelet.conf", record
    rc, doc, text = sc.run("scale_up.yml")
    assert rc == 0 and scenario.changed_tasks(doc) == {}, scenario.changed_tasks(doc)
    assert all(s["changed"] == 0 for s in doc["stats"].values()), doc["stats"]


# --- a reboot with no playbook run (issue 21 point 1; test_reboot.py before, on a 1-node scale-up of its own: issue 22)
# win-1 of the vxlan nodes comes back Ready with its pod network, on the lab's real control plane, rebooted by the
# simulator alone (lab/winsim/winsim_boot.py, its rules and sources in lab/winsim/README.md, "Reboots"). What is
# shown here rests on that model; what a real host does is listed in docs/verification.md. Before the reset test,
# which then takes a node whose pod network an HNS restart removed (as reset may find a real one).
REBOOTED, VNI_NETWORK = "win-1", "flannel.4096"


def _ready(core, node):
    return next((c.status, c.reason) for c in core.read_node(node).status.conditions or [] if c.type == "Ready")


def _hns(sc):
    """(networks {name: ID}, endpoints on flannel's network as {IP: ID}) of the rebooted host."""
    with scenario.core.Host(sc.root, REBOOTED).open(save=False) as h:
        hns = h.state["hns"]
        networks = {n["Name"]: n["ID"] for n in hns["networks"]}
        flannel_id = networks.get(VNI_NETWORK, "").lower()
        eps = {e["IPAddress"]: e["ID"] for e in hns["endpoints"] if e["VirtualNetwork"].lower() == flannel_id}
        return networks, eps


def _state(sc):
    with scenario.core.Host(sc.root, REBOOTED).open(save=False) as h:
        return h.state


def test_a_node_rebooted_without_a_run_comes_back_ready_with_its_pod_network(vxlan, api):
    core, _ = api
    node = "vx-" + REBOOTED
    vip = str(ipaddress.ip_network(core.read_node(node).spec.pod_cidr).broadcast_address - 1)
    networks, eps = _hns(vxlan)
    assert vip in eps, "kube-proxy made no source VIP endpoint after scale-up: %s" % eps
    before_proxy_pid = _state(vxlan)["services"]["kube-proxy"]["pid"]
    # The node lifecycle controller marks a node whose kubelet is silent Unknown: the kubelet must post Ready again.
    core.patch_node_status(node, {"status": {"conditions": [
        {"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
         "message": "Kubelet stopped posting node status."}]}})
    vxlan.reset_ops(REBOOTED)

    gone, failed = scenario.core.reboot(vxlan.root, REBOOTED)

    assert failed == {} and gone == [VNI_NETWORK]
    st = _state(vxlan)
    order = [e["service"].lower() for e in st["boot_log"]]
    assert order.index("containerd") < order.index("kubelet") < order.index("flanneld") < order.index("kube-proxy")
    assert all(st["services"][s]["status"] == "Running" for s in ("containerd", "kubelet", "flanneld", "kube-proxy"))
    assert st["services"]["kube-proxy"]["pid"] != before_proxy_pid
    after, after_eps = _hns(vxlan)
    assert after["External"] == networks["External"]  # kept: no vSwitch blip at boot
    assert VNI_NETWORK in after and after[VNI_NETWORK] != networks[VNI_NETWORK]  # flanneld made it again
    assert vip in after_eps and after_eps[vip] != eps[vip]  # kube-proxy's first sync made it again
    proxy = st["processes"]["kube-proxy"]
    assert proxy.get("network_checked") and not proxy.get("sync_error"), proxy
    assert _ready(core, node) == ("True", "KubeletReady")
    assert vxlan.ops(REBOOTED) == []  # nothing remote: no playbook, no module ran on the host


def test_a_run_after_the_reboot_changes_nothing(vxlan):
    rc, doc, text = vxlan.run("scale_up.yml")
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    assert scenario.changed_tasks(doc) == {}


def test_an_hns_restart_leaves_the_pod_network_gone_until_its_programs_restart(vxlan):
    """The lab's model of microsoft/Windows-Containers#278 (not the collection's behaviour): HNS drops flannel's
    network and every load balancer, flanneld and kube-proxy keep running and recreate nothing (proxier.go
    svcInfo.policyApplied); the health check and repair of issue 21 point 4 are what must notice."""
    networks, _ = _hns(vxlan)
    pids = {s: _state(vxlan)["services"][s]["pid"] for s in ("flanneld", "kube-proxy")}
    assert scenario.core.hns_service_restart(vxlan.root, REBOOTED) == [VNI_NETWORK]
    after, eps = _hns(vxlan)
    st = _state(vxlan)
    assert VNI_NETWORK not in after and after["External"] == networks["External"] and eps == {}
    assert st["hns"]["policylists"] == []
    assert {s: st["services"][s]["pid"] for s in pids} == pids  # still the same processes
    assert st["processes"]["kube-proxy"].get("network_checked")  # it looks no more: nothing is re-applied


def test_reset_leaves_the_hosts_as_before_and_scale_up_works_again(vxlan, api):
    from test_secrets import managed_rbac
    core, _ = api
    # the RBAC the run made for each node's kube-proxy and flanneld (test_each_windows_node_runs_...): reset deletes it
    for h in vxlan.hosts:
        node = "vx-" + h
        assert managed_rbac(node) == ["binding kubewin-flanneld-" + node, "binding kubewin-kube-proxy-" + node,
                                      "role kubewin-flanneld-" + node], h
    rc, doc, text = vxlan.run("reset.yml", "-e", "skip_confirmation=true")
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    assert managed_rbac("vx-win-1") == [] and managed_rbac("vx-win-2") == []
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
