# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Preflight: the kubelet's extra flags against the flag set of the node's Kubernetes minor (kubelet_flags.json,
generated from the real kubelet by lab/kubelet_flags/generate.py), and the kubelet's security settings.

PRIVATE to the collection: no compatibility promise outside it.
"""

from __future__ import annotations

import difflib
import json
import os
import re

from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight.findings import VARIABLES, Findings
from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight.labels import (
    node_label_problems,
    taint_flag_problems,
)

EXTRA_ARGS_VAR = "kubewin_kubelet_extra_args"
ALLOW_INSECURE_VAR = "kubewin_kubelet_allow_insecure"
REGENERATE = "lab/kubelet_flags/generate.py"
FLAGS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kubelet_flags.json")

# Go's strconv.ParseBool, which pflag's bool flags use.
_GO_BOOLS = ("1", "t", "T", "TRUE", "true", "True", "0", "f", "F", "FALSE", "false", "False")
_FLAG_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")


def _minor_key(minor):
    return tuple(int(x) for x in minor.split("."))


_DATA = None


def flag_data():
    """{minor: {version, checked_against_binary, flags: {flag: takes a value}, deprecated: {flag: message}}}."""
    global _DATA
    if _DATA is None:
        with open(FLAGS_FILE) as f:
            _DATA = json.load(f)["minors"]
    return _DATA


def supported_minors():
    return sorted(flag_data(), key=_minor_key)


# ---------------------------------------------------------------------------------------------------
# kubelet flags


def _flag_name(key):
    """The flag's name as pflag sees it (cliflag.WordSepNormalizeFunc: '_' -> '-')."""
    return str(key).replace("_", "-")


def _removed_in(name, minor):
    """The newest minor older than ``minor`` whose kubelet still had flag ``name``, or None."""
    older = [m for m in supported_minors() if _minor_key(m) < _minor_key(minor) and name in flag_data()[m]["flags"]]
    return older[-1] if older else None


# Values that switch a kubelet protection off, and what kubeadm's kubelet-config sets instead (kubernetes v1.37.2
# cmd/kubeadm/app/componentconfigs/kubelet.go: anonymous authentication off, Webhook authorization, no read-only
# port, client certificate rotation on). security-2.md N9.
def _insecure_flag(name, value):
    text = str(value).strip()
    if name == "anonymous-auth" and text in ("1", "t", "T", "TRUE", "true", "True"):
        return "anonymous requests to the kubelet's API (kubeadm sets it off)"
    if name == "authorization-mode" and text == "AlwaysAllow":
        return "every authenticated request to the kubelet's API allowed (kubeadm sets Webhook)"
    if name == "read-only-port" and text not in ("0", ""):
        return "the unauthenticated read-only port %s (kubeadm sets 0, off)" % text
    if name == "rotate-certificates" and text in ("0", "f", "F", "FALSE", "false", "False"):
        return "no rotation of the kubelet's client certificate (kubeadm sets it on)"
    if name == "tls-min-version" and text in ("VersionTLS10", "VersionTLS11"):
        return "TLS below 1.2 on the kubelet's port"
    return None


