# Test-lab only: stand-in kube-proxy.exe, nssm.exe and flanneld.exe run as (or under) Windows services.
"""The node components besides the kubelet, as the Service Control Manager and NSSM run them.

- ``kube-proxy``: answers the SCM only with ``--windows-service`` (pkg/windows/service, registered by
  cmd/kube-proxy/app/init_windows.go); without it SCM gives up (1053). It needs its kubeconfig and a
  network name (``--network-name`` or ``KUBE_NETWORK``); at start-up it removes the HNS policy
  lists (load balancers) and then waits, as long as it takes, for that HNS network to exist; on an
  Overlay network it then checks WinOverlay, --source-vip and the host MAC (see below). Its command
  line first goes through the real kube-proxy.exe of that version under Wine (winsim_wine).
- ``nssm``: the service wrapper. ImagePath is nssm.exe alone; on start it reads the service's
  ``Parameters`` key (Application, AppParameters, AppDirectory, AppEnvironment, AppEnvironmentExtra,
  AppStdout, AppStderr) and runs the application as a plain process.
- ``flanneld``: no Windows service code (started directly by SCM: 1053). Its command line,
  environment and files first go through the real flanneld.exe of that version under Wine up to its
  first API call (winsim_wine.flanneld_validate). Under NSSM it then does what
  flanneld does on Windows with ``--kube-subnet-mgr``: reads net-conf.json, takes the node's podCIDR
  from the lab's real API server (node annotations patched like the kube subnet manager does),
  creates the HNS network (reusing winsim_hns.flannel_network) and writes subnet.env.

What runs is recorded in ``state["processes"]`` (by service name, lower case); stopping the service
drops the record and leaves everything else (flanneld's networks stay, as with the real one).

Sources read for this: flannel-io/flannel pkg/subnet/kube/kube.go (NODE_NAME, AcquireLease: "pod cidr
not assigned", annotations patched on nodes/status), pkg/backend/vxlan/vxlan_windows.go and
device_windows.go (VNI >= 4096, port 4789 only, network flannel.<VNI> reused when type and prefix
match, otherwise deleted and recreated), vxlan_network_windows.go (MTU = interface MTU - 50),
pkg/subnet WriteSubnetFile (first address of the subnet); k8s.io/kubernetes v1.37.2
pkg/proxy/winkernel/proxier.go (newProxierInternal) and cmd/kube-proxy/app/server.go. NSSM from
memory of its sources (nssm 2.24 service.cpp/registry.cpp): see the comments where a detail is
uncertain.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import ntpath
import os
import re

from ansible_collections.ansible.windows.plugins.module_utils import winsim_binaries as binaries
from ansible_collections.ansible.windows.plugins.module_utils import winsim_hns, winsim_wine
from ansible_collections.ansible.windows.plugins.module_utils.winsim_cmdline import (
    nssm_command_line,
    split_command_line,
)
from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError

NOT_FOUND = "The system cannot find the file specified."
SERVICE_TIMEOUT = "1053: The service did not respond to the start or control request in a timely fashion."


def processes(state):
    return state.setdefault("processes", {})


def service_environment(host, svc):
    """The environment a service process starts with: the machine environment plus the service's
    own ``Environment`` value. Names are case-insensitive: {UPPER: (Name, value)}."""
    env = {}
    for k, v in (host.state.get("env") or {}).items():
        env[k.upper()] = (k, v)
    for item in svc.get("environment") or []:
        k, _, v = str(item).partition("=")
        if k:
            env[k.upper()] = (k, v)
    return env


def _getenv(env, name):
    return (env.get(name.upper()) or (None, ""))[1]


def _exists(host, win_path):
    try:
        return os.path.isfile(host.local_path(win_path))
    except SimError:
        return False


def go_stat_error(path):
    """os.Stat on a missing file, as Go on Windows words it (the last call tried is CreateFile)."""
    return "CreateFile %s: %s" % (path, NOT_FOUND)


# --- command lines ------------------------------------------------------------------------------
def pflag_parse(args, bools):
    """spf13/pflag as kube-proxy uses it: --name=value, --name value, boolean --name, to read the
    values the simulation needs. Unknown names pass here: the real kube-proxy.exe of the version
    under Wine (_kube_proxy_real_check) is what refuses an unknown flag or feature gate."""
    flags, i = {}, 0
    while i < len(args):
        a = args[i]
        if not a.startswith("-") or a in ("-", "--"):
            i += 1
            continue
        name, sep, value = a.lstrip("-").partition("=")
        if sep:
            flags[name] = value
        elif name in bools:
            flags[name] = "true"
        elif i + 1 < len(args):
            flags[name] = args[i + 1]
            i += 1
        else:
            raise binaries.ProcessExit("flag needs an argument: --%s" % name, 1)
        i += 1
    return flags


def go_flag_parse(args, spec, prog):
    """Go's standard flag package (flanneld): -name or --name, -name=value, -name value for
    non-booleans; parsing stops at the first non-flag argument; an unknown flag exits with code 2."""
    flags, i = {}, 0
    while i < len(args):
        a = args[i]
        if len(a) < 2 or not a.startswith("-"):
            break
        if a == "--":
            break
        name, sep, value = a[2:].partition("=") if a.startswith("--") else a[1:].partition("=")
        kind = spec.get(name)
        if kind is None:
            raise binaries.ProcessExit("flag provided but not defined: -%s\nUsage: %s [OPTION]..." % (name, prog), 2)
        if kind == "bool":
            if sep:
                if value not in ("1", "t", "T", "TRUE", "true", "True", "0", "f", "F", "FALSE", "false", "False"):
                    raise binaries.ProcessExit('invalid boolean value "%s" for -%s: parse error' % (value, name), 2)
                value = "true" if value in ("1", "t", "T", "TRUE", "true", "True") else "false"
            else:
                value = "true"
        elif not sep:
            if i + 1 >= len(args):
                raise binaries.ProcessExit("flag needs an argument: -%s" % name, 2)
            value = args[i + 1]
            i += 1
        if kind == "int":
            try:
                int(value)
            except ValueError:
                raise binaries.ProcessExit('invalid value "%s" for flag -%s: parse error' % (value, name), 2) from None
        if kind == "slice":
            flags.setdefault(name, []).append(value)
        else:
            flags[name] = value
        i += 1
    return flags


# --- kube-proxy ---------------------------------------------------------------------------------
# pflag's boolean flags of kube-proxy, only for a version without a Windows build in the lab's cache
KUBE_PROXY_BOOLS = {"windows-service", "masquerade-all", "cleanup", "profiling", "version", "help", "h",
                    "bind-address-hard-fail", "init-only", "enable-dsr", "logtostderr", "alsologtostderr",
                    "one-output", "skip-headers", "skip-log-headers", "add-dir-header"}


def _kube_proxy_run(host, version, flags, env, service_name):
    """kube-proxy's start-up on Windows (kernelspace proxier, HNS); raises ProcessExit when it exits."""
    mode = flags.get("proxy-mode", "")
    if mode not in ("", "kernelspace"):
        # Validation on Windows accepts kernelspace only (userspace is gone since 1.26).
        raise binaries.ProcessExit('failed validate: proxyMode: Invalid value: "%s": must be kernelspace or ""'
                                   % mode)
    kubeconfig = flags.get("kubeconfig", "")
    if flags.get("config"):
        raise SimError("winsim: kube-proxy --config is not simulated (use flags)")
    if not kubeconfig and not flags.get("master"):
        raise binaries.ProcessExit('"Error running ProxyServer" err="unable to load in-cluster configuration, '
                                   'KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined"')
    if kubeconfig and not _exists(host, kubeconfig):
        # clientcmd: an explicit kubeconfig path that does not exist is the os.Stat error itself.
        raise binaries.ProcessExit('"Error running ProxyServer" err="%s"' % go_stat_error(kubeconfig))
    network = flags.get("network-name") or _getenv(env, "KUBE_NETWORK")
    if not network:
        raise binaries.ProcessExit('"Error running ProxyServer" err="Environment variable KUBE_NETWORK and '
                                   'network-flag not initialized"')
    # "Cleaning up old HNS policy lists" before looking for the network. Uncertain for current
    # releases: kube-proxy now manages load balancers through the HNS v2 API; the v1 view of those
    # load balancers is the policy lists, which is what winsim models.
    hns = host.state.setdefault("hns", {"networks": [], "endpoints": [], "policylists": [], "vswitches": {},
                                        "blips": []})
    removed = len(hns.get("policylists") or [])
    hns["policylists"] = []
    processes(host.state)[service_name.lower()] = {
        "program": "kube-proxy", "version": version, "network_name": network,
        "hostname_override": flags.get("hostname-override"), "kubeconfig": kubeconfig,
        "source_vip": flags.get("source-vip"), "feature_gates": flags.get("feature-gates"),
        "policylists_removed": removed,
        # getNetworkInfo loops ("Unable to find HNS Network specified") until the network exists:
        # see network_ready() for what the proxy sees now, and kube_proxy_network_found().
    }
    record = processes(host.state)[service_name.lower()]
    if network_ready(host.state, record):
        try:
            _kube_proxy_found_network(host, record)
        except binaries.ProcessExit:
            processes(host.state).pop(service_name.lower(), None)
            raise
        kube_proxy_list(host, record)


