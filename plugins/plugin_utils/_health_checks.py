# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The health check's findings about what the pod network needs on the host: its HNS endpoints, the CNI configuration
the runtime loads and the kubelet's client certificate (plugin_utils/_health.py judges the rest)."""

from __future__ import annotations

import json

from ansible_collections.kubewin.nodes.plugins.module_utils import _windows_paths as wp
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import network, runtime_cni

try:  # a requirement of ansible-core on the controller
    from cryptography import x509
except ImportError:  # pragma: no cover - only where ansible-core was installed without its requirements
    x509 = None

# The kubelet's client certificate (client-go util/certificate certificate_store.go: <pki dir>\kubelet-client-current
# .pem, the kubelet's --cert-dir default C:\var\lib\kubelet\pki), the credential of flanneld and kube-proxy too (they
# run with the kubelet's kubeconfig, docs/credentials.md). It holds the key too; the script returns the certificate.
KUBELET_CLIENT_CERT = wp.KUBELET_PKI + "\\kubelet-client-current.pem"
# The kubelet renews its certificate at 70-90 % of its life (client-go v0.37.2 util/certificate/certificate_manager.go
# nextRotationDeadline): one past 90 % should have been renewed.
RENEWED_BY = 0.9
CERT_WARN_DAYS = 30


def _check(check, status, detail, fix=None, repair=None):
    return {"check": check, "status": status, "detail": detail, "fix": fix, "repair": repair}


def endpoint_checks(view, node, pod_network, network_services):
    """The HNS endpoints the node's networking needs in the pod network: kube-proxy's source VIP on Overlay (a local
    endpoint with the VIP, made by kube-proxy's first sync: k8s.io/kubernetes v1.37.2 pkg/proxy/winkernel/proxier.go
    syncProxyRules newSourceVIP; without it no Service is programmed), the bridge endpoint <network>_ep on L2Bridge
    (flannel v0.26.7 pkg/backend/hostgw/hostgw_windows.go, made at flanneld's start; the node's route to its pods).
    Only in the services mode, where the collection sets kube-proxy's source VIP (network.source_vip)."""
    kind = (view["networks"] or {}).get(pod_network)
    if not network_services or kind is None:
        return []  # no network: its own finding, and its repair brings the endpoints back
    if view["endpoints"] is None:
        return [_check("HNS endpoints", "fail", "HNS endpoints could not be read: %s" % view["endpoints_error"],
                       "start the Host Network Service (Start-Service hns), then run playbooks/repair.yml")]
    net_id = view["network_ids"].get(pod_network, "")
    here = [e for e in view["endpoints"] if e["network"] == net_id]
    if str(kind).lower() == "overlay":
        try:
            vip = network.source_vip((node or {}).get("pod_cidr"))
        except network.NetworkConfigError:
            return []  # the Node (or its podCIDR) is missing: the node checks say so
        check = "source VIP endpoint %s" % vip
        if any(e["ip"] == vip for e in here):
            return [_check(check, "ok", "in %s" % pod_network)]
        return [_check(check, "fail", "kube-proxy's source VIP endpoint is missing from %s (removed, or kube-proxy's "
                       "sync failed): pods on this node cannot reach Services" % pod_network,
                       "run playbooks/repair.yml, which restarts kube-proxy (it makes the endpoint at its first sync; "
                       "if it stays missing, look for \"Source Vip endpoint creation failed\" in %s)"
                       % wp.LOG_FILES["kube-proxy"], "kube-proxy")]
    if str(kind).lower() == "l2bridge":
        name = pod_network + "_ep"
        check = "bridge endpoint %s" % name
        if any(e["name"] == name for e in here):
            return [_check(check, "ok", "in %s" % pod_network)]
        return [_check(check, "fail", "flanneld's bridge endpoint is missing from %s: the node cannot reach its pods"
                       % pod_network, "run playbooks/repair.yml, which restarts flanneld (it makes the endpoint at "
                       "start) and then kube-proxy", "flanneld")]
    return []


