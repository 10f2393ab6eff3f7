"""A kubespray user's run, exactly, against a cluster built as kubespray builds it (the lab's kubespray flavour:
LAB_FLAVOUR=kubespray lab/bin/lab-up, then this file with LAB_FLAVOUR=kubespray; lab/README.md).

The inventory is kubespray's sample group_vars copied unchanged from the fixture, with only the edit a flannel
user makes (kube_network_plugin: flannel), an inventory.ini with the lab's control-plane host and one Windows host
in the Windows group with its connection variables, and what an air-gapped user sets (download URLs of a mirror,
plain http allowed). Not kubewin_kubeconfig: the collection's default /etc/kubernetes/admin.conf is where kubespray
puts it, and where the flavour links its own. Run with -b on ansible-core 2.18 (kubespray v2.31's pin) and 2.19:
scale-up to a Ready node one minor behind the control plane (the release the user's kube_version named before
kubespray's upgrade-cluster.yml moved the control plane), a re-run that changes nothing, the upgrade one minor to
the API server's release (docs/operations.md: kubespray's upgrade first, then this collection's), reset back to
the host as it was.

With LAB_KUBESPRAY_NETWORK=calico the flavour is kubespray's default Calico cluster instead (kubespray's Calico
manifests, IPAMConfig, FelixConfiguration and IP pool, Calico's CRDs), and the sample unchanged, kube_network_plugin:
calico included, is refused before any change: for kubespray's default strictAffinity false, for each other setting
Calico's Windows nodes cannot run, and, with all of them fine, because Calico install on Windows is not there yet."""

import copy
import os
import re
import shutil
import sys

import pytest
import scenario
import yaml

FIXTURE = os.environ.get("LAB_KUBESPRAY_FIXTURE") or os.path.join(os.path.dirname(scenario.REPO), "shared",
                                                              "fixtures", "kubespray", "v2.31.0")
ETC_ADMIN = "/etc/kubernetes/admin.conf"
TOKENS = "type=bootstrap.kubernetes.io/token"


def network():
    """The kubespray flavour's network (lab-up writes it: flannel, or kubespray's default calico)."""
    try:
        with open(os.path.join(scenario.RUN, "NETWORK")) as f:
            return f.read().strip()
    except OSError:
        return None

pytestmark = [
    pytest.mark.skipif(not os.path.isdir(FIXTURE),
                       reason="kubespray's fixture is not at %s (a clone without ../shared/fixtures)" % FIXTURE),
    pytest.mark.skipif(scenario.FLAVOUR != "kubespray",
                       reason="needs the lab's kubespray flavour: LAB_FLAVOUR=kubespray lab/bin/lab-up, then pytest "
                              "with LAB_FLAVOUR=kubespray (make lab-test does both)"),
]


@pytest.fixture
def etc_admin_conf():
    """kubespray's admin kubeconfig path, linked by the flavour's lab-up to its own admin.conf; anything else there
    is not the lab's to use."""
    own = os.path.join(scenario.RUN, "kubernetes", "admin.conf")
    if not os.path.islink(ETC_ADMIN) or os.readlink(ETC_ADMIN) != own:
        what = ("a link to %s" % os.readlink(ETC_ADMIN) if os.path.islink(ETC_ADMIN)
                else "a file that is not the lab's" if os.path.exists(ETC_ADMIN) else "nothing")
        pytest.skip("%s is %s, not lab-up's link to %s: the run would use another cluster's kubeconfig (or none); "
                    "lab-up links it only where nothing else is" % (ETC_ADMIN, what, own))
    return ETC_ADMIN