# kube-proxy's informers (k8s.io/kubernetes v1.37.2 cmd/kube-proxy/app/server.go L564-620), listed through the real
# API server with the kubeconfig kube-proxy runs with: Services with the label selector
# !service.kubernetes.io/service-proxy-name and the field selector spec.clusterIP!=None (L603-609), EndpointSlices with
# !service.kubernetes.io/headless (L591-596), ServiceCIDRs (L617-620: MultiCIDRServiceAllocator, GA and locked on
# from 1.35, pkg/features/kube_features.go). A list the API refuses leaves that informer unsynced (client-go v0.37.2
# tools/cache/reflector.go L747 "failed to list <type>: <err>", retried), and the proxier programs nothing until
# Services and EndpointSlices were received (pkg/proxy/winkernel/proxier.go L1190-1193 "Not syncing hns until
# Services and Endpoints have been received from master"). winsim: the lists run when kube-proxy found its network
# and again on kube_proxy_list (the informers' re-list, which the real kube-proxy does on its own); "programs nothing"
# is the record's sync_error and no "synced"; a sync programs the ClusterIP load balancers (_program_load_balancers).
KUBE_PROXY_LISTS = (
    ("*v1.Service", "/api/v1/services?labelSelector=%21service.kubernetes.io%2Fservice-proxy-name"
                    "&fieldSelector=spec.clusterIP%21%3DNone"),
    ("*v1.EndpointSlice", "/apis/discovery.k8s.io/v1/endpointslices?labelSelector=%21service.kubernetes.io%2Fheadless"),
    ("*v1.ServiceCIDR", "/apis/networking.k8s.io/v1/servicecidrs"),
)


def kube_proxy_list(host, record=None):
    """kube-proxy's informers list what it proxies through the real API (see KUBE_PROXY_LISTS): ``synced`` holds the
    number of each type, or ``sync_error`` the API's refusal (401, 403) and nothing is synced. Without ``record``,
    every running kube-proxy that found its network lists again."""
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_kube
    records = [record] if record is not None else [
        r for r in processes(host.state).values() if r.get("program") == "kube-proxy" and r.get("network_checked")]
    for rec in records:
        rec.pop("synced", None)
        if str(rec.get("sync_error") or "").startswith('"Source Vip'):
            continue  # the first sync already failed on the network (above)
        rec.pop("sync_error", None)
        try:
            api = winsim_kube._api_from_kubeconfig(host, rec["kubeconfig"])
        except (OSError, KeyError, TypeError, ValueError, IndexError) as e:
            rec["sync_error"] = "failed to build a client from %s: %s" % (rec.get("kubeconfig"), e)
            continue
        counts, errors, items = {}, {}, {}
        try:
            for kind, path in KUBE_PROXY_LISTS:
                try:
                    code, answer = api.request("GET", path)
                except SimError as e:  # the API server unreachable: the informer retries, nothing synced
                    code, answer = 0, {"message": str(e)}
                if code == 0 or code >= 400:
                    errors[kind] = '"Failed to watch" err="failed to list %s: %s" (%s)' % (
                        kind, (answer or {}).get("message") or code, code or "no answer")
                else:
                    items[kind] = (answer or {}).get("items") or []
                    counts[kind] = len(items[kind])
        finally:
            api.close()
        if errors:
            rec["list_errors"] = errors
        else:
            rec.pop("list_errors", None)
        # Only Services and EndpointSlices gate the proxier's first sync (setInitialized in OnServiceSynced and
        # OnEndpointSlicesSynced, proxier.go); a refused ServiceCIDR list is logged and does not stop it.
        blocking = [errors[k] for k in ("*v1.Service", "*v1.EndpointSlice") if k in errors]
        if blocking:
            rec["sync_error"] = "%s; Not syncing hns until Services and Endpoints have been received from master" \
                % "; ".join(blocking)
        else:
            rec["synced"] = counts
            _program_load_balancers(host, rec, items["*v1.Service"], items["*v1.EndpointSlice"])


