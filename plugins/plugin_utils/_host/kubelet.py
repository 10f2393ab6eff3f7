# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Decisions about the native ``kubelet`` Windows service: its command line and definition.

The kubelet runs as a real service (``--windows-service``), not behind NSSM or a wrapper script.
Because a service has a static command line, the flags kubeadm writes at join time into
``kubeadm-flags.env`` are read from the node and folded into that command line here.
"""

from __future__ import annotations

import json
import re

from ansible_collections.kubewin.nodes.plugins.module_utils import _versions as versions
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import feature_gates as fg
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import runtimes
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import service as ws
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import service_logs as sl
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host.service import split_windows_command_line

DISPLAY_NAME = "Kubernetes kubelet"
DESCRIPTION = "Kubernetes node agent (managed by kubewin.nodes)"

# Flags a kubelet release removed: passing one stops that kubelet from starting.
# Older kubeadm wrote some of them into kubeadm-flags.env, so a node joined long ago carries them.
REMOVED_FLAGS = {
    "network-plugin": (1, 24),
    "cni-bin-dir": (1, 24),
    "cni-conf-dir": (1, 24),
    "cni-cache-dir": (1, 24),
    "network-plugin-mtu": (1, 24),
    "docker-endpoint": (1, 24),
    "image-pull-progress-deadline": (1, 24),
    "experimental-dockershim-root-directory": (1, 24),
    "non-masquerade-cidr": (1, 24),
    "container-runtime": (1, 27),
    "pod-infra-container-image": (1, 34),
}
# Installers pass the pause image to the kubelet only below this version (kubeadm stopped too).
PAUSE_FLAG_BELOW = (1, 27)

# The service the kubelet talks to (Docker through cri-dockerd).
DEFAULT_DEPENDENCIES = {name: [r["cri_service"]] for name, r in runtimes.RUNTIMES.items()}

# The node log query (KEP-2258, `kubectl get --raw /api/v1/nodes/<node>/proxy/logs/?query=kubelet`): the kubelet serves
# /logs/ with queries only when its configuration has enableSystemLogHandler (default true, v1beta1 defaults.go) and
# enableSystemLogQuery (default false), and enableSystemLogQuery needs the NodeLogQuery gate (kubernetes v1.37.2
# pkg/kubelet/apis/config/validation/validation.go lines 398-403, v1.34.4 lines 352-357: the kubelet refuses to start
# otherwise; pkg/kubelet/kubelet.go line 1887). Neither field has a flag, and kubeadm writes config.yaml from the
# cluster's kubelet-config, so they go in a drop-in of --config-dir (wp.KUBELET_DROPIN_DIR).
LOG_QUERY_DROPIN = "50-kubewin-node-log-query.conf"


def log_query_config(kube_version):
    """The text of the kubelet drop-in that turns the node log query on at ``kube_version``: the two fields, and
    NodeLogQuery=true where the gate is off by default (up to 1.35; GA and locked on from 1.36, so not passed there,
    and passing it would stop the kubelet once a release removes it). A KubeletConfiguration with its apiVersion and
    kind, which mergeKubeletConfigurations requires of every drop-in (cmd/kubelet/app/server.go v1.37.2)."""
    ver = versions.parse(kube_version)
    if ver is None:
        raise ValueError("kube_version %r is not a Kubernetes version like v1.36.2 (the node log query's feature gate "
                         "depends on it)" % (kube_version,))
    try:
        gates = fg.needed_gates(ver, {"NodeLogQuery": True}, "kubelet")
    except fg.FeatureGateError as e:
        raise ValueError("%s (the node log query)" % e) from None
    doc = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
           "enableSystemLogHandler": True, "enableSystemLogQuery": True}
    if gates:
        doc["featureGates"] = gates
    # JSON is YAML, which the kubelet's file loader reads
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


_FLAG_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")


class KubeletServiceError(Exception):
    """Input that cannot produce a working kubelet service; the message names the fix."""


_GO_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
               "\\": "\\", '"': '"', "'": "'"}


def _unquote_double(body):
    """Undo Go's %q quoting, which is how kubeadm writes kubeadm-flags.env."""
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        nxt = body[i + 1:i + 2]
        if nxt in _GO_ESCAPES:
            out.append(_GO_ESCAPES[nxt])
            i += 2
        elif nxt == "x":
            out.append(chr(int(body[i + 2:i + 4], 16)))
            i += 4
        elif nxt == "u":
            out.append(chr(int(body[i + 2:i + 6], 16)))
            i += 6
        elif nxt == "U":
            out.append(chr(int(body[i + 2:i + 10], 16)))
            i += 10
        else:  # not an escape Go writes: keep the backslash (a Windows path written by hand)
            out.append(c)
            i += 1
    return "".join(out)


