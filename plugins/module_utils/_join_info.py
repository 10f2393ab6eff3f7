# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What ``kubewin.nodes.k8s_join_info`` reads: ``gather(module, apis)``, with the decisions from ``_cluster_facts``
(and ``_cluster_info``, ``_daemonset_os``, ``_pod_security`` for its options ``discovery``, ``pin_daemonsets`` and
``pod_security``). The module file keeps its documentation, argument spec and ``main()``. PRIVATE to the collection:
no compatibility promise outside it.
"""

from __future__ import annotations

from ansible_collections.kubewin.nodes.plugins.module_utils import _calico as calico_facts
from ansible_collections.kubewin.nodes.plugins.module_utils import _cluster_facts as cf
from ansible_collections.kubewin.nodes.plugins.module_utils import _cluster_info as ci
from ansible_collections.kubewin.nodes.plugins.module_utils import _daemonset_os as dso
from ansible_collections.kubewin.nodes.plugins.module_utils import _node_credentials as nc
from ansible_collections.kubewin.nodes.plugins.module_utils import _pod_security as pod_security
from ansible_collections.kubewin.nodes.plugins.module_utils._k8s import client as kc


def _calico(apis, get_configmap, daemonset, ref):
    """The Calico settings Windows nodes depend on, read only where calico-node runs: its ConfigMap and the
    crd.projectcalico.org objects (a missing CRD or object reads as None)."""
    group, version = calico_facts.CRD_GROUP, calico_facts.CRD_VERSION

    def get(plural, name):
        return kc.call(apis, "get", "%s.%s" % (plural, group), None, name,
                       apis.custom.get_cluster_custom_object, group, version, plural, name)

    pools = kc.call(apis, "list", "ippools.%s" % group, None, None,
                    apis.custom.list_cluster_custom_object, group, version, "ippools")
    return calico_facts.facts(daemonset, ref, configmap=get_configmap(*calico_facts.CALICO_CONFIGMAP),
                              cluster_information=get("clusterinformations", "default"),
                              felix=get("felixconfigurations", "default"),
                              ippools=(pools or {}).get("items") or [],
                              ipamconfig=get("ipamconfigs", "default"))


def _credentials_in_place(apis, nodes, bindings, flannel_namespace):
    """Each Windows node's ``credentials_in_place``: whether k8s_node_credentials would change nothing for it (the
    network role then skips that call on a no-op run), from this run's lists; None where they could not be read."""
    def managed(verb_resource, func):
        try:
            return (kc.call(apis, "list", verb_resource, None, None, func,
                            label_selector="%s=true" % nc.MANAGED_LABEL) or {}).get("items") or []
        except kc.K8sError as exc:
            if exc.status != 403:
                raise
            return None

    windows = [name for name, facts in nodes.items() if facts["os"] == "windows"]
    for facts in nodes.values():
        facts["credentials_in_place"] = None
    if not windows or bindings is None:
        return
    roles = managed("clusterroles", apis.rbac.list_cluster_role)
    accounts = managed("serviceaccounts", apis.core.list_service_account_for_all_namespaces)
    if roles is None or accounts is None:
        return

    def meta(obj):
        return obj.get("metadata") or {}

    roles = {meta(o).get("name"): o for o in roles}
    by_name = {meta(o).get("name"): o for o in bindings.get("items") or []}
    accounts = {(meta(o).get("namespace"), meta(o).get("name")) for o in accounts}
    namespaces = dict(nc.DEFAULT_NAMESPACES, flanneld=flannel_namespace or nc.DEFAULT_NAMESPACES["flanneld"])
    for name in windows:
        nodes[name]["credentials_in_place"] = nc.in_place(name, namespaces, roles, by_name, accounts)