# syncProxyRules' ClusterIP load balancers (k8s.io/kubernetes v1.37.2 pkg/proxy/winkernel/proxier.go): one HNS v2 load
# balancer per Service port and ClusterIP (FrontendVIPs [ClusterIP], ExternalPort the Service's port, InternalPort its
# targetPort, Protocol 6 TCP / 17 UDP), made only when the port has endpoints that are not all terminating ("Skipped
# creating Hns LoadBalancer for cluster ip resources. Reason : all endpoints are terminating"); winsim counts the
# EndpointSlice endpoints of the Service (label kubernetes.io/service-name) whose port has the Service port's name and
# whose ready condition is not false. A port once applied is not applied again by the same process (svcInfo.hnsID /
# policyApplied): a load balancer HNS lost stays lost until kube-proxy restarts (kubernetes/kubernetes#135802).
# SCTP (not supported on Windows), NodePorts, external IPs and session affinity are not modelled.
_PROTOCOLS = {"TCP": 6, "UDP": 17}


def _program_load_balancers(host, rec, services, slices):
    applied = rec.setdefault("load_balancers_applied", [])
    for svc in services:
        meta, spec = svc.get("metadata") or {}, svc.get("spec") or {}
        ips = [ip for ip in spec.get("clusterIPs") or [spec.get("clusterIP")] if ip and ip != "None" and ":" not in ip]
        mine = [s for s in slices if (s.get("metadata") or {}).get("namespace") == meta.get("namespace") and
                ((s.get("metadata") or {}).get("labels") or {}).get("kubernetes.io/service-name") == meta.get("name")]
        for port in spec.get("ports") or []:
            proto = _PROTOCOLS.get(port.get("protocol") or "TCP")
            ready = any(
                any(p.get("name", "") == port.get("name", "") for p in s.get("ports") or [])
                and any((e.get("conditions") or {}).get("ready") is not False for e in s.get("endpoints") or [])
                for s in mine)
            if proto is None or not ready:
                continue
            target = port.get("targetPort") if isinstance(port.get("targetPort"), int) else port.get("port")
            for ip in ips:
                key = "%s:%s/%s" % (ip, port.get("port"), proto)
                if key in applied:
                    continue
                # a load balancer HNS still has for it (a restarted kube-proxy) is taken over, not made twice
                # (hns.go getLoadBalancer looks it up in queriedLoadBalancers first)
                if not any(ip in (lb.get("FrontendVIPs") or []) and any(
                        m.get("Protocol") == proto and m.get("ExternalPort") == port.get("port")
                        for m in lb.get("PortMappings") or [])
                        for lb in (host.state.get("hns") or {}).get("loadbalancers") or []):
                    winsim_hns.create_load_balancer(host.state, ip, proto, port.get("port"), target,
                                                    rec.get("source_vip"))
                applied.append(key)


def network_ready(state, record):
    """Whether a kube-proxy record has found its HNS network (it keeps waiting otherwise)."""
    name = record.get("network_name")
    return any(n.get("Name") == name for n in ((state.get("hns") or {}).get("networks") or []))


# kube-proxy on an Overlay network (k8s.io/kubernetes v1.37.2, the same in v1.36.3):
# pkg/proxy/winkernel/proxier.go newProxierInternal:763-813, once getNetworkInfo found the network
# (and after a 10 s wait, not modelled): the WinOverlay gate must be enabled ("WinOverlay feature
# gate not enabled"), HNS must support remote subnets (Windows Server 2019 and later: always, for
# winsim's profiles), --source-vip must be set ("source-vip flag not set"), and the host MAC is
# the hardware address of the interface holding the node IP (localHostMacProvider.GetHostMac,
# proxier.go:1864): none -> "could not find host mac address for <ip>". Each error ends
# NewProxyServer: "Error running ProxyServer", exit 1 (cmd/kube-proxy/app/server.go).
# The node IP (cmd/kube-proxy/app/server.go detectNodeIPs:696): the Node's addresses
# (pkg/proxy/node.go, NodeManager waits 30 s for them), else 127.0.0.1, whose Windows interface
# (Loopback Pseudo-Interface 1) has no hardware address.
# The source VIP becomes an HNS endpoint in the network at the first sync (proxier.go:1260
# newSourceVIP); when that fails kube-proxy logs "Source Vip endpoint creation failed" and programs
# no service, and keeps running. winsim: an address outside the node's pod CIDR (the network's
# subnet) fails there (HNS's answer is not verified: the stricter choice).
WIN_OVERLAY_DEFAULT_FROM = (1, 20)  # pkg/features/kube_features.go: Alpha 1.14 off, Beta 1.20 on, GA 1.34 locked


def _gate_value(gates, name):
    """A gate's value in a --feature-gates value ("A=true,B=false"), or None."""
    for item in (gates or "").split(","):
        k, _, v = item.partition("=")
        if k.strip() == name:
            return v.strip().lower() == "true"
    return None


def _kube_proxy_node_ip(host, record):
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_kube
    name = record.get("hostname_override") or str(host.state.get("hostname") or "").lower()
    try:
        api = winsim_kube._api_from_kubeconfig(host, record["kubeconfig"])
    except (OSError, KeyError, TypeError, ValueError, IndexError) as e:
        # the node informer never syncs with a client that cannot be built (the stricter choice)
        raise binaries.ProcessExit('"Error running ProxyServer" err="can not sync node informer: %s"' % e) from None
    try:
        code, node = api.request("GET", "/api/v1/nodes/" + name)
    finally:
        api.close()
    if code >= 400 and code != 404:
        raise binaries.ProcessExit('"Error running ProxyServer" err="can not sync node informer: %s"'
                                   % node.get("message"))
    addresses = ((node.get("status") or {}).get("addresses") or []) if code == 200 else []
    return next((a["address"] for a in addresses if a.get("type") == "InternalIP"), "127.0.0.1")