def kubespray_inventory(sc, inv, flannel=True):
    """kubespray's sample as a kubespray user copies it, the flannel user's edit (unless the cluster is kubespray's
    default Calico one), and the Windows group."""
    from test_kubespray_inventory import windows_group, write  # reads the lab when imported: not at collection
    shutil.copytree(os.path.join(FIXTURE, "inventory", "sample", "group_vars"), str(inv / "group_vars"))
    cluster_file = inv / "group_vars" / "k8s_cluster" / "k8s-cluster.yml"
    text = cluster_file.read_text()
    edits = [("kube_network_plugin: calico\n", "kube_network_plugin: flannel\n")] if flannel else []
    port = scenario.lab_vars()["kube_apiserver_port"]
    if port != 6443:
        # Not a user's edit: the lab's API server is on its own port (LAB_APISERVER_PORT, lab-up's override of
        # kubespray's 6443, so labs share the machine); a kubespray cluster is where its inventory says.
        edits.append(("kube_apiserver_port: 6443  # (https)\n", "kube_apiserver_port: %d  # (https)\n" % port))
    for old, new in edits:
        assert text.count(old) == 1, "kubespray's sample changed: %r" % old
        text = text.replace(old, new)
    cluster_file.write_text(text)

    hosts, connection = windows_group(sc)
    # The simulated hosts' connection variables stand in for WinRM's (ansible_connection: winrm, ansible_user,
    # ansible_password, ansible_port, ...); ansible_become: false as the README's quick start says.
    write(str(inv / "group_vars" / "kube_windows_nodes.yml"), connection,
          "the Windows group's connection variables (the lab's simulated hosts)")
    # What an air-gapped user sets: where the Windows files are (a mirror), and that its plain http is allowed.
    offline = {k: v for k, v in scenario.lab_vars().items() if k.endswith("_download_url")}
    offline["kubewin_allow_insecure_downloads"] = True
    write(str(inv / "group_vars" / "all" / "kubewin-offline.yml"), offline,
          "an air-gapped user's mirror of the Windows files (plain http on loopback: allowed explicitly)")
    lines = ["[kube_control_plane]",
             # kubespray's per-host address (main_ip), where the lab's API server listens
             "lab-control-plane ansible_connection=local ansible_python_interpreter=%s ip=127.0.0.1"
             % sys.executable, "",
             "[etcd:children]", "kube_control_plane", "", "[kube_node]", "",
             "[kube_windows_nodes]"] + ["%s ansible_host=%s" % (h, v["ansible_host"]) for h, v in hosts.items()]
    (inv / "inventory.ini").write_text("\n".join(lines) + "\n")
    return str(inv / "inventory.ini")


def test_kubespray_sample_unchanged_scale_up_rerun_upgrade_and_reset(tmp_path, api, etc_admin_conf):
    if network() != "flannel":
        pytest.skip("the kubespray flavour runs %s, not flannel (LAB_KUBESPRAY_NETWORK)" % network())
    core, dummy = api
    sc = scenario.Scenario(tmp_path / "lab", nodes=1)
    sc.forget_nodes("{{ inventory_hostname }}")
    inventory = kubespray_inventory(sc, tmp_path / "mycluster")
    from test_kubespray_inventory import run, sudo_calls, sudo_shim
    sudo_dir = str(tmp_path / "bin")
    log = sudo_shim(sudo_dir)
    before = sc.dump("win-1")
    with open(os.path.join(scenario.LAB, "controlplane", "UPGRADE_FROM")) as f:
        old = f.read().strip()
    # as kubespray writes kube_version (no v: kubespray's inventory check refuses it), given with -e as the
    # user's inventory said before kubespray's own upgrade
    previous = ("-e", "kube_version=%s" % old.lstrip("v"))

    rc, doc, text = run(sc, "scale_up.yml", inventory, sudo_dir, *previous)
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    assert sudo_calls(log), "the control-plane host's tasks did not become root"
    node = core.read_node("win-1")
    assert any(c.type == "Ready" and c.status == "True" for c in node.status.conditions or []), \
        [(c.type, c.status, c.message) for c in node.status.conditions or []]
    assert node.status.node_info.kubelet_version == old
    # the node's kubelet reads the cluster CA where the cluster's kubelet-config says (kubespray's cert dir)
    kubelet_config = yaml.safe_load(core.read_namespaced_config_map("kubelet-config", "kube-system").data["kubelet"])
    assert kubelet_config["authentication"]["x509"]["clientCAFile"] == "/etc/kubernetes/ssl/ca.crt"

    rc, doc, text = run(sc, "scale_up.yml", inventory, sudo_dir, *previous)
    assert rc == 0 and scenario.changed_tasks(doc) == {}, \
        scenario.changed_tasks(doc) or "\n".join(scenario.failures(doc)) or text[-3000:]

    # kube_version unset, as in kubespray's sample: the Windows nodes follow the API server
    rc, doc, text = run(sc, "upgrade.yml", inventory, sudo_dir)
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    node = core.read_node("win-1")
    assert node.status.node_info.kubelet_version == scenario.lab_version() and not node.spec.unschedulable
    assert any(c.type == "Ready" and c.status == "True" for c in node.status.conditions or [])

    rc, doc, text = run(sc, "reset.yml", inventory, sudo_dir, "-e", "skip_confirmation=true")
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    assert sc.dump("win-1") == before
    assert "win-1" not in {n.metadata.name for n in core.list_node().items}
    left = [a.metadata.namespace + "/" + a.metadata.name for a in core.list_service_account_for_all_namespaces().items
            if "win-1" in a.metadata.name]
    assert not left, left  # the node's own credentials (ServiceAccounts) went with it