def check_kubelet_args(extra_args, kube, node_name=None, allow_insecure=False):
    """kubewin_kubelet_extra_args against the flags the Windows kubelet of that minor accepts (kubelet_flags, generated
    from the real kubelet by lab/kubelet_flags/generate.py), their values where the kubelet checks them before it
    starts, and the flags that weaken the kubelet (refused unless kubewin_kubelet_allow_insecure)."""
    f = Findings("kubelet_args")
    if extra_args is None:
        return f.result()
    if not isinstance(extra_args, dict):
        f.fail(EXTRA_ARGS_VAR, "%s must be a mapping of flag name (without --) to value, e.g. {'max-pods': 250}; "
                               "it is %r" % (EXTRA_ARGS_VAR, extra_args))
        return f.result()
    if not extra_args:
        return f.result()
    minor = "%d.%d" % tuple(kube[:2]) if isinstance(kube, (tuple, list)) and len(kube) >= 2 else None
    flags = (flag_data().get(minor) or {}).get("flags") if minor else None
    if minor and flags is None:
        f.warn(EXTRA_ARGS_VAR, "the flags in %s are not checked: this collection knows the kubelet flags of "
                               "Kubernetes %s to %s, not of %s; check them against `kubelet --help` of that "
                               "version (a maintainer adds a minor with %s)"
               % (EXTRA_ARGS_VAR, supported_minors()[0], supported_minors()[-1], minor, REGENERATE))
    config_file = []
    for key, value in extra_args.items():
        raw = str(key)
        name = _flag_name(raw)
        if raw.startswith("-") or not _FLAG_NAME.match(raw):
            f.fail(EXTRA_ARGS_VAR, "%s: %r is not a flag name; write the name without the leading --, e.g. "
                                   "'max-pods: 250' for --max-pods=250" % (EXTRA_ARGS_VAR, raw))
            continue
        if flags is not None and name not in flags:
            last = _removed_in(name, minor)
            if last:
                why = "it was removed after Kubernetes %s" % last
            else:
                close = difflib.get_close_matches(name, list(flags), n=1, cutoff=0.75)
                why = "no kubelet of Kubernetes %s to %s knows it%s" % (
                    supported_minors()[0], supported_minors()[-1], " (did you mean %s?)" % close[0] if close else "")
            f.fail(EXTRA_ARGS_VAR, "%s: the Windows kubelet of Kubernetes %s has no flag --%s, %s; remove it from %s"
                   % (EXTRA_ARGS_VAR, minor, name, why, EXTRA_ARGS_VAR))
            continue
        if flags is not None and not flags[name] and value is not None and str(value) not in _GO_BOOLS \
                and not isinstance(value, bool):
            f.fail(EXTRA_ARGS_VAR, "%s: --%s is a boolean flag and %r is not a boolean; write true or false"
                   % (EXTRA_ARGS_VAR, name, value))
            continue
        if flags is not None and flags[name] and value is None:
            f.fail(EXTRA_ARGS_VAR, "%s: --%s needs a value; it has none" % (EXTRA_ARGS_VAR, name))
            continue
        deprecated = ((flag_data().get(minor) or {}).get("deprecated") or {}).get(name) if minor else None
        if deprecated and "config file" in deprecated:
            config_file.append("--" + name)
        elif deprecated:
            f.warn(EXTRA_ARGS_VAR, "%s: --%s is deprecated in the kubelet of Kubernetes %s: %s"
                   % (EXTRA_ARGS_VAR, name, minor, deprecated))
        if name == "node-labels":
            for problem in node_label_problems(value):
                f.fail(EXTRA_ARGS_VAR, "%s: --node-labels: %s" % (EXTRA_ARGS_VAR, problem))
        elif name == "register-with-taints":
            for problem in taint_flag_problems(value):
                f.fail(EXTRA_ARGS_VAR, "%s: --register-with-taints: %s; write key[=value]:Effect, comma-separated"
                       % (EXTRA_ARGS_VAR, problem))
        elif name == "feature-gates" and _turns_off(value, "NodeLogQuery"):
            # review-s6 L3: the node role sets enableSystemLogQuery (plugin_utils/_host/kubelet.py), which the kubelet
            # refuses without the gate (pkg/kubelet/apis/config/validation/validation.go); from 1.36 the gate is also
            # locked on, and component-base's featuregate refuses to set a locked gate to another value
            f.fail(EXTRA_ARGS_VAR, "%s: --feature-gates turns NodeLogQuery off, and the kubelet would then refuse to "
                                   "start: the node role turns on the node log query (enableSystemLogQuery), which "
                                   "needs that gate (locked on from Kubernetes 1.36); remove NodeLogQuery=false from "
                                   "the feature-gates of %s" % (EXTRA_ARGS_VAR, EXTRA_ARGS_VAR))
        elif name == "hostname-override" and node_name and str(value) != node_name:
            f.fail(EXTRA_ARGS_VAR, "%s: --hostname-override=%s differs from the node name %r: the kubelet would "
                                   "register another Node than the one the roles join and wait for; set %s instead "
                                   "and remove hostname-override from %s"
                   % (EXTRA_ARGS_VAR, value, node_name, VARIABLES["node_name"], EXTRA_ARGS_VAR))
        insecure = _insecure_flag(name, "true" if value is True else "false" if value is False else value)
        if insecure:
            msg = ("%s: --%s=%s turns on %s (security-2.md N9)" % (EXTRA_ARGS_VAR, name, value, insecure))
            if allow_insecure:
                f.warn(EXTRA_ARGS_VAR, msg + "; accepted because %s is true" % ALLOW_INSECURE_VAR)
            else:
                f.fail(EXTRA_ARGS_VAR, msg + "; remove it from %s, or set %s: true to accept it"
                       % (EXTRA_ARGS_VAR, ALLOW_INSECURE_VAR))
    if config_file:
        one = len(config_file) == 1
        f.warn(EXTRA_ARGS_VAR, "%s: %s still work%s, but the kubelet of Kubernetes %s deprecates %s in favour of its "
                               "configuration file (it logs that at each start)"
               % (EXTRA_ARGS_VAR, ", ".join(config_file), "s" if one else "", minor, "it" if one else "them"))
    return f.result()