def _kube_proxy_found_network(host, record):
    """newProxierInternal once the network exists (see above): raises ProcessExit."""
    net = next(n for n in host.state["hns"]["networks"] if n.get("Name") == record["network_name"])
    record["network_checked"] = True
    if str(net.get("Type", "")).lower() != "overlay":
        return
    version = tuple(int(x) for x in re.findall(r"\d+", record["version"])[:2])
    enabled = _gate_value(record.get("feature_gates"), "WinOverlay")
    if enabled is False or (enabled is None and version < WIN_OVERLAY_DEFAULT_FROM):
        raise binaries.ProcessExit('"Error running ProxyServer" err="WinOverlay feature gate not enabled"')
    if not record.get("source_vip"):
        raise binaries.ProcessExit('"Error running ProxyServer" err="source-vip flag not set"')
    node_ip = _kube_proxy_node_ip(host, record)
    record["node_ip"] = node_ip
    if not any(a.get("ip") == node_ip and a.get("mac") for a in host.state.get("adapters") or []):
        raise binaries.ProcessExit('"Error running ProxyServer" err="could not find host mac address for %s"'
                                   % node_ip)
    subnet = ((net.get("Subnets") or [{}])[0] or {}).get("AddressPrefix")
    try:
        inside = ipaddress.ip_address(record["source_vip"]) in ipaddress.ip_network(subnet, strict=False)
    except (TypeError, ValueError):
        inside = False
    if not inside:
        record["sync_error"] = ('"Source Vip endpoint creation failed" err="%s is not in the subnet %s of HNS '
                                'network %s"' % (record["source_vip"], subnet, net.get("Name")))
        return
    # syncProxyRules (proxier.go:1259-1266): on an Overlay network, when no endpoint of the network has the
    # source VIP, newSourceVIP creates it (a local endpoint with the host's MAC; hns.go createEndpoint gives it
    # no name). A network recreated after a reboot gets it again from the new kube-proxy's first sync.
    if not any(e.get("IPAddress") == record["source_vip"] and str(e.get("VirtualNetwork", "")).lower()
               == net["ID"].lower() for e in host.state["hns"].get("endpoints") or []):
        mac = next(a.get("mac") for a in host.state.get("adapters") or [] if a.get("ip") == node_ip)
        answer = json.loads(winsim_hns.call(host.state, "POST", "/endpoints/", json.dumps(
            {"VirtualNetwork": net["ID"], "IPAddress": record["source_vip"], "MacAddress": mac})))
        if not answer["Success"]:
            record["sync_error"] = '"Source Vip endpoint creation failed" err="%s"' % answer.get("Error")


def kube_proxy_network_found(host):
    """A waiting kube-proxy sees its network appear (flanneld created it): the overlay checks run
    then, and a failure stops the service a moment later (its recovery actions apply)."""
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_scm
    for name, record in list(processes(host.state).items()):
        if record.get("program") != "kube-proxy" or record.get("network_checked") \
                or not network_ready(host.state, record):
            continue
        try:
            _kube_proxy_found_network(host, record)
        except binaries.ProcessExit as e:
            svc = (host.state.get("services") or {}).get(name)
            processes(host.state).pop(name, None)
            if svc is not None and svc.get("status") == "Running":
                svc["last_error"] = "kube-proxy: %s" % e
                svc["crash"] = {"since": winsim_scm.clock(host), "kind": "exit", "error": svc["last_error"],
                                "pid": svc.get("pid"), "restart_delay": winsim_scm.restart_delay_seconds(svc)}
            continue
        kube_proxy_list(host, record)


# Where the real kube-proxy (cmd/kube-proxy/app/server.go v1.37.2 RunE) stops on a bad command
# line: pflag/cobra errors (unknown flag, bad value) come before initForOS, i.e. before the service
# reports Running; "failed complete" (reading --config, and the feature gates: v1.37.2 checks
# --feature-gates there, "failed complete: unrecognized feature gate: X", seen under Wine),
# "initialize logging" and "failed validate" come after it.
KUBE_PROXY_AFTER_INIT = ("failed complete:", "initialize logging:", "failed validate:")


def _kube_proxy_real_check(host, version, args):
    """Run the command line through the real kube-proxy.exe of this version under Wine
    (winsim_wine.kube_proxy_validate). Raises ProcessExit (``after_init``: the failure came after
    initForOS) when it refuses the command line; does nothing when the lab has no Windows
    kube-proxy of that version."""
    cache = host.config().get("lab_cache")
    if not winsim_wine.binary(cache, version, "kube-proxy"):
        return None
    files = winsim_wine.host_files(host, [winsim_wine.flag_value(args, "config")])
    err, effective = winsim_wine.kube_proxy_validate(cache, version, args, files)
    if err:
        e = binaries.ProcessExit("kube-proxy %s, real kube-proxy.exe under Wine: %s" % (version, err), 1)
        e.after_init = any(m in err for m in KUBE_PROXY_AFTER_INIT)
        raise e
    return effective


def _kube_proxy_flags(args, effective):
    """The values the simulation reads: from the configuration the real kube-proxy.exe took
    (--write-config-to, KubeProxyConfiguration v1alpha1) when there is one, else parsed here."""
    if effective is None:
        return pflag_parse(args, KUBE_PROXY_BOOLS)
    import yaml
    conf = yaml.safe_load(effective) or {}
    winkernel = conf.get("winkernel") or {}
    gates = conf.get("featureGates") or {}
    flags = {"proxy-mode": conf.get("mode") or "", "kubeconfig": (conf.get("clientConnection") or {}).get("kubeconfig"),
             "hostname-override": conf.get("hostnameOverride"), "network-name": winkernel.get("networkName"),
             "source-vip": winkernel.get("sourceVip"), "master": winsim_wine.flag_value(args, "master"),
             "feature-gates": ",".join("%s=%s" % (k, str(v).lower()) for k, v in sorted(gates.items())),
             # the check ran with --windows-service=false appended: the command line's own value
             "windows-service": "true" if _bool_flag(args, "windows-service") else "false"}
    return {k: v for k, v in flags.items() if v}