def cni_checks(view, container_runtime, pod_network):
    """The CNI configuration the runtime loads: the first file in name order of the directory it reads (containerd's
    from its config dump, cri-dockerd's from its command line: runtime_cni), which must be the collection's
    10-flannel.conf, valid JSON, naming the pod network (the network flannel's Windows plugin attaches pods to)."""
    check = "CNI configuration"
    fix = ("run playbooks/scale_up.yml, which writes %s (the runtime reads its directory again by itself)"
           % runtime_cni.CNI_CONF_FILE)
    dirs = runtime_cni.runtime_cni_dirs(container_runtime, view["services"])
    if dirs.get("error"):
        return [_check(check, "fail", "the runtime's CNI configuration directory is unknown: %s" % dirs["error"],
                       "look at the runtime's service and configuration (the service check above)")]
    conf_dir = dirs["conf_dir"]
    listing = next((files for d, files in view["cni_conf"].items()
                    if runtime_cni._norm(str(d)).lower() == conf_dir.lower()), None)
    if listing is None:
        return [_check(check, "fail", "%s was not read" % conf_dir, "run the check again")]
    names = sorted(n for n in listing if n.endswith(runtime_cni.CNI_CONF_EXTENSIONS))
    max_conf_num = 1
    if container_runtime == "containerd":
        dump = (view["services"].get("containerd") or {}).get("config_dump")
        max_conf_num = runtime_cni.containerd_max_conf_num(dump)
    path = "%s\\%s" % (conf_dir, runtime_cni.CNI_CONF_FILE)
    if runtime_cni.CNI_CONF_FILE not in names:
        return [_check(check, "fail", "%s is missing (%s): pods get no network" % (
            path, "the directory has %s" % ", ".join(names) if names else "the directory has no CNI configuration"),
            fix)]
    conflicts = runtime_cni.conf_dir_conflicts(names, max_conf_num)
    if conflicts:
        message = runtime_cni.conf_dir_conflict_message(conflicts, conf_dir, container_runtime, max_conf_num)
        return [_check(check, "fail", message,
                       "remove or rename it on the node (the runtime reads its directory again by itself)")]
    text = listing.get(runtime_cni.CNI_CONF_FILE)
    if text is None:
        return [_check(check, "fail", "%s is larger than 64 KiB, not the file the collection writes" % path, fix)]
    try:
        conf = json.loads(text)
    except ValueError as e:
        return [_check(check, "fail", "%s is not valid JSON (%s): the runtime cannot load it, so pods get no network"
                       % (path, e), fix)]
    if not isinstance(conf, dict) or conf.get("name") != pod_network:
        return [_check(check, "fail", "%s names the network %r, not the pod network %s" % (
            path, conf.get("name") if isinstance(conf, dict) else conf, pod_network), fix)]
    return [_check(check, "ok", "%s, loaded first" % path)]