def gather(module, apis):
    def get_configmap(namespace, name):
        return kc.call(apis, "get", "configmaps", namespace, name,
                       apis.core.read_namespaced_config_map, name, namespace)

    version = cf.parse_server_version(kc.call(apis, "get", "the server version", None, None, apis.version.get_code))

    try:
        refs = [(ref,) + cf.split_ref(ref, "flannel_configmaps entry") for ref in module.params["flannel_configmaps"]]
    except cf.ClusterFactsError as exc:
        raise kc.K8sError(str(exc)) from None
    flannel = cf.flannel_not_found()
    for ref, namespace, name in refs:
        cm = get_configmap(namespace, name)
        if cm is not None:
            try:
                flannel = cf.flannel_facts(cm, ref)
            except cf.ClusterFactsError as exc:
                raise kc.K8sError("flannel's ConfigMap %s cannot be used: %s. Fix its %s (flannel on the Linux "
                                  "nodes reads the same file)." % (ref, exc, cf.FLANNEL_NET_CONF_KEY)) from None
            break

    calico = calico_facts.not_found()
    for ref in cf.CALICO_DAEMONSETS:
        namespace, name = cf.split_ref(ref)
        daemonset = kc.call(apis, "get", "daemonsets", namespace, name,
                            apis.apps.read_namespaced_daemon_set, name, namespace)
        if daemonset is not None:
            calico = _calico(apis, get_configmap, daemonset, ref)
            break

    nodes = cf.nodes_facts(kc.call(apis, "list", "nodes", None, None, apis.core.list_node))

    try:
        kubeadm_config = cf.parse_kubeadm_config(get_configmap(*cf.KUBEADM_CONFIG))
    except cf.ClusterFactsError as exc:
        raise kc.K8sError("%s. It is written by 'kubeadm init' (phase upload-config); re-upload it with "
                          "'kubeadm init phase upload-config kubeadm' on a control-plane node." % exc) from None

    kubelet_config_name = client_ca_file = None
    security = {}
    dns = cf.parse_kubelet_config(None)
    for name in cf.kubelet_config_names(version["major"], version["minor"]):
        kubelet_cm = get_configmap(cf.KUBELET_CONFIG_NAMESPACE, name)
        if kubelet_cm is not None:
            kubelet_config_name = name
            try:
                dns = cf.parse_kubelet_config(kubelet_cm)
                client_ca_file = cf.kubelet_client_ca_file(kubelet_cm)
                security = cf.kubelet_security(kubelet_cm)
            except cf.ClusterFactsError as exc:
                raise kc.K8sError("%s (kube-system/%s); kubeadm join hands the same file to every new node, so "
                                  "fix it first." % (exc, name)) from None
            break
    dns["service"] = None
    for ref in cf.DNS_SERVICES:
        namespace, name = cf.split_ref(ref)
        service = kc.call(apis, "get", "services", namespace, name, apis.core.read_namespaced_service, name, namespace)
        if service is not None:
            dns["service"] = cf.dns_service_facts(service, ref)
            break

    # One list for the run: whether a node's renewal of its own client certificate is approved (preflight warns
    # when not). A kubeconfig that may not list them leaves it unknown (null) rather than failing the read.
    try:
        bindings = kc.call(apis, "list", "clusterrolebindings", None, None, apis.rbac.list_cluster_role_binding)
    except kc.K8sError as exc:
        if exc.status != 403:
            raise
        bindings = None
    renewal = None if bindings is None else cf.node_renewal_bindings(bindings)
    _credentials_in_place(apis, nodes, bindings, flannel["namespace"])

    result = {}
    if module.params["discovery"]:
        endpoint, pins = ci.read_details(apis)
        result["discovery"] = dict(api_server_endpoint=endpoint, ca_cert_hashes=pins)
    if module.params["pin_daemonsets"] is not None:
        # what k8s_daemonset_os_pin would do with these daemonsets, read here so that a run with nothing to pin
        # needs no module run of its own
        try:
            plan, landing = dso.survey(apis, module.params["pin_daemonsets"])
        except dso.DaemonSetPinError as exc:
            raise kc.K8sError("pin_daemonsets: %s" % exc) from None
        result["daemonset_pins"] = dict(to_pin=plan["to_pin"], conflicts=plan["conflicts"], missing=plan["missing"],
                                        landing_on_windows=landing)
    if module.params["pod_security"]:
        namespaces = kc.call(apis, "list", "namespaces", None, None, apis.core.list_namespace) or {}
        result["pod_security"] = pod_security.changes(namespaces.get("items"), flannel["namespace"])
    return dict(
        result,
        changed=False,
        server_version=version,
        flannel=flannel,
        calico=calico,
        nodes=nodes,
        kubeadm_config=kubeadm_config,
        kubelet_config_present=kubelet_config_name is not None,
        kubelet_config_name=kubelet_config_name,
        kubelet_client_ca_file=client_ca_file,
        kubelet_security=security,
        node_renewal_bindings=renewal,
        dns=dns,
    )