def _bool_flag(args, name):
    """pflag's value of a boolean flag: the last --name / --name=value wins."""
    value = False
    for a in args:
        if a in ("-" + name, "--" + name):
            value = True
        elif a.startswith(("-%s=" % name, "--%s=" % name)):
            value = a.split("=", 1)[1] in ("1", "t", "T", "TRUE", "true", "True")
    return value


def _kube_proxy_service_start(host, version, svc, args):
    try:
        effective = _kube_proxy_real_check(host, version, args)
    except binaries.ProcessExit as e:
        if e.after_init and _bool_flag(args, "windows-service"):
            # initForOS reported Running first: Start-Service succeeds, the service stops later.
            raise binaries.ExitsAfterRunning(str(e)) from None
        # It exited before it told the SCM anything.
        raise SimError("%s (%s)" % (PROCESS_ABORTED, e)) from None
    flags = _kube_proxy_flags(args, effective)
    if flags.get("windows-service") != "true":
        raise SimError(SERVICE_TIMEOUT)
    # With --windows-service the service reports Running at once (initForOS is the first thing
    # RunE does, cmd/kube-proxy/app/server.go) and kube-proxy exits later if it cannot work: SCM
    # then reports it stopped, and the recovery actions restart it.
    try:
        _kube_proxy_run(host, version, flags, service_environment(host, svc), svc["name"])
    except binaries.ProcessExit as e:
        raise binaries.ExitsAfterRunning(str(e)) from None


def _kube_proxy_process(host, version, args, env, cwd, svc):
    effective = _kube_proxy_real_check(host, version, args)
    _kube_proxy_run(host, version, _kube_proxy_flags(args, effective), env, svc["name"])


@binaries.command("kube-proxy")
def _kube_proxy_cli(host, version, args, stdin):
    if args[:1] == ["--version"]:
        return 0, "Kubernetes %s\n" % version, ""
    return 1, "", "winsim: only 'kube-proxy --version' runs outside a service\n"


binaries.SERVICE_START["kube-proxy"] = _kube_proxy_service_start
binaries.PROCESSES["kube-proxy"] = _kube_proxy_process


# --- kube-log-runner ----------------------------------------------------------------------------
# k8s.io/component-base v0.37.2 logs/kube-log-runner/kube-log-runner.go: Go flags (-log-file,
# -also-stdout, -redirect-stderr, -flush-interval, -log-file-size, -log-file-age; the last three
# came with kubernetes PR #127667 in 2024 and are in k8s.io/component-base v0.34.4 and v0.35.4 too (lines
# 48-53): winsim refuses them before 1.34, the stricter choice for releases not read), then the command. It
# opens the log file (O_APPEND|O_CREATE: the directory
# must exist), starts the command with its stdout and stderr going to the file, and waits for it.
# It has no service code: the program it starts answers the SCM (--windows-service), as in the
# kubelet and kube-proxy services of kubernetes cluster/gce/windows/k8s-node-setup.psm1.
LOG_RUNNER_FLAGS = {"log-file": "str", "also-stdout": "bool", "redirect-stderr": "bool", "flush-interval": "str",
                    "log-file-size": "str", "log-file-age": "str", "help": "bool", "h": "bool"}
LOG_RUNNER_ROTATION_FROM = (1, 34)
PROCESS_ABORTED = "1067: The process terminated unexpectedly."


def _split_go_flags(args):
    """Go's flag package: the flags, then everything from the first non-flag argument on."""
    i = 0
    while i < len(args) and args[i].startswith("-") and args[i] not in ("-", "--"):
        i += 1
    if i < len(args) and args[i] == "--":
        return args[:i], args[i + 1:]
    return args[:i], args[i:]


def _log_runner_open(host, version, args):
    """What kube-log-runner does before it starts its command (configureAndRun): its flags, the log file opened
    (O_APPEND|O_CREATE), the command found. (log file, (win path, marker) of the command, the command's arguments);
    raises ProcessExit with what it writes to its stderr (log.Fatal) when it exits instead."""
    flag_args, command = _split_go_flags(args)
    spec = dict(LOG_RUNNER_FLAGS)
    if binaries_version(version) < LOG_RUNNER_ROTATION_FROM:
        spec.pop("log-file-size")
        spec.pop("log-file-age")
    flags = go_flag_parse(flag_args, spec, "kube-log-runner")
    if not command:
        raise binaries.ProcessExit("not enough arguments to run", 1)
    log_file = flags.get("log-file") or ""
    if log_file:
        local = host.local_path(log_file)
        if not os.path.isdir(os.path.dirname(local)):
            raise binaries.ProcessExit("failed to create log file %s: open %s: The system cannot find the path "
                                       "specified." % (log_file, log_file), 1)
        open(local, "a").close()
    win, local = binaries.resolve_executable(host, command[0])
    if local is None:
        raise binaries.ProcessExit("starting command: exec: \"%s\": file does not exist" % command[0], 1)
    marker = binaries.read_marker(local)
    if marker is None:
        raise SimError("winsim: %s is not a stand-in binary" % win)
    return log_file, (win, marker), command[1:]


def _log_runner_service_start(host, version, svc, args):
    try:
        log_file, (win, marker), command_args = _log_runner_open(host, version, args)
    except binaries.ProcessExit as e:  # exits before anything answers the SCM
        raise SimError("%s (kube-log-runner: %s)" % (PROCESS_ABORTED, e)) from None
    fn = binaries.SERVICE_START.get(marker[0])
    if fn is None:  # the program never answers the SCM
        raise SimError(SERVICE_TIMEOUT)
    # the program's output (stdout and stderr: -redirect-stderr defaults to true) goes to the file;
    # without -log-file it goes to kube-log-runner's own stdout, which the SCM discards
    try:
        return fn(host, marker[1], svc, command_args)
    except binaries.ExitsAfterRunning as e:
        _append_log(host, log_file, klog_error_line(e))
        raise
    except SimError as e:
        _append_log(host, log_file, klog_error_line(e))
        raise


def binaries_version(version):
    m = re.match(r"^v?(\d+)\.(\d+)", str(version))
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def klog_error_line(error):
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_scm
    return winsim_scm.klog_line(str(error))


@binaries.command("kube-log-runner")
def _log_runner_cli(host, version, args, stdin):
    return 1, "", "winsim: kube-log-runner runs only as a service's program in the lab\n"


binaries.SERVICE_START["kube-log-runner"] = _log_runner_service_start