def parse_env_file(text):
    """Parse a kubeadm-flags.env style file into {NAME: value}.

    Values may be Go-quoted ("...", kubeadm's own form), single-quoted, or bare.
    """
    values = {}
    for lineno, raw in enumerate((text or "").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if "=" not in line:
            raise KubeletServiceError("kubeadm-flags.env line %d is not NAME=value: %r" % (lineno, raw))
        name, value = line.split("=", 1)
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = _unquote_double(value[1:-1])
        elif len(value) >= 2 and value[0] == value[-1] == "'":
            value = value[1:-1]
        values[name.strip()] = value
    return values


def flags_from_args(text, source):
    """'--a=b --c' -> [('a', 'b'), ('c', None)].

    kubeadm joins '--name=value' with spaces; the value becomes part of a Windows command line, so
    it is split the way Windows splits one (double quotes group, backslashes stay).
    """
    flags = []
    for arg in split_windows_command_line(text):
        if not arg.startswith("--"):
            raise KubeletServiceError("%s: %r is not a --flag" % (source, arg))
        name, sep, value = arg[2:].partition("=")
        flags.append((name, value if sep else None))
    return flags


def _flag_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def compute_flags(version, flags_env_text=None, extra_args=None, config_file=None, kubeconfig=None,
                  bootstrap_kubeconfig=None, cert_dir=None, pod_infra_container_image=None, config_dir=None):
    """The kubelet flags for this node, in order, and warnings for the user.

    Precedence as on Linux: base flags < kubeadm-flags.env < the user's extra_args (last wins).
    Flags the version removed are dropped from kubeadm-flags.env with a warning and refused in
    extra_args.
    """
    ver = versions.parse(version)
    if ver is None:
        raise KubeletServiceError("kubelet_version %r is not a Kubernetes version like v1.33.2 or 1.33.2" % (version,))
    warnings = []
    flags = {}

    def put(name, value):
        flags.pop(name, None)  # re-insert so the flag shows where it took effect
        flags[name] = value

    put("windows-service", None)
    for name, value in (("config", config_file), ("config-dir", config_dir),
                        ("bootstrap-kubeconfig", bootstrap_kubeconfig), ("kubeconfig", kubeconfig),
                        ("cert-dir", cert_dir)):
        if value:
            put(name, value)
    # Windows has no cgroups, and its resolver is not a resolv.conf (sig-windows-tools PrepareNode.ps1).
    put("cgroups-per-qos", "false")
    put("enforce-node-allocatable", "")
    put("resolv-conf", "")
    if pod_infra_container_image:
        if ver[:2] < PAUSE_FLAG_BELOW:
            put("pod-infra-container-image", pod_infra_container_image)
        else:
            warnings.append("pod_infra_container_image is ignored for kubelet %d.%d: from 1.27 the kubelet takes "
                            "the pause image from the container runtime's configuration" % ver[:2])

    if flags_env_text:
        env = parse_env_file(flags_env_text)
        for name, value in flags_from_args(env.get("KUBELET_KUBEADM_ARGS", ""), "kubeadm-flags.env"):
            removed = REMOVED_FLAGS.get(name)
            if removed and ver[:2] >= removed:
                warnings.append("dropped --%s from kubeadm-flags.env: kubelet %d.%d removed it in %d.%d"
                                % ((name,) + ver[:2] + removed))
                continue
            put(name, value)

    for name, value in (extra_args or {}).items():
        name = str(name)
        bare = name[2:] if name.startswith("--") else name
        if not _FLAG_NAME.match(bare):
            raise KubeletServiceError("extra_args key %r is not a kubelet flag name (use e.g. node-labels)" % name)
        removed = REMOVED_FLAGS.get(bare)
        if removed and ver[:2] >= removed:
            raise KubeletServiceError(
                "extra_args sets --%s, which kubelet %d.%d no longer accepts (removed in %d.%d); "
                "remove it from extra_args" % ((bare,) + ver[:2] + removed))
        put(bare, _flag_value(value))

    # Feature gates per version: one the kubelet does not know, or a locked one, would stop it.
    if flags.get("feature-gates"):
        variable = "extra_args feature-gates (kubewin_kubelet_extra_args)"
        try:
            gates, gate_warnings = fg.filter_user_gates(
                ver, fg.parse_feature_gates(flags["feature-gates"], variable), "kubelet", variable)
        except fg.FeatureGateError as e:
            raise KubeletServiceError(str(e)) from None
        warnings.extend(gate_warnings)
        rendered = fg.render_feature_gates(gates)
        if rendered:
            flags["feature-gates"] = rendered
        else:
            del flags["feature-gates"]
    return flags, warnings


def render_command_line(executable, flags, log_runner=None, log_file=None, version=None,
                        log_max_size_mb=sl.LOG_FILE_MAX_SIZE_MB, log_max_age_hours=sl.LOG_FILE_MAX_AGE_HOURS):
    """The service's command line; with ``log_runner`` the kubelet runs under kube-log-runner, which
    writes its output to ``log_file`` (service_logs): the kubelet has no --log-file of its own."""
    argv = [executable] + ["--%s" % k if v is None else "--%s=%s" % (k, v) for k, v in flags.items()]
    if log_runner:
        if not log_file:
            raise KubeletServiceError("log_file is needed with log_runner_path (the file kube-log-runner writes)")
        try:
            argv = sl.log_runner_argv(argv, log_file, versions.parse(version), log_runner, log_max_size_mb,
                                      log_max_age_hours)
        except ValueError as e:
            raise KubeletServiceError(str(e)) from None
    return ws.render_command_line(argv)