def test_kubespray_default_calico_cluster_is_refused_before_any_change(tmp_path, api, etc_admin_conf):
    """kubespray's sample unchanged (kube_network_plugin: calico) against kubespray's default Calico cluster: the
    run stops in preflight, naming Calico, before anything changes on the host or in the cluster."""
    if network() != "calico":
        pytest.skip("the kubespray flavour runs %s: this needs LAB_KUBESPRAY_NETWORK=calico" % network())
    core, dummy = api
    sc = scenario.Scenario(tmp_path / "lab", nodes=1)
    sc.forget_nodes("{{ inventory_hostname }}")
    inventory = kubespray_inventory(sc, tmp_path / "mycluster", flannel=False)
    from test_kubespray_inventory import run, sudo_shim
    sudo_dir = str(tmp_path / "bin")
    sudo_shim(sudo_dir)
    before = sc.dump("win-1")
    tokens = {t.metadata.name for t in core.list_namespaced_secret("kube-system", field_selector=TOKENS).items}

    rc, doc, text = run(sc, "scale_up.yml", inventory, sudo_dir)
    assert rc != 0
    messages = "\n".join(scenario.failures(doc))
    assert "Preflight failed on win-1" in messages, messages or text[-3000:]
    # read from the cluster (kubespray's calico-node and Calico objects): kubespray's default strictAffinity false is
    # refused naming kubespray's variable, and the run says Calico install on Windows is not available yet
    assert "set calico_ipam_strictaffinity: true" in messages, messages
    assert "cannot install Calico's Windows components yet" in messages, messages
    assert "Needs fixing first (each named above): calico_ipam_strictaffinity" in messages, messages
    assert sc.dump("win-1") == before
    assert {t.metadata.name for t in core.list_namespaced_secret("kube-system", field_selector=TOKENS).items} \
        == tokens
    assert "win-1" not in {n.metadata.name for n in core.list_node().items}


CALICO = ("crd.projectcalico.org", "v1")