def _turns_off(feature_gates, gate):
    """Whether a --feature-gates value (Gate=bool,...) sets ``gate`` false, as Go's strconv.ParseBool reads it."""
    for item in str(feature_gates if feature_gates is not None else "").split(","):
        key, eq, val = item.partition("=")
        if eq and key.strip() == gate and val.strip() in ("0", "f", "F", "false", "FALSE", "False"):
            return True
    return False


def check_kubelet_config(config, allow_insecure=False):
    """The security fields of the cluster's KubeletConfiguration (the kubelet-config ConfigMap every Windows kubelet
    runs with): the weakening values kubeadm's defaults avoid are refused unless kubewin_kubelet_allow_insecure."""
    f = Findings("kubelet_config")
    if not isinstance(config, dict) or not config:
        return f.result()
    authn = config.get("authentication") or {}
    problems = []
    if (authn.get("anonymous") or {}).get("enabled") is True:
        problems.append("authentication.anonymous.enabled: true (anonymous requests to the kubelet's API)")
    if (authn.get("webhook") or {}).get("enabled") is False:
        problems.append("authentication.webhook.enabled: false (no token authentication)")
    mode = (config.get("authorization") or {}).get("mode")
    if mode == "AlwaysAllow":
        problems.append("authorization.mode: AlwaysAllow")
    port = config.get("readOnlyPort")
    if port not in (None, 0, "0"):
        problems.append("readOnlyPort: %s (an unauthenticated read-only port)" % port)
    if config.get("rotateCertificates") is False:
        # kube-proxy and flanneld run with the kubelet's credential (issue 21 point 2): all three stop at its expiry
        problems.append("rotateCertificates: false (the kubelet's client certificate is never renewed, so the "
                        "kubelet, flanneld and kube-proxy, which run with it, stop when it expires: a year after the "
                        "join with kubeadm's --cluster-signing-duration)")
    if config.get("tlsMinVersion") in ("VersionTLS10", "VersionTLS11"):
        problems.append("tlsMinVersion: %s" % config.get("tlsMinVersion"))
    for problem in problems:
        msg = ("the cluster's kubelet configuration (kube-system/kubelet-config), which every Windows kubelet runs "
               "with, has %s (security-2.md N9)" % problem)
        if allow_insecure:
            f.warn(ALLOW_INSECURE_VAR, msg + "; accepted because %s is true" % ALLOW_INSECURE_VAR)
        else:
            f.fail(ALLOW_INSECURE_VAR, msg + "; set it back to kubeadm's default in that ConfigMap, or set %s: true "
                                             "to accept it" % ALLOW_INSECURE_VAR)
    return f.result()


# kubespray's kubelet hardening (docs/operations/hardening.md), written into each Linux node's own kubelet
# configuration and never into the kubelet-config ConfigMap the Windows kubelets read (security-2.md N9), with the
# kubelet flag that carries each to a Windows node.
KUBESPRAY_HARDENING = {
    "kubelet_rotate_server_certificates": "rotate-server-certificates",
    "tls_min_version": "tls-min-version",
    "tls_cipher_suites": "tls-cipher-suites",
    "kubelet_streaming_connection_idle_timeout": "streaming-connection-idle-timeout",
    "kubelet_event_record_qps": "event-qps",
}


