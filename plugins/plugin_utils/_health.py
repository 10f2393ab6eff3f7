# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The health check of a Windows node, judged on the controller: findings, the repair plan and the report."""

from __future__ import annotations

import datetime

from ansible_collections.kubewin.nodes.plugins.plugin_utils._health_checks import (  # noqa: F401 (the module's API)
    CERT_WARN_DAYS,
    KUBELET_CLIENT_CERT,
    LOAD_BALANCER_WAIT,
    _check,
    certificate_checks,
    cni_checks,
    endpoint_checks,
    load_balancer_checks,
)
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import docker, hns, runtime_cni, runtimes

SCHEMA = "kubewin.nodes/health/v1"
# The repair steps in dependency order (the services' DependOnService chain): the runtime, Docker restarted (dockerd
# makes the NAT networks of its store that HNS lost again at start), Docker's network host (made through the running
# dockerd), the kubelet, flanneld (which recreates its HNS network at start), kube-proxy (which re-applies every load
# balancer only at start: proxier.go svcInfo.policyApplied).
REPAIR_ORDER = ("runtime", "docker-restart", "docker-network", "kubelet", "flanneld", "kube-proxy")
# SERVICE_AUTO_START (Microsoft Learn, CreateServiceW dwStartType); the roles register every node service so.
AUTO_START = 2
DISABLED = 4


# The container runtime's services: installed by the operator, not registered by any role of the collection.
_RUNTIME_SERVICES = ("containerd", "docker", "cri-dockerd")


def _disabled_fix(name):
    if name in _RUNTIME_SERVICES:  # scale_up.yml does not register these (review-s7 R4)
        return ("%s is Disabled, which the repair does not change: on the node, Set-Service %s -StartupType "
                "Automatic; Start-Service %s, then run playbooks/repair.yml" % (name, name, name))
    return ("%s is Disabled, which the repair does not change: run playbooks/scale_up.yml, which registers it "
            "Automatic, then playbooks/repair.yml" % name)


def script_parameters(container_runtime, network_services=True):
    """The node_health script's parameters for a node of ``container_runtime``: its services, the runtime's CNI
    configuration directories (as node_facts finds them) and the kubelet's client certificate."""
    runtime = runtimes.RUNTIMES[container_runtime]
    services = list(dict.fromkeys([runtime["service"], runtime["cri_service"]])) + ["kubelet"]
    if network_services:
        services += ["flanneld", "kube-proxy"]
    return {"Services": services, "DockerService": docker.SERVICE if container_runtime == "docker" else "",
            "ConfigDumpOf": ["containerd"] if container_runtime == "containerd" else [],
            "ConfigFlagPattern": runtime_cni.CONTAINERD_CONFIG_FLAG,
            "CniConfDirs": [runtime_cni.CNI_CONF_DIRS[container_runtime]],
            "ConfDirPattern": runtime_cni.CONTAINERD_CONF_DIR_PATTERN,
            "DockerConfDirPattern": runtime_cni.CRI_DOCKERD_CONF_DIR_PATTERN,
            "CertificateFiles": [KUBELET_CLIENT_CERT]}


def host_view(answer):
    """The node_health script's answer -> {services: {name: {...}}, networks: {name: type} or None, network_ids:
    {name: ID}, hns_error, endpoints: [{name, ip, network}] (network: the ID, lower case) or None, endpoints_error,
    cni_conf: {directory: {file: text or None}}, certificates: {path: {exists, certificate}}, docker_networks: [name]
    or None, docker_error}."""
    networks, ids, error = None, {}, answer.get("hns_error")
    if not error:
        try:
            raw = hns.parse_response(answer.get("networks"), "GET /networks/")
            networks = {str(n.get("Name")): n.get("Type") for n in raw}
            ids = {str(n.get("Name")): str(n.get("ID") or "").lower() for n in raw}
        except hns.HnsError as e:
            error = str(e)
    endpoints, endpoints_error = None, answer.get("endpoints_error") or error
    if networks is not None and not endpoints_error:
        try:
            endpoints = [{"name": e.get("Name"), "ip": e.get("IPAddress"),
                          "network": str(e.get("VirtualNetwork") or "").lower()}
                         for e in hns.parse_response(answer.get("endpoints"), "GET /endpoints/")]
        except hns.HnsError as e:
            endpoints_error = str(e)
    lbs = answer.get("load_balancers")
    docker_networks = answer.get("docker_networks")
    return {"load_balancers": None if lbs is None else list(lbs if isinstance(lbs, list) else [lbs]),
            "load_balancers_error": answer.get("load_balancers_error") or error,
            "services": dict(answer.get("services") or {}), "networks": networks, "network_ids": ids,
            "hns_error": error, "endpoints": endpoints, "endpoints_error": endpoints_error,
            "cni_conf": dict(answer.get("cni_conf") or {}), "certificates": dict(answer.get("certificates") or {}),
            "docker_networks": None if docker_networks is None else [str(n) for n in docker_networks],
            "docker_error": answer.get("docker_error")}