class CalicoSettings(object):
    """Changes to the flavour's Calico objects, as a kubespray user's variables (or calico-node) would leave them,
    each undone by restore()."""

    def __init__(self):
        from kubernetes import client, config
        api_client = config.new_client_from_config(config_file=scenario.ADMIN_CONF)
        self.core, self.apps = client.CoreV1Api(api_client), client.AppsV1Api(api_client)
        self.custom, self.env_var = client.CustomObjectsApi(api_client), client.V1EnvVar
        self.undo = []

    def spec(self, plural, name, **changes):
        obj = self.custom.get_cluster_custom_object(*CALICO, plural, name)
        before = copy.deepcopy(obj["spec"])
        obj["spec"].update(changes)
        self.custom.replace_cluster_custom_object(*CALICO, plural, name, obj)

        def restore():
            now = self.custom.get_cluster_custom_object(*CALICO, plural, name)
            now["spec"] = before
            self.custom.replace_cluster_custom_object(*CALICO, plural, name, now)
        self.undo.append(restore)

    def add_pool(self, name, **spec):
        self.custom.create_cluster_custom_object(*CALICO, "ippools", {
            "apiVersion": "/".join(CALICO), "kind": "IPPool", "metadata": {"name": name}, "spec": spec})
        self.undo.append(lambda: self.custom.delete_cluster_custom_object(*CALICO, "ippools", name))

    def calico_config(self, edit):
        cm = self.core.read_namespaced_config_map("calico-config", "kube-system")
        before = dict(cm.data)
        cm.data = edit(dict(cm.data))
        self.core.replace_namespaced_config_map("calico-config", "kube-system", cm)

        def restore():
            now = self.core.read_namespaced_config_map("calico-config", "kube-system")
            now.data = before
            self.core.replace_namespaced_config_map("calico-config", "kube-system", now)
        self.undo.append(restore)

    def node_env(self, remove=(), **env):
        """calico-node's env without ``remove``, with ``env`` set."""
        def edit(ds, new):
            container = [c for c in ds.spec.template.spec.containers if c.name == "calico-node"][0]
            old = container.env
            container.env = new(old)
            self.apps.replace_namespaced_daemon_set("calico-node", "kube-system", ds)
            return old
        before = edit(self.apps.read_namespaced_daemon_set("calico-node", "kube-system"),
                      lambda old: [e for e in old if e.name not in remove and e.name not in env]
                      + [self.env_var(name=k, value=v) for k, v in env.items()])
        self.undo.append(lambda: edit(self.apps.read_namespaced_daemon_set("calico-node", "kube-system"),
                                      lambda old: before))

    def restore(self):
        while self.undo:
            self.undo.pop()()


def _host_local(data):
    text = data["cni_network_config"]
    assert text.count('"type": "calico-ipam"') == 1, "kubespray's calico-config changed"
    return dict(data, cni_network_config=text.replace('"type": "calico-ipam"', '"type": "host-local"'))


# (id, change to kubespray's default cluster besides calico_ipam_strictaffinity: true, Windows host profile,
#  kubespray variable refused (None: the Windows build), a phrase of its message). Each is what that kubespray
# variable (or calico-node) leaves in the cluster.
CALICO_REFUSALS = [
    ("etcd", lambda c: c.node_env(remove=("DATASTORE_TYPE",), ETCD_ENDPOINTS="https://127.0.0.1:2379"),
     "ws2022-containerd", "calico_datastore", "datastore is etcdv3"),
    ("bgp-backend", lambda c: c.calico_config(lambda d: dict(d, calico_backend="bird")), "ws2022-containerd",
     "calico_network_backend", "set calico_network_backend: vxlan"),
    ("ipip", lambda c: c.spec("ippools", "default-pool", ipipMode="Always", vxlanMode="Never"), "ws2022-containerd",
     "calico_ipip_mode", "has ipipMode Always"),
    ("vxlan-crosssubnet", lambda c: c.spec("ippools", "default-pool", vxlanMode="CrossSubnet"), "ws2022-containerd",
     "calico_vxlan_mode", "no cross-subnet VXLAN on Windows"),
    ("vni", lambda c: c.node_env(FELIX_VXLANVNI="4095"), "ws2022-containerd", "calico_vxlan_vni",
     "set calico_vxlan_vni: 4096"),
    ("port", lambda c: c.node_env(FELIX_VXLANPORT="8472"), "ws2022-containerd", "calico_vxlan_port",
     "set calico_vxlan_port: 4789"),
    ("ebpf", lambda c: c.spec("felixconfigurations", "default", bpfEnabled=True), "ws2022-containerd",
     "calico_bpf_enabled", "set calico_bpf_enabled: false"),
    ("wireguard", lambda c: c.spec("felixconfigurations", "default", wireguardEnabled=True), "ws2022-containerd",
     "calico_wireguard_enabled", "set calico_wireguard_enabled: false"),
    ("ipv6-only", lambda c: (c.spec("ippools", "default-pool", disabled=True),
                             c.add_pool("default-pool-ipv6", cidr="fd85:ee78:d8a6:8607::1:0/112", blockSize=122,
                                        ipipMode="Never", vxlanMode="Always")), "ws2022-containerd",
     "calico_pool_cidr", "no enabled IPv4 IP pool (default-pool-ipv6"),
    ("host-local-ipam", lambda c: c.calico_config(_host_local), "ws2022-containerd", "calico_ipam_host_local",
     "set calico_ipam_host_local: false"),
    ("windows-build", lambda c: None, "ws2025-containerd", None,
     "Windows build 26100, which Calico v3.31.5 does not support"),
]