# --- NSSM ---------------------------------------------------------------------------------------
def _param(params, name):
    """A value of the Parameters key (registry value names are case-insensitive)."""
    for k, v in (params or {}).items():
        if k.lower() == name.lower():
            return v
    return None


def _multi(value):
    if value is None or value == "":
        return []
    return [value] if isinstance(value, str) else [str(v) for v in value]


def _append_log(host, win_path, line):
    if not win_path:
        return
    local = host.local_path(win_path)
    with open(local, "a") as f:
        f.write(line.rstrip("\n") + "\n")


def _klog_error(msg):
    now = datetime.datetime.utcnow()
    return "E%s %s] %s" % (now.strftime("%m%d"), now.strftime("%H:%M:%S.%f"), msg)


def _nssm_service_start(host, version, svc, args):
    """nssm 2.24 service_main/start_service. What the SCM sees:

    - Application missing (get_parameters fails) -> stop_service(exit code 2): the service reports
      Stopped with ERROR_SERVICE_SPECIFIC_ERROR before ever reporting Running.
    - an output file that cannot be opened -> stopped, service-specific code 4 (winsim: the parent
      directory is missing; nssm 2.24 does not create it, as far as we know).
    - CreateProcess fails (program or AppDirectory missing) -> stopped, service-specific code 3.
    - the program starts -> Running at once. If it then exits (flanneld failing), NSSM's default
      exit action restarts it with throttling, and while it waits the service shows Paused: winsim
      shows Running for a moment, then Paused (winsim_scm.observe).

    Arguments after nssm.exe in ImagePath are ignored (nssm then still connects to the SCM; not
    verified).
    """
    params = svc.get("parameters") or {}
    key = "HKLM\\SYSTEM\\CurrentControlSet\\Services\\%s\\Parameters" % svc["name"]
    app = _param(params, "Application")
    if not app:
        raise binaries.ServiceStopped("service-specific error 2: NSSM could not read the Application value of %s"
                                      % key)
    for name in ("AppStdout", "AppStderr"):
        out = _param(params, name)
        if out:
            local = host.local_path(out)
            if not os.path.isdir(os.path.dirname(local)):
                raise binaries.ServiceStopped("service-specific error 4: NSSM could not open %s %s: The system "
                                              "cannot find the path specified." % (name, out))
    for name in ("AppStdout", "AppStderr"):
        out = _param(params, name)
        if out:
            open(host.local_path(out), "a").close()  # OPEN_ALWAYS, appended to
    cwd = _param(params, "AppDirectory") or ntpath.dirname(app)
    if not os.path.isdir(host.local_path(cwd)):
        raise binaries.ServiceStopped("service-specific error 3: NSSM: CreateProcess() failed for %s: The directory "
                                      "name is invalid." % app)
    win, local = binaries.resolve_executable(host, app)
    if local is None:
        raise binaries.ServiceStopped("service-specific error 3: NSSM: CreateProcess() failed for %s: %s"
                                      % (app, NOT_FOUND))
    marker = binaries.read_marker(local)
    if marker is None:
        raise SimError("winsim: %s is not a stand-in binary" % win)
    tool, app_version = marker
    # NSSM runs CreateProcess on "<Application>" <AppParameters>; the program reads its argv from that
    argv = split_command_line(nssm_command_line(app, _param(params, "AppParameters")))[1:]
    # the application's stderr, or, under kube-log-runner, its -log-file (-redirect-stderr defaults to true; the
    # runner's own log.Printf/log.Fatal lines go to its stderr, NSSM's AppStderr)
    app_log, runner = _param(params, "AppStderr"), None
    if tool == "kube-log-runner":
        try:
            app_log, (runner, (tool, app_version)), argv = _log_runner_open(host, app_version, argv)
        except binaries.ProcessExit as e:  # the application exits: NSSM throttles it (below)
            _append_log(host, _param(params, "AppStderr"), "kube-log-runner: %s" % e)
            raise binaries.ExitsAfterRunning("kube-log-runner: %s" % e, kind="nssm") from None
    fn = binaries.PROCESSES.get(tool)
    if fn is None:
        raise SimError("winsim: no implementation of %s (%s) running as a plain process under NSSM" % (win, tool))
    env = service_environment(host, svc)
    app_env = _multi(_param(params, "AppEnvironment"))
    if app_env:  # AppEnvironment replaces the environment; AppEnvironmentExtra adds to it
        env = {}
    for item in app_env + _multi(_param(params, "AppEnvironmentExtra")):
        k, _, v = item.partition("=")
        if k:
            env[k.upper()] = (k, v)
    record = {"program": tool, "version": app_version, "wrapper": "nssm", "application": app, "args": argv,
              "log_runner": {"command": runner, "log_file": app_log} if runner else None,
              "directory": cwd, "environment": sorted("%s=%s" % kv for kv in env.values()
                                                      if kv[0].upper() not in ("PATH",))}
    try:
        host.fault("exec:" + tool)
        fn(host, app_version, argv, env, cwd, svc)
    except binaries.ProcessExit as e:
        _append_log(host, app_log, _klog_error(str(e)))
        if runner:
            _append_log(host, _param(params, "AppStderr"), "kube-log-runner: running command: exit status %s" % e.code)
        record.update(state="exited", exit_code=e.code, error=str(e))
        processes(host.state)[svc["name"].lower()] = record
        # NSSM has reported Running; the application exiting within AppThrottle (1500 ms) makes it
        # throttle the restarts and show the service Paused (NSSM 2.24 README.txt).
        raise binaries.ExitsAfterRunning("%s: %s" % (tool, e), kind="nssm") from None
    current = processes(host.state).get(svc["name"].lower()) or {}
    current.update(record)
    current["state"] = "running"
    processes(host.state)[svc["name"].lower()] = current
    return None


@binaries.command("nssm")
def _nssm_cli(host, version, args, stdin):
    if not args:
        return 1, "", ("NSSM: The non-sucking service manager\r\nVersion %s 64-bit\r\n\r\nUsage: nssm <option> "
                       "[<args> ...]\r\n" % version)
    return 1, "", "winsim: nssm %s is not simulated\n" % " ".join(args)


binaries.SERVICE_START["nssm"] = _nssm_service_start


# --- flanneld -----------------------------------------------------------------------------------
# Its flags are the real flanneld.exe's of that version (winsim_wine.flanneld_flags, from its usage),
# and every command line first runs through it under Wine (winsim_wine.flanneld_validate).