def _service_checks(services, runtime_services, network_services):
    wanted = [(name, "runtime") for name in runtime_services] + [("kubelet", "kubelet")]
    if network_services:
        wanted += [("flanneld", "flanneld"), ("kube-proxy", "kube-proxy")]
    out = []
    for name, step in wanted:
        svc = services.get(name) or {}
        check = "service %s" % name
        if not svc.get("exists"):
            out.append(_check(check, "fail", "the service does not exist",
                              "run playbooks/scale_up.yml, which registers it"))
            continue
        if svc.get("start") != AUTO_START or svc.get("delayed_autostart"):
            out.append(_check(check, "fail", "start mode is %s, not Automatic" % _start_mode(svc),
                              "run playbooks/scale_up.yml, which registers it Automatic (not delayed)"))
        if svc.get("status") != "Running" and svc.get("start") == DISABLED:
            # The repair cannot start it (win_service: ERROR_SERVICE_DISABLED, 1058), so it is left to the operator.
            out.append(_check(check, "fail", "%s, not Running" % svc.get("status"), _disabled_fix(name)))
        elif svc.get("status") != "Running":
            out.append(_check(check, "fail", "%s, not Running" % svc.get("status"),
                              "run playbooks/repair.yml, which starts the node services in their order", step))
        elif svc.get("start") == AUTO_START and not svc.get("delayed_autostart"):
            out.append(_check(check, "ok", "Running, Automatic"))
    return out


def _start_mode(svc):
    start = svc.get("start")
    if start == AUTO_START and svc.get("delayed_autostart"):
        return "Automatic (delayed)"
    return {3: "Manual", 4: "Disabled"}.get(start, str(start))


def _network_checks(view, pod_network, external_network, network_services):
    if view["networks"] is None:
        return [_check("HNS networks", "fail", "HNS could not be read: %s" % view["hns_error"],
                       "start the Host Network Service (Start-Service hns), then run playbooks/repair.yml")]
    out = []
    if pod_network in view["networks"]:
        out.append(_check("pod network %s" % pod_network, "ok", "present (%s)" % view["networks"][pod_network]))
    elif network_services:
        out.append(_check("pod network %s" % pod_network, "fail",
                          "missing from HNS (HNS restarted, or flanneld failed)",
                          "run playbooks/repair.yml, which restarts flanneld and then kube-proxy", "flanneld"))
    else:
        out.append(_check("pod network %s" % pod_network, "fail", "missing from HNS",
                          "delete this node's kube-flannel pod so that its DaemonSet starts it again"))
    if external_network:
        if external_network in view["networks"]:
            out.append(_check("network %s" % external_network, "ok",
                              "present (%s)" % view["networks"][external_network]))
        else:
            out.append(_check("network %s" % external_network, "fail", "missing from HNS",
                              "run playbooks/scale_up.yml --tags network, which creates it and waits for the host"))
    return out


def _docker_checks(view):
    """Docker's network host: in Docker's own store (docker.py: a network made through HNS while dockerd runs is
    not), which hostNetwork pods' sandboxes need, and, while dockerd runs, in HNS (review-s7 R2: a store that still
    lists host after HNS lost it, at an HNS restart or a removal beside Docker, reads healthy through docker.exe)."""
    check = "Docker network %s" % docker.HOST_NETWORK
    if view.get("docker_networks") is None:
        # The repair's runtime step starts a stopped Docker first; then its own step makes host if still missing
        # (review-s7 R3: without it the re-check waited out its timeout on a store that never had host).
        return [_check(check, "fail", "Docker's networks could not be read: %s" % view.get("docker_error"),
                       "run playbooks/repair.yml, which starts the docker service and makes the network through "
                       "Docker if it is missing", "docker-network")]
    if docker.HOST_NETWORK not in view["docker_networks"]:
        return [_check(check, "fail", "not in Docker's networks (docker network ls): hostNetwork pods cannot start",
                       "run playbooks/repair.yml, which makes it through Docker (docker network create -d nat host)",
                       "docker-network")]
    out = [_check(check, "ok", "in Docker's networks")]
    running = (view["services"].get(docker.SERVICE) or {}).get("status") == "Running"
    if view["networks"] is None or not running:
        return out  # HNS unreadable is its own finding; a stopped dockerd makes its networks again at its start
    hns_check = "HNS network %s" % docker.HOST_NETWORK
    kind = view["networks"].get(docker.HOST_NETWORK)
    if kind is None:
        out.append(_check(hns_check, "fail", "missing from HNS while dockerd runs with it in its store (HNS restarted, "
                          "or the network was removed beside Docker): hostNetwork pods' sandboxes fail",
                          "run playbooks/repair.yml, which restarts Docker and the services that depend on it (dockerd "
                          "makes the NAT networks of its store that HNS lost again at start; its containers restart)",
                          "docker-restart"))
    elif str(kind).lower() != "nat":
        out.append(_check(hns_check, "fail", "type %s in HNS, not NAT" % kind,
                          "remove the HNS network host (kubewin.nodes.win_hns_cleanup), then run playbooks/repair.yml"))
    else:
        out.append(_check(hns_check, "ok", "present (NAT)"))
    return out