def _calico_scale_up(tmp_path, profile="ws2022-containerd"):
    """scale_up.yml with kubespray's sample unchanged against the flavour's Calico cluster: (rc, failure lines)."""
    sc = scenario.Scenario(tmp_path / "lab", nodes=1, profile=profile)
    sc.forget_nodes("{{ inventory_hostname }}")
    inventory = kubespray_inventory(sc, tmp_path / "mycluster", flannel=False)
    from test_kubespray_inventory import run, sudo_shim
    sudo_dir = str(tmp_path / "bin")
    sudo_shim(sudo_dir)
    before = sc.dump("win-1")
    rc, doc, text = run(sc, "scale_up.yml", inventory, sudo_dir)
    assert sc.dump("win-1") == before
    return rc, "\n".join(scenario.failures(doc)) or text[-3000:]


def test_kubespray_calico_with_strict_affinity_is_refused_as_not_installable_yet(tmp_path, api, etc_admin_conf):
    """calico_ipam_strictaffinity: true, the rest kubespray's default: every setting is fine for Windows, and the run
    still stops before any change, as Calico install on Windows is not there yet."""
    if network() != "calico":
        pytest.skip("the kubespray flavour runs %s: this needs LAB_KUBESPRAY_NETWORK=calico" % network())
    calico = CalicoSettings()
    try:
        calico.spec("ipamconfigs", "default", strictAffinity=True)
        rc, messages = _calico_scale_up(tmp_path)
    finally:
        calico.restore()
    assert rc != 0 and "Preflight failed on win-1" in messages, messages
    assert "Nothing else this collection checks needs fixing: what is missing is the installation" in messages, messages
    for fine in ("Calico v3.31.5 found (ClusterInformation default (calicoVersion))", "datastore kubernetes (kdd)",
                 "backend vxlan", "IPAM calico-ipam", "VXLAN VNI 4096", "VXLAN port 4789", "no eBPF, no WireGuard",
                 "IPv4 pool default-pool (10.233.64.0/18, blockSize 26) with vxlanMode Always, ipipMode Never",
                 "IPAM strictAffinity true", "(Windows Server 2022, Calico v3.31.5 supports it from update 20348.169)"):
        assert fine in messages, (fine, messages)


@pytest.mark.parametrize("change, profile, variable, phrase", [r[1:] for r in CALICO_REFUSALS],
                         ids=[r[0] for r in CALICO_REFUSALS])
def test_kubespray_calico_settings_windows_cannot_run_are_refused(tmp_path, api, etc_admin_conf, change, profile,
                                                                  variable, phrase):
    if network() != "calico":
        pytest.skip("the kubespray flavour runs %s: this needs LAB_KUBESPRAY_NETWORK=calico" % network())
    calico = CalicoSettings()
    try:
        calico.spec("ipamconfigs", "default", strictAffinity=True)
        change(calico)
        rc, messages = _calico_scale_up(tmp_path, profile)
    finally:
        calico.restore()
    assert rc != 0 and phrase in messages, messages
    # the only setting named to fix is this row's
    assert re.findall(r"Needs fixing first \(each named above\): ([^\n]*)", messages) \
        == [variable or "this host's Windows build"], messages