def certificate_checks(view, node_name, warn_days, now):
    """The kubelet's client certificate, also flanneld's and kube-proxy's credential (they run with the kubelet's
    kubeconfig: no token of their own). The kubelet renews it at 70-90 % of its life; one with fewer than
    ``warn_days`` left that is past RENEWED_BY of its life was not renewed (a warning), an expired one is a failure.
    Returns (checks, not_after: ISO 8601 or None)."""
    check = "kubelet client certificate"
    entry = view["certificates"].get(KUBELET_CLIENT_CERT) or {}
    rejoin = ("the kubelet cannot renew an expired certificate: run playbooks/reset.yml --limit %s, then "
              "playbooks/scale_up.yml for it (docs/operations.md, \"Credentials after an outage\")" % node_name)
    if not entry.get("exists"):
        return [_check(check, "fail", "%s does not exist: the kubelet, flanneld and kube-proxy have no credential"
                       % KUBELET_CLIENT_CERT, "run playbooks/scale_up.yml, which joins the node")], None
    if entry.get("error"):
        return [_check(check, "fail", "%s could not be read (%s)" % (KUBELET_CLIENT_CERT, entry["error"]),
                       "check on the node that it links to an existing kubelet-client-<date>.pem in the same folder "
                       "(Get-Item shows its Target); if the kubelet's certificates are gone, %s" % rejoin)], None
    try:
        if x509 is None:
            raise ValueError("the controller's Python has no cryptography module")
        cert = x509.load_pem_x509_certificate(str(entry.get("certificate") or "").encode())
    except ValueError as e:
        return [_check(check, "fail", "%s holds no readable certificate (%s)" % (KUBELET_CLIENT_CERT, e), rejoin)], None
    not_before, not_after = cert.not_valid_before_utc, cert.not_valid_after_utc
    left = not_after - now
    stamp = not_after.strftime("%Y-%m-%dT%H:%M:%SZ")
    if left.total_seconds() <= 0:
        return [_check(check, "fail", "expired at %s: the kubelet, flanneld and kube-proxy (which run with its "
                       "kubeconfig) get 401 Unauthorized" % stamp, rejoin)], stamp
    life = (not_after - not_before).total_seconds()
    if left.total_seconds() < warn_days * 86400 and (life <= 0 or left.total_seconds() < (1 - RENEWED_BY) * life):
        return [_check(check, "warn", "expires at %s (in %d days) and was not renewed: the kubelet renews it at "
                       "70-90 %% of its life" % (stamp, left.days),
                       "look for certificate_manager errors in the kubelet's log (%s) and for Pending "
                       "CertificateSigningRequests of %s (kubectl get csr); once it has expired, %s"
                       % (wp.LOG_FILES["kubelet"], node_name, rejoin.split(": ", 1)[1]))], stamp
    return [_check(check, "ok", "valid until %s" % stamp)], stamp


# kube-proxy's ClusterIP load balancers (k8s.io/kubernetes v1.37.2 pkg/proxy/winkernel/proxier.go syncProxyRules): one
# HNS v2 load balancer per Service port and IPv4 ClusterIP, made only when the port has endpoints not all terminating.
PROTOCOLS = {"TCP": 6, "UDP": 17}
PROXY_NAME_LABEL = "service.kubernetes.io/service-proxy-name"  # a Service another proxy serves (kube-proxy skips it)


def expected_load_balancers(services):
    """``services``: {services: [v1 Service], endpointslices: [discovery/v1 EndpointSlice]} as the API returned them
    -> the "ClusterIP:port/protocol" kube-proxy programs on every node: each port of a Service kube-proxy serves (a
    ClusterIP, no service-proxy-name label) with an endpoint whose ready condition is not false in an EndpointSlice of
    the Service with that port name. Services with internalTrafficPolicy Local depend on the node's own endpoints, so
    they are left out, as are SCTP ports (not on Windows)."""
    slices = {}
    for s in services.get("endpointslices") or []:
        meta = s.get("metadata") or {}
        owner = (meta.get("labels") or {}).get("kubernetes.io/service-name")
        ready = any((e.get("conditions") or {}).get("ready") is not False for e in s.get("endpoints") or [])
        if owner and ready:
            for p in s.get("ports") or []:
                slices.setdefault((meta.get("namespace"), owner), set()).add(p.get("name") or "")
    out = set()
    for svc in services.get("services") or []:
        meta, spec = svc.get("metadata") or {}, svc.get("spec") or {}
        if PROXY_NAME_LABEL in (meta.get("labels") or {}) or spec.get("internalTrafficPolicy") == "Local":
            continue
        ips = [ip for ip in spec.get("clusterIPs") or [spec.get("clusterIP")] if ip and ip != "None" and ":" not in ip]
        ready_ports = slices.get((meta.get("namespace"), meta.get("name")), set())
        for port in spec.get("ports") or []:
            proto = port.get("protocol") or "TCP"
            if proto in PROTOCOLS and (port.get("name") or "") in ready_ports:
                out.update("%s:%s/%s" % (ip, port.get("port"), proto) for ip in ips)
    return out