def _condition(node, kind):
    return next((c for c in node.get("conditions") or [] if c.get("type") == kind), None)


def _node_checks(node, node_name):
    if not node.get("exists"):
        return [_check("node", "fail", node.get("error") or "Node %s is not registered" % node_name,
                       "look at the kubelet's log (C:\\var\\log\\kubelet\\kubelet.log), or run playbooks/scale_up.yml")]
    out = []
    ready = _condition(node, "Ready") or {}
    reason = ": ".join(str(x) for x in (ready.get("reason"), ready.get("message")) if x)
    if ready.get("status") == "True":
        out.append(_check("node Ready", "ok", "True"))
    else:
        detail = "%s (%s)" % (ready.get("status"), reason) if reason else ready.get("status") or "not reported"
        out.append(_check("node Ready", "fail", detail,
                          "look at the kubelet service and its log (C:\\var\\log\\kubelet\\kubelet.log)"))
    unavailable = _condition(node, "NetworkUnavailable")
    if unavailable and unavailable.get("status") != "False":
        out.append(_check("node NetworkUnavailable", "fail", str(unavailable.get("status")),
                          "flanneld clears it once it has the node's subnet: run playbooks/repair.yml", "flanneld"))
    else:
        out.append(_check("node NetworkUnavailable", "ok", "False" if unavailable else "not set"))
    if node.get("unschedulable"):
        out.append(_check("node schedulable", "warn", "cordoned",
                          "kubectl uncordon %s once the work it was cordoned for is done" % node_name))
    else:
        out.append(_check("node schedulable", "ok", "yes"))
    return out


