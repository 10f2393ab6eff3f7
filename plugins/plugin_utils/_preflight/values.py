# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Preflight: rules across the hosts of a run (node names), every numeric option's range and every duration.

PRIVATE to the collection: no compatibility promise outside it.
"""

from __future__ import annotations

from ansible_collections.kubewin.nodes.plugins.module_utils import _go_formats as go_formats
from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight.findings import VARIABLES, Findings


def check_node_names(host, node_name, node_names):
    """Two hosts of the run with the same node name would register one Node (the second join takes it over, and
    kube-proxy fails much later): refused on each of them, naming the others."""
    f = Findings("node_names")
    var = VARIABLES["node_name"]
    if not node_name or not isinstance(node_names, dict):
        return f.result()
    mine = str(node_name).lower()
    others = sorted(h for h, n in node_names.items() if h != host and n is not None and str(n).lower() == mine)
    if others:
        f.fail(var, "node name %r is also the node name of %s in this run: each Windows host needs its own node "
                    "name; set %s for %s to a different name"
               % (node_name, ", ".join(others), var, " or ".join([host] + others) if host else "these hosts"))
    return f.result()


# ---------------------------------------------------------------------------------------------------
# numeric options and durations

# variable -> (minimum, maximum or None, integer?, why).
NUMBER_RANGES = {
    "kubewin_ready_timeout": (1, None, True, "seconds to wait for each node to be Ready"),
    "kubewin_vswitch_wait_timeout": (1, None, True, "seconds to wait for a host after its vSwitch change"),
    "kubewin_vswitch_settle_seconds": (0, None, True, "seconds to let a vSwitch change settle"),
    "kubewin_drain_timeout": (1, None, True, "seconds to wait for a drain"),
    "kubewin_log_file_max_size_mb": (1, None, True, "MiB at which kube-log-runner rotates a log"),
    "kubewin_log_file_max_age_hours": (1, None, True, "hours kube-log-runner keeps a rotated log"),
    "kubewin_containerd_log_max_files": (1, None, True, "copies of containerd's log kept"),
    "kube_apiserver_port": (1, 65535, True, "a TCP port"),
    "kubewin_prepull_timeout": (1, None, True, "seconds one pull of a kubewin_prepull_images entry may take"),
    "kubewin_prepull_retries": (0, None, True, "further pulls of an image after a failed one"),
}
_EXCLUSIVE_BOUNDS = set()

# The node-token variables of the releases that gave kube-proxy a ServiceAccount token, and their defaults: kube-proxy
# now runs with the kubelet's credential, which the kubelet rotates, so they do nothing (issue 21 point 2). Deprecated,
# removed in 1.0.0; a value other than the default warns (no range and no 30-day cap any more: nothing uses them).
DEPRECATED_TOKEN_VARS = {"kubewin_node_token_expiration_seconds": 604800, "kubewin_node_token_renew_fraction": 0.5,
                         "kubewin_node_token_allow_long_expiration": False, "kubewin_node_token_require_binding": True}


def duration_seconds(text):
    """A Go duration ('30m', '1h30m', '90s', '0') in seconds (module_utils/_go_formats, time.ParseDuration's
    syntax); None when it is none."""
    try:
        return go_formats.parse_duration(text).total_seconds()
    except go_formats.FormatError:
        return None


def _is_default(value, default):
    text = str(value).strip().lower()
    if isinstance(default, bool):
        return text in (("true", "yes", "on", "1") if default else ("false", "no", "off", "0"))
    try:
        return float(text) == float(default)
    except ValueError:
        return False


def check_deprecated_token_vars(values):
    """A warning for each deprecated node-token variable set to other than its default (DEPRECATED_TOKEN_VARS)."""
    f = Findings("deprecated")
    for var, default in DEPRECATED_TOKEN_VARS.items():
        value = (values or {}).get(var)
        if value is None or value == "" or _is_default(value, default):
            continue
        f.warn(var, "%s is deprecated and ignored: kube-proxy and flanneld run with the kubelet's credential (a client "
               "certificate the kubelet rotates itself), so no token is issued or renewed. Remove it from the "
               "inventory; kubewin.nodes 1.0.0 removes it (docs/credentials.md)." % var)
    return f.result()


def check_numbers(numbers, durations=None):
    """Every numeric option in its range, and the durations in Go's form and above zero; values from -e arrive as
    strings and count when they are numbers."""
    f = Findings("numbers")
    for var, value in sorted((numbers or {}).items()):
        if var not in NUMBER_RANGES or value is None or value == "":
            continue
        low, high, integer, what = NUMBER_RANGES[var]
        try:
            if isinstance(value, bool):
                raise ValueError(value)
            number = int(str(value).strip()) if integer else float(str(value).strip())
        except ValueError:
            f.fail(var, "%s is %r, not %s: it is %s" % (var, value, "a whole number" if integer else "a number", what))
            continue
        if var in _EXCLUSIVE_BOUNDS:
            bad = not low < number < high
        else:
            bad = number < low or (high is not None and number > high)
        if bad:
            bounds = ("between %s and %s (exclusive)" % (low, high) if var in _EXCLUSIVE_BOUNDS
                      else "from %s to %s" % (low, high) if high is not None else "at least %s" % low)
            f.fail(var, "%s is %s; it must be %s: it is %s" % (var, value, bounds, what))
    for var, value in sorted((durations or {}).items()):
        if value is None or value == "":
            continue
        seconds = duration_seconds(value)
        if seconds is None:
            f.fail(var, "%s is %r, not a Go duration: write it like 30m, 1h or 90s" % (var, value))
        elif seconds <= 0:
            f.fail(var, "%s is %r: it must be longer than zero (a bootstrap token with ttl 0 never expires)"
                   % (var, value))
    return f.result()
