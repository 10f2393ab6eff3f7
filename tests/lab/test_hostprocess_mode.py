"""Issue 12 item 5 against the lab control plane: HostProcess mode uses its images only pinned by digest,
changes the Pod Security enforce label of its namespaces only where needed and records what was there,
rolls flannel and kube-proxy out as DaemonSets whose pods run on the nodes, and reset removes every object the mode
made and puts the label back."""

import json
import os
import time

import pytest
import scenario
from ansible_collections.ansible.windows.plugins.module_utils import winsim_containerd, winsim_firewall
from kubernetes import client, config
from winsim import core as winsim_core

ENFORCE = "pod-security.kubernetes.io/enforce"
PRIOR = "kubewin.nodes/pod-security-enforce-before"
FLANNEL_TAG = "registry.lab.invalid/kubewin/flannel-hostprocess:v0.27.4"
FLANNEL_DIGEST = scenario.published_image(FLANNEL_TAG)
PROXY_DIGEST = scenario.published_image("registry.lab.invalid/kubewin/kube-proxy-hostprocess:" + scenario.lab_version())


def _labels(core, name):
    meta = core.read_namespace(name).metadata
    return dict(meta.labels or {}), dict(meta.annotations or {})


def _managed(apps, rbac):
    selector = "kubewin.nodes/managed=true"
    return ([(d.metadata.namespace, d.metadata.name)
             for d in apps.list_daemon_set_for_all_namespaces(label_selector=selector).items]
            + [b.metadata.name for b in rbac.list_cluster_role_binding(label_selector=selector).items])


OWNER = "node-restriction.kubernetes.io/kubewin-managed"  # roles/control_plane/vars/main.yml
IMPOSTOR = "hpm-linux-1"


def _as_kubelet(node):
    """CoreV1Api as the kubelet of this Node (its user and group, impersonated through admin.conf): what the
    Node authorizer and NodeRestriction let a compromised node do."""
    kubelet = config.new_client_from_config(config_file=scenario.ADMIN_CONF)
    kubelet.set_default_header("Impersonate-User", "system:node:" + node)
    kubelet.set_default_header("Impersonate-Group", "system:nodes")
    return client.CoreV1Api(kubelet)


def _delete_impostor(core):
    try:
        core.delete_node(IMPOSTOR)
    except client.exceptions.ApiException as e:
        if e.status != 404:
            raise


def _clear_leftovers(core, apps, rbac):
    """The lab is shared: scenarios of other test modules leave their managed Windows Nodes (and with them
    the HostProcess DaemonSets, which reset keeps while any managed Windows node is left). This test starts
    from a cluster without them, as a cluster that never had kubewin.nodes."""
    selector = "kubewin.nodes/managed=true"
    for owned in (selector, OWNER + "=true"):
        for node in core.list_node(label_selector="kubernetes.io/os=windows," + owned).items:
            core.delete_node(node.metadata.name)
    for ds in apps.list_daemon_set_for_all_namespaces(label_selector=selector).items:
        apps.delete_namespaced_daemon_set(ds.metadata.name, ds.metadata.namespace)
    for binding in rbac.list_cluster_role_binding(label_selector=selector).items:
        rbac.delete_cluster_role_binding(binding.metadata.name)
    # and the enforce labels an interrupted run of this mode left changed, put back as reset would
    for name in ("kube-system", "kube-flannel"):
        labels, annotations = _labels(core, name)
        if PRIOR in annotations:
            core.patch_namespace(name, {"metadata": {"labels": {ENFORCE: annotations[PRIOR] or None},
                                                     "annotations": {PRIOR: None}}})


def _pods_run_on(core, nodes):
    """Wait until each of ``nodes`` runs a flannel and a kube-proxy HostProcess pod (kwok runs them)."""
    deadline = time.time() + 120
    while True:
        pods = [p for p in core.list_pod_for_all_namespaces(label_selector="app in (flannel-windows)").items
                + core.list_pod_for_all_namespaces(label_selector="k8s-app=kube-proxy-windows").items
                if p.spec.node_name in nodes]
        if len(pods) == 2 * len(nodes) and all(p.status.phase == "Running" for p in pods):
            return
        assert time.time() < deadline, [(p.metadata.name, p.spec.node_name, p.status.phase) for p in pods]
        time.sleep(2)