def judge(view, node, node_name, pod_network, runtime_services, external_network=None, network_services=True,
          docker_host=False, container_runtime=None, cert_warn_days=CERT_WARN_DAYS, now=None, services=None,
          load_balancers_missing_since=None, load_balancer_wait=LOAD_BALANCER_WAIT):
    """The findings for one node: ``view`` (host_view), ``node`` (k8s_node's node result); ``docker_host``: Docker's
    network host is checked too; ``container_runtime``: the CNI configuration it loads is checked (None: not);
    ``now``: the time the certificate is judged at (UTC; default the controller's clock); ``services``: the cluster's
    Services and EndpointSlices (load_balancer_checks; None: not checked), ``load_balancers_missing_since`` the
    ClusterIP:ports an earlier check of the run found without a load balancer, and since when, and
    ``load_balancer_wait`` how long they may be. Returns {healthy, checks: [{check, status ok|warn|fail, detail, fix,
    repair}], repair: the plan, certificates: {name: notAfter}, load_balancers_missing_since: {key: epoch seconds},
    load_balancers_pending: whether some are missing for less than the wait (check again)}."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    cert_checks, not_after = certificate_checks(view, node_name, cert_warn_days, now)
    lb_checks, lb_missing = load_balancer_checks(view, services, pod_network, network_services,
                                                 load_balancers_missing_since, now.timestamp(), load_balancer_wait)
    checks = (_service_checks(view["services"], runtime_services, network_services)
              + _network_checks(view, pod_network, external_network, network_services)
              + endpoint_checks(view, node, pod_network, network_services)
              + lb_checks
              + (_docker_checks(view) if docker_host else [])
              + (cni_checks(view, container_runtime, pod_network) if container_runtime else [])
              + cert_checks
              + _node_checks(node or {}, node_name))
    checks = _leave_blocked_steps(checks, view["services"], runtime_services)
    return {"healthy": not any(c["status"] == "fail" for c in checks), "checks": checks,
            "repair": repair_plan(checks), "certificates": {"kubelet client": not_after},
            "load_balancers_missing_since": lb_missing,
            "load_balancers_pending": any(c["check"] == "kube-proxy load balancers" and c["status"] == "warn"
                                          for c in checks)}


def _leave_blocked_steps(checks, services, runtime_services):
    """The checks, those whose repair step would start a Disabled service left to the operator: Windows starts no
    Disabled service (ERROR_SERVICE_DISABLED), nor one whose dependency is Disabled and stopped (1068,
    ERROR_SERVICE_DEPENDENCY_FAIL: each step's services depend on the step before, REPAIR_ORDER), and a failed
    win_service task would end the repair of that host."""
    def disabled(name):
        return (services.get(name) or {}).get("start") == DISABLED

    def down(name):  # Disabled and not running: nothing the repair may start
        return disabled(name) and (services.get(name) or {}).get("status") != "Running"

    # What each step starts itself; what must run for it: the earlier steps' services, except for docker-network,
    # which starts none and needs only dockerd (a Disabled cri-dockerd does not block it: review-s7 R5).
    own = {"runtime": list(runtime_services), "docker-restart": [docker.SERVICE], "docker-network": [],
           "kubelet": ["kubelet"], "flanneld": ["flanneld"], "kube-proxy": ["kube-proxy"]}
    needs = {"docker-network": [docker.SERVICE]}
    blocked, earlier = {}, []
    for step in REPAIR_ORDER:
        blocker = (next((n for n in own[step] if disabled(n)), None)
                   or next((n for n in needs.get(step, earlier) if down(n)), None))
        if blocker:
            blocked[step] = blocker
        earlier = earlier + own[step]
    # flanneld's restart brings kube-proxy's with it (repair_plan), so a blocked kube-proxy blocks flanneld's step
    if "kube-proxy" in blocked:
        blocked.setdefault("flanneld", blocked["kube-proxy"])
    return [dict(c, repair=None, fix=_disabled_fix(blocked[c["repair"]])) if c.get("repair") in blocked else c
            for c in checks]


def repair_plan(checks):
    """The repair steps the failed checks ask for, in REPAIR_ORDER. flanneld's restart brings kube-proxy's with it:
    kube-proxy v1.37 re-applies its load balancers by itself only once it sees the network under a new ID
    (pkg/proxy/winkernel/proxier.go syncProxyRules), so a restart at start-up is the step that does not depend on
    when its next sync comes or on the network's ID (a host-gw network kept with its ID is never re-applied)."""
    steps = {c["repair"] for c in checks if c["status"] == "fail" and c.get("repair")}
    if "flanneld" in steps:
        steps.add("kube-proxy")
    return [s for s in REPAIR_ORDER if s in steps]


def report(results):
    """{inventory host: the health result of that host, or None when there is none (unreachable, or failed before
    the check)} -> the machine-readable report (schema kubewin.nodes/health/v1)."""
    nodes = []
    for host in sorted(results):
        res = results[host]
        if not isinstance(res, dict) or "checks" not in res:
            nodes.append({"host": host, "node": None, "healthy": False, "repaired": [], "certificates": {}, "checks": [
                _check("host", "fail", "no health result: unreachable, or a task failed before the check",
                       "look at the run's output for this host")]})
            continue
        nodes.append({"host": host, "node": res.get("node_name"), "healthy": bool(res.get("healthy")),
                      "repaired": list(res.get("repaired") or []),
                      # notAfter (ISO 8601, UTC) of each credential read, for monitoring (null: not read)
                      "certificates": dict(res.get("certificates") or {}),
                      "checks": [{k: c.get(k) for k in ("check", "status", "detail", "fix")} for c in res["checks"]]})
    return {"schema": SCHEMA, "healthy": all(n["healthy"] for n in nodes), "nodes": nodes}


def table(doc):
    """The report as text lines: node, check, status, detail, fix (columns padded to the widest cell)."""
    rows = [("NODE", "CHECK", "STATUS", "DETAIL", "FIX")]
    for n in doc["nodes"]:
        for c in n["checks"]:
            rows.append((n["node"] or n["host"], c["check"], c["status"], c["detail"] or "", c["fix"] or ""))
    widths = [max(len(str(r[i])) for r in rows) for i in range(4)]
    return ["  ".join([str(r[i]).ljust(widths[i]) for i in range(4)] + [str(r[4])]).rstrip() for r in rows]