def present_load_balancers(load_balancers):
    """The HNS v2 load balancers' properties (JSON texts) -> the "VIP:port/protocol" they serve."""
    names = {n: p for p, n in PROTOCOLS.items()}
    out = set()
    for text in load_balancers:
        lb = json.loads(text) if isinstance(text, str) else text
        for m in (lb or {}).get("PortMappings") or []:
            for vip in lb.get("FrontendVIPs") or []:
                out.add("%s:%s/%s" % (vip, m.get("ExternalPort"), names.get(m.get("Protocol"), m.get("Protocol"))))
    return out


# How long a ClusterIP:port may have no load balancer before it is a failure: kube-proxy's own health timeout, twice its
# sync period (cmd/kube-proxy/app/server.go: NewProxierHealthServer(..., 2*config.SyncPeriod.Duration); the collection
# passes no --sync-period, so 30 s, the default). After a start (a reboot) or a change, winkernel's syncProxyRules
# makes the load balancers one Service port after another through HNS calls, so a node with many Services has some
# missing for a while: a check that finds them missing says so (warn) and is made again (roles/health/tasks/main.yml).
LOAD_BALANCER_WAIT = 60


def load_balancer_checks(view, services, pod_network, network_services, missing_since=None, now=None,
                         wait=LOAD_BALANCER_WAIT):
    """The cluster's ClusterIP:ports (read from the API, ``services``) against kube-proxy's HNS load balancers. Not
    checked without ``services``, or when the pod network is missing (its own finding: kube-proxy's restart that brings
    it back programs them all). ``missing_since``: {"VIP:port/protocol": epoch seconds} of an earlier check of the run
    (its ``load_balancers_missing_since``); ``now``: epoch seconds. A ClusterIP:port missing now fails only when it
    was missing ``wait`` seconds before too; one missing for less is a warning (kube-proxy may still be programming
    it, or its Service changed since the read). Returns (checks, {key: since} of the keys missing now)."""
    if services is None or pod_network not in (view["networks"] or {}):
        return [], {}
    check = "kube-proxy load balancers"
    if view.get("load_balancers") is None:
        return [_check(check, "fail", "HNS load balancers could not be read: %s" % view.get("load_balancers_error"),
                       "look at the Host Network Service (Get-Service hns; hnsdiag list loadbalancers)")], {}
    try:
        present = present_load_balancers(view["load_balancers"])
    except (ValueError, AttributeError, TypeError) as e:
        return [_check(check, "fail", "HNS answered load balancers that cannot be read: %s" % e,
                       "look at the Host Network Service (hnsdiag list loadbalancers)")], {}
    wanted = expected_load_balancers(services)
    missing = sorted(wanted - present)
    if not missing:
        return [_check(check, "ok", "all %d ClusterIP:port(s) with endpoints" % len(wanted))], {}
    since = {k: float((missing_since or {}).get(k, now)) for k in missing}
    lasting = [k for k in missing if now - since[k] >= wait]

    def listed(keys):
        return ", ".join(keys[:5]) + (", ..." if len(keys) > 5 else "")
    if not lasting:
        return [_check(check, "warn", "%d of %d ClusterIP:port(s) with endpoints have no load balancer in HNS yet "
                       "(%s): kube-proxy makes them one Service at a time after its start or a change, so they are "
                       "checked again for up to %d s (twice its sync period)"
                       % (len(missing), len(wanted), listed(missing), wait),
                       "none if they appear; if they are still missing then, the check fails and says what to do")], \
            since
    fix = ("run playbooks/repair.yml, which restarts kube-proxy (it programs every load balancer at start, not one "
           "HNS lost later: kubernetes/kubernetes#135802)" if network_services else
           "delete this node's kube-proxy pod, which programs every load balancer at start")
    return [_check(check, "fail", "%d of %d ClusterIP:port(s) with endpoints have had no load balancer in HNS for %d s "
                   "or more (%s): pods on this node cannot reach those Services"
                   % (len(lasting), len(wanted), wait, listed(lasting)),
                   fix, "kube-proxy" if network_services else None)], since