def test_hostprocess_objects_are_pinned_scoped_and_all_removed_by_reset(tmp_path, api):
    """Two nodes from a cluster without kubewin.nodes: preflight refuses images not set or not pinned, then the
    DaemonSets roll out and their pods run on both nodes, a re-run changes nothing, and reset removes it all (with
    test_scenarios' former test_hostprocess_mode_rolls_flannel_and_kube_proxy_out_as_daemonsets: issue 22 T4)."""
    core, apps = api
    rbac = client.RbacAuthorizationV1Api(config.new_client_from_config(config_file=scenario.ADMIN_CONF))
    _clear_leftovers(core, apps, rbac)
    # flannel's namespace enforces baseline before kubewin.nodes comes (HostProcess pods need privileged)
    core.patch_namespace("kube-flannel", {"metadata": {"labels": {ENFORCE: "baseline"}}})
    system_before = _labels(core, "kube-system")
    sc, reset = None, False
    try:
        # the defaults: no image (none published fits the DaemonSets), refused by preflight naming both
        sc = scenario.Scenario(tmp_path, nodes=2, kubewin_node_name="hpm-{{ inventory_hostname }}",
                               kubewin_ready_timeout=20)
        # in the Windows group's vars (the sample keeps it in group_vars/all, but an operator may set it per group),
        # which the control-plane host (that applies the DaemonSets) does not see
        with open(os.path.join(sc.root, "group_vars", "kube_windows_nodes.yml"), "w") as f:
            f.write("kubewin_deployment_mode: hostprocess\n")
        rc, doc, text = sc.run("scale_up.yml")
        messages = "\n".join(scenario.failures(doc))
        assert rc != 0 and "kubewin_flannel_hostprocess_image is not set" in messages, messages or text[-2000:]
        assert "kubewin_kube_proxy_hostprocess_image is not set" in messages
        assert _managed(apps, rbac) == []

        common = dict(kubewin_node_name="hpm-{{ inventory_hostname }}", kubewin_ready_timeout=20,
                      kubewin_flannel_hostprocess_image=FLANNEL_TAG, kubewin_kube_proxy_hostprocess_image=PROXY_DIGEST)
        sc.set_vars(**common)
        # a tag without a pin: refused by preflight, nothing changed in the cluster
        rc, doc, text = sc.run("scale_up.yml")
        messages = "\n".join(scenario.failures(doc))
        assert rc != 0 and "Preflight failed on win-1" in messages, messages or text[-2000:]
        assert "kubewin_flannel_hostprocess_image is '%s'" % FLANNEL_TAG in messages
        assert "kubewin_hostprocess_image_pins" in messages and "kube_proxy_hostprocess_image" not in messages
        assert _labels(core, "kube-flannel")[0][ENFORCE] == "baseline" and _managed(apps, rbac) == []

        sc.set_vars(kubewin_hostprocess_image_pins={FLANNEL_TAG: FLANNEL_DIGEST}, **common)
        rc, doc, text = sc.run("scale_up.yml")
        assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
        flannel = apps.read_namespaced_daemon_set("kube-flannel-ds-windows", "kube-flannel")
        proxy = apps.read_namespaced_daemon_set("kube-proxy-windows", "kube-system")
        assert [c.image for c in flannel.spec.template.spec.containers] == [FLANNEL_DIGEST]
        assert [c.image for c in proxy.spec.template.spec.containers] == [PROXY_DIGEST]
        for ds in (flannel, proxy):
            assert ds.spec.template.spec.security_context.windows_options.host_process is True
            assert ds.spec.template.spec.node_selector == {"kubernetes.io/os": "windows"}
        _pods_run_on(core, ("hpm-win-1", "hpm-win-2"))
        services = sc.dump("win-1")["services"]
        assert "kube-proxy" not in services and "flanneld" not in services
        assert services["kubelet"]["status"] == "Running"
        # Ready was earned: the node role put the CNI config and the plugins its delegate names where containerd
        # reads them (HostProcess pods run with the host's network and cannot install it)
        with winsim_core.Host(sc.root, "win-1").open(save=False) as h:
            assert winsim_containerd.cni_problems(h) == []
            # the HostProcess pods run on the host's network: the kubelet's and vxlan's ports are opened there too
            assert winsim_firewall.inbound_allowed(h.state, "tcp", 10250)
            port = json.loads(core.read_namespaced_config_map("kube-flannel-cfg", "kube-flannel")
                              .data["net-conf.json"])["Backend"].get("Port", 4789)
            assert winsim_firewall.inbound_allowed(h.state, "udp", port)
        labels, annotations = _labels(core, "kube-flannel")
        assert labels[ENFORCE] == "privileged" and annotations[PRIOR] == "baseline"
        labels, annotations = _labels(core, "kube-system")
        assert labels[ENFORCE] == "privileged"
        assert annotations[PRIOR] == system_before[0].get(ENFORCE, "")
        # only the enforce label: no other Pod Security label is touched
        assert {k for k in labels if k.startswith("pod-security.kubernetes.io/")} == \
            {k for k in system_before[0] if k.startswith("pod-security.kubernetes.io/")} | {ENFORCE}
        assert sorted(_managed(apps, rbac), key=str) == sorted(
            [("kube-flannel", "kube-flannel-ds-windows"), ("kube-system", "kube-proxy-windows"),
             "kubewin:kube-proxy-windows"], key=str)

        rc, doc, text = sc.run("scale_up.yml")
        assert rc == 0 and scenario.changed_tasks(doc) == {}, scenario.changed_tasks(doc)

        assert core.read_node("hpm-win-1").metadata.labels.get(OWNER) == "true"
        # security-2 N4: a compromised Linux node labels itself as a managed Windows node with what its kubelet
        # may write; the label reset counts it may not set (NodeRestriction), so reset of the last managed
        # node still removes the HostProcess objects (with the transition from the older label ended).
        _delete_impostor(core)
        core.create_node({"apiVersion": "v1", "kind": "Node", "metadata": {
            "name": IMPOSTOR, "labels": {"kubernetes.io/os": "linux"}, "annotations": {"kwok.x-k8s.io/node": "fake"}}})
        impostor = _as_kubelet(IMPOSTOR)
        impostor.patch_node(IMPOSTOR, {"metadata": {"labels": {"kubernetes.io/os": "windows",
                                                               "kubewin.nodes/managed": "true"}}})
        with pytest.raises(client.exceptions.ApiException) as denied:
            impostor.patch_node(IMPOSTOR, {"metadata": {"labels": {OWNER: "true"}}})
        assert denied.value.status == 403
        rc, doc, text = sc.run("reset.yml", "-e", "skip_confirmation=true",
                               "-e", "kubewin_ownership_legacy_label=false")
        reset = True
        assert rc == 0, "\n".join(scenario.failures(doc))
        assert _managed(apps, rbac) == []
        labels, annotations = _labels(core, "kube-flannel")
        assert labels[ENFORCE] == "baseline" and PRIOR not in annotations
        assert _labels(core, "kube-system") == system_before
        # a second reset finds nothing left to do for this mode
        rc, doc, text = sc.run("reset.yml", "-e", "skip_confirmation=true")
        assert rc == 0 and not [t for t in scenario.changed_tasks(doc).get("localhost", [])
                                if "HostProcess" in t or "Pod Security" in t]
    finally:
        if sc is not None and not reset:  # a failure before reset: take the nodes out (as far as reset can)
            sc.run("reset.yml", "-e", "skip_confirmation=true")
        _delete_impostor(core)
        core.patch_namespace("kube-flannel", {"metadata": {"labels": {ENFORCE: None}, "annotations": {PRIOR: None}}})
        if _labels(core, "kube-system") != system_before:  # a failure before reset: put kube-system back too
            core.patch_namespace("kube-system", {"metadata": {
                "labels": {ENFORCE: system_before[0].get(ENFORCE)},
                "annotations": {PRIOR: system_before[1].get(PRIOR)}}})