def _go_path(cwd, path):
    """A Go path on Windows: '/run/x' is rooted on the current drive (C:), relative ones join cwd."""
    p = path.replace("/", "\\")
    if len(p) > 1 and p[1] == ":":
        return p
    if p.startswith("\\"):
        return "C:" + p
    return ntpath.join(cwd, p)


def _ext_interface(host, wanted):
    """--iface values (names or IPs) to (interface name, IP, adapter HNS binds, MTU), like
    flannel's LookupExtIface/GetInterfaceByIP over Get-NetAdapter's view (an adapter behind an HNS
    vSwitch has lost its address to 'vEthernet (<adapter>)'). winsim passes the physical adapter
    name to HNS even then; whether HNS takes the vNIC name as well is not modelled."""
    vswitches = (host.state.get("hns") or {}).get("vswitches") or {}
    ifaces = []
    for a in host.state.get("adapters") or []:
        name = vswitches.get(a["name"], a["name"])
        ifaces.append((name, a.get("ip"), a["name"], int(a.get("mtu") or 1500)))
    for w in wanted:
        for iface in ifaces:
            if w == iface[1] or w.lower() == iface[0].lower():
                return iface
    raise binaries.ProcessExit("Failed to find interface to use that matches the interfaces and/or regexes "
                               "provided")


def _flannel_api(host, kubeconfig):
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_kube
    try:
        return winsim_kube._api_from_kubeconfig(host, kubeconfig)
    except FileNotFoundError as e:
        # a tokenFile that is not there: clientcmd's os.ReadFile error (tools/clientcmd/client_config.go)
        raise binaries.ProcessExit("Failed to create SubnetManager: fail to create kubernetes config: open %s: %s"
                                   % (host.win_path(e.filename), NOT_FOUND)) from None
    except (KeyError, TypeError, ValueError, IndexError) as e:
        raise binaries.ProcessExit("Failed to create SubnetManager: fail to create kubernetes config: invalid "
                                   "configuration: %s" % e) from None


def _dr_mac(adapter_mac):
    """A stand-in for the distributed-router MAC HNS gives an Overlay network (winsim's HNS v1
    objects carry no DrMacAddress policy): stable per adapter."""
    parts = adapter_mac.replace(":", "-").split("-")
    return ":".join(["0e", "2a"] + [p.lower() for p in parts[2:]])


def _ensure_network(host, backend, vni, name, pod_cidr, adapter):
    """device_windows.go ensureNetwork: reuse a network of that name when type and address prefix
    match, else delete it and create it again (failing if HNS refuses the delete)."""
    hns = host.state.setdefault("hns", {"networks": [], "endpoints": [], "policylists": [], "vswitches": {},
                                        "blips": []})
    ntype = "Overlay" if backend == "vxlan" else "L2Bridge"
    existing = next((n for n in hns.get("networks") or [] if n.get("Name") == name), None)
    if existing is not None:
        prefix = ((existing.get("Subnets") or [{}])[0] or {}).get("AddressPrefix")
        if existing.get("Type") == ntype and prefix == pod_cidr:
            if backend == "host-gw" and not any(e.get("Name") == "cbr0_ep" for e in hns.get("endpoints") or []):
                net = ipaddress.ip_network(pod_cidr)
                winsim_hns.call(host.state, "POST", "/endpoints/", json.dumps({
                    "Name": "cbr0_ep", "VirtualNetwork": existing["ID"], "IPAddress": str(net.network_address + 2)}))
            return existing
        answer = json.loads(winsim_hns.call(host.state, "DELETE", "/networks/" + existing["ID"], ""))
        if not answer["Success"]:
            raise binaries.ProcessExit("Error registering network: failed to delete existing HostComputeNetwork "
                                       "%s: %s" % (name, answer.get("Error")))
    answer = winsim_hns.flannel_network(host.state, backend, vni, pod_cidr, adapter)
    if not answer.get("Success"):
        raise binaries.ProcessExit("Error registering network: failed to create HostComputeNetwork %s: %s"
                                   % (name, answer.get("Error")))
    return answer["Output"]


TRUE = ("1", "t", "T", "TRUE", "true", "True")  # Go's strconv.ParseBool


def _flanneld_real_check(host, version, args, env, cwd):
    """Run the command line through the real flanneld.exe of this version under Wine up to its first
    API call (winsim_wine.flanneld_validate); raise ProcessExit with its error and exit code when it
    stops before that. Returns its flag spec and defaults (winsim_wine.flanneld_flags)."""
    cache = host.config().get("lab_cache")
    if not winsim_wine.binary(cache, version, "flanneld"):
        raise SimError("winsim: no Windows flanneld.exe %s under %s: lab/bin/lab-build builds the versions "
                       "the mirror serves" % (version, cache))
    if not (_bool_flag(args, "kube-subnet-mgr") or _getenv(env, "FLANNELD_KUBE_SUBNET_MGR") in TRUE
            or _bool_flag(args, "version")):
        # the etcd subnet manager would wait for an etcd (the real run would only time out)
        raise SimError("winsim: flanneld without --kube-subnet-mgr (etcd) is not simulated")
    spec, defaults = winsim_wine.flanneld_flags(cache, version)

    def path(name):
        value = winsim_wine.flag_value(args, name) or _getenv(env, "FLANNELD_" + name.upper().replace("-", "_"))
        return _go_path(cwd, value or defaults.get(name) or "") if (value or defaults.get(name)) else None

    files = winsim_wine.host_files(host, [path("net-config-path")])
    if path("kubeconfig-file"):
        files.update(winsim_wine.kubeconfig_files(host, path("kubeconfig-file")))
    failed = winsim_wine.flanneld_validate(cache, version, args, files, dict(env.values()), cwd)
    if failed:
        raise binaries.ProcessExit("flanneld %s, real flanneld.exe under Wine: %s" % (version, failed[0]),
                                   failed[1] if failed[1] is not None else 1)
    return spec, defaults