def check_kubespray_hardening(hardening, extra_args):
    """A kubespray hardening variable the first control-plane host sets does not reach the Windows kubelets: a warning
    naming the flag of kubewin_kubelet_extra_args that carries it."""
    f = Findings("kubelet_hardening")
    given = {_flag_name(k) for k in (extra_args or {})} if isinstance(extra_args, dict) else set()
    for var, flag in KUBESPRAY_HARDENING.items():
        value = (hardening or {}).get(var)
        # Unset or off (an inventory false templated through Ansible 2.18 arrives as the text 'False').
        if value in (None, "", [], False) or str(value).strip().lower() in ("false", "none") or flag in given:
            continue
        if isinstance(value, list):
            value = ",".join(str(v) for v in value)
        elif value is True or str(value).strip().lower() == "true":
            value = "true"
        f.warn(EXTRA_ARGS_VAR, "%s is set for the Linux nodes (kubespray's hardening) but does not reach the Windows "
                               "kubelets, which read only the kubelet-config ConfigMap: add '%s: %s' to %s%s"
               % (var, flag, value, EXTRA_ARGS_VAR,
                  " (and approve the kubelet-serving CSRs of the Windows nodes: serverTLSBootstrap needs an "
                  "approver that covers their names and IPs)" if flag == "rotate-server-certificates" else ""))
    return f.result()


# What lets a node's kubelet renew its own client certificate (also flanneld's and kube-proxy's credential, issue 21
# point 2) with no operator: kubeadm's ClusterRoleBinding (module_utils/_cluster_facts.py NODE_RENEWAL_BINDING, whose
# source it cites) and rotateCertificates: true in the kubelet configuration (the kubelet's default is false:
# k8s.io/kubelet config/v1beta1 KubeletConfiguration.RotateCertificates, "Default: false"; kubeadm sets it true).
NODE_RENEWAL_FIX = ("kubectl create clusterrolebinding kubeadm:node-autoapprove-certificate-rotation "
                    "--clusterrole=system:certificates.k8s.io:certificatesigningrequests:selfnodeclient "
                    "--group=system:nodes (what kubeadm init makes; 'kubeadm init phase bootstrap-token' makes it "
                    "again)")


def check_node_renewal(bindings, config, host, node_name):
    """Warnings, before any change, when the node's kubelet will not renew its client certificate by itself:
    ``bindings`` (k8s_join_info's node_renewal_bindings: None when not read) is empty, or the cluster's kubelet
    configuration ``config`` (its security fields) has no rotateCertificates. Not fatal today: the certificate the
    join gets lasts the controller-manager's --cluster-signing-duration (a year by default), and then the kubelet,
    flanneld and kube-proxy stop (docs/credentials.md)."""
    f = Findings("node_renewal")
    limit = ("so %s (node %s) keeps the client certificate its join gets until it expires (a year with the "
             "controller-manager's default --cluster-signing-duration); then its kubelet, flanneld and kube-proxy get "
             "401 Unauthorized and the node must join again (docs/credentials.md)" % (host or node_name, node_name))
    if bindings is not None and not bindings:
        f.warn(None, "the cluster has no ClusterRoleBinding of the ClusterRole "
                     "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient to the group system:nodes "
                     "(kubeadm's kubeadm:node-autoapprove-certificate-rotation), so the controller-manager approves "
                     "no node's renewal of its own client certificate, %s. Fix: %s" % (limit, NODE_RENEWAL_FIX))
    if isinstance(config, dict) and config and "rotateCertificates" not in config:
        f.warn(None, "the cluster's kubelet configuration (kube-system/kubelet-config) does not set rotateCertificates "
                     "(the kubelet's default is false), so the kubelet never renews its client certificate, %s. Fix: "
                     "add rotateCertificates: true to that ConfigMap (kubeadm's default)" % limit)
    return f.result()