def _flanneld_process(host, version, args, env, cwd, svc):
    """What flanneld does after its first API call (the real flanneld.exe judged everything before)."""
    spec, defaults = _flanneld_real_check(host, version, args, env, cwd)
    flags = go_flag_parse(args, spec, "flanneld")
    # flagutil.SetFlagsFromEnv(flannelFlags, "FLANNELD"): FLANNELD_<NAME> for flags not given
    for name, kind in spec.items():
        value = _getenv(env, "FLANNELD_" + name.upper().replace("-", "_"))
        if name not in flags and value:
            flags[name] = [value] if kind == "slice" else value
    for k, v in defaults.items():
        flags.setdefault(k, v)
    flags["ip-masq"] = "true" if flags.get("ip-masq") in TRUE else "false"
    kubeconfig = flags.get("kubeconfig-file", "")
    node_name = _getenv(env, "NODE_NAME")
    with open(host.local_path(_go_path(cwd, flags["net-config-path"])), "rb") as f:
        conf = json.loads(f.read().decode("utf-8", "replace"))
    network = ipaddress.ip_network(conf["Network"])
    backend_conf = conf.get("Backend") or {}
    backend = backend_conf.get("Type") or "udp"
    if backend not in ("vxlan", "host-gw"):
        raise binaries.ProcessExit("Error fetching backend: unknown backend type: %s" % backend)

    api = _flannel_api(host, kubeconfig)
    try:
        # The node informer must list (and watch) nodes before anything else happens; without the
        # right the real flanneld waits 10 minutes, then exits with this. It lists EVERY Node, with no
        # selector (flannel v0.26.7 pkg/subnet/kube/kube.go newKubeSubnetManager: cache.ListWatch calling
        # Nodes().List / Watch with the informer's options only), so a credential that may read only its own
        # Node (the kubelet's, under the Node authorizer of Kubernetes 1.32 and later) is refused here.
        code, listed = api.request("GET", "/api/v1/nodes")
        if code == 401 or code == 403:
            raise binaries.ProcessExit("Failed to create SubnetManager: error waiting for nodeController to sync "
                                       "state: timed out waiting for the condition (%s)" % listed.get("message"))
        if code >= 400:
            raise binaries.ProcessExit("Failed to create SubnetManager: %s" % listed.get("message"))
        extname, ext_ip, adapter, mtu = _ext_interface(host, flags.get("iface") or [])
        if backend == "vxlan":
            vni, port = int(backend_conf.get("VNI", 4096)), int(backend_conf.get("Port", 4789))
            if vni < 4096:
                raise binaries.ProcessExit("Error registering network: invalid VXLAN backend config. VNI [%d] must "
                                           "be greater than or equal to 4096 on Windows" % vni)
            if port != 4789:
                raise binaries.ProcessExit("Error registering network: invalid VXLAN backend config. Port [%d] is not "
                                           "supported on Windows. Omit the setting to default to port 4789" % port)
            if backend_conf.get("DirectRouting") or backend_conf.get("GBP"):
                raise binaries.ProcessExit("Error registering network: invalid VXLAN backend config. %s is not "
                                           "supported on Windows"
                                           % ("DirectRouting" if backend_conf.get("DirectRouting") else "GBP"))
            name = backend_conf.get("Name") or "flannel.%d" % vni
        else:
            vni, name = None, backend_conf.get("Name") or "cbr0"
        # AcquireLease reads its own Node from the informer's store (nodeStore.Get(nodeName)).
        items = [n for n in listed.get("items") or [] if (n.get("metadata") or {}).get("name") == node_name]
        if not items:
            raise binaries.ProcessExit('Error registering network: failed to acquire lease: node "%s" not found'
                                       % node_name)
        node = items[0]
        pod_cidr = (node.get("spec") or {}).get("podCIDR") or ""
        if not pod_cidr:
            raise binaries.ProcessExit('Error registering network: failed to acquire lease: node "%s" pod cidr not '
                                       'assigned' % node_name)
        subnet = ipaddress.ip_network(pod_cidr)
        if not subnet.subnet_of(network):
            raise binaries.ProcessExit('Error registering network: failed to acquire lease: subnet "%s" specified in '
                                       'the flannel net config doesn\'t contain "%s" PodCIDR of the "%s" node'
                                       % (network, pod_cidr, node_name))
        prefix = flags["kube-annotation-prefix"]
        mac = next((a.get("mac") for a in host.state.get("adapters") or [] if a["name"] == adapter),
                   "00-00-00-00-00-00")
        backend_data = (json.dumps({"VNI": vni, "VtepMAC": _dr_mac(mac)}, separators=(",", ":"))
                        if backend == "vxlan" else "null")
        annotations = {prefix + "/backend-data": backend_data, prefix + "/backend-type": backend,
                       prefix + "/kube-subnet-manager": "true", prefix + "/public-ip": ext_ip}
        current = (node.get("metadata") or {}).get("annotations") or {}
        if any(current.get(k) != v for k, v in annotations.items()):
            code, ans = api.request("PATCH", "/api/v1/nodes/%s/status" % node_name,
                                    {"metadata": {"annotations": annotations}},
                                    content_type="application/strategic-merge-patch+json")
            if code >= 300:
                raise binaries.ProcessExit("Error registering network: failed to acquire lease: %s"
                                           % ans.get("message"))
    finally:
        api.close()

    _ensure_network(host, backend, vni, name, pod_cidr, adapter)
    kube_proxy_network_found(host)
    # WriteSubnetFile: the first address of the lease, and the backend's MTU
    mtu = mtu - 50 if backend == "vxlan" else mtu
    subnet_file = _go_path(cwd, flags["subnet-file"])
    local = host.local_path(subnet_file)
    os.makedirs(os.path.dirname(local), exist_ok=True)
    with open(local, "w", newline="") as f:
        f.write("FLANNEL_NETWORK=%s\nFLANNEL_SUBNET=%s/%d\nFLANNEL_MTU=%d\nFLANNEL_IPMASQ=%s\n"
                % (network, subnet.network_address + 1, subnet.prefixlen, mtu, flags["ip-masq"]))
    processes(host.state)[svc["name"].lower()] = {
        "node_name": node_name, "backend": backend, "network_name": name, "pod_cidr": pod_cidr,
        "interface": extname, "public_ip": ext_ip, "subnet_file": subnet_file}


binaries.PROCESSES["flanneld"] = _flanneld_process


@binaries.command("flanneld")
def _flanneld_cli(host, version, args, stdin):
    if args[:1] in (["--version"], ["-version"]):
        return 0, "%s\n" % version, ""
    return 1, "", "winsim: flanneld runs only under a service wrapper (NSSM) in the lab\n"
