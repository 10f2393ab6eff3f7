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

# variable -> (minimum, maximum or None, integer?, why); maximum for the token lifetime: the TokenRequest API's
# bound (kubernetes pkg/apis/authentication/validation: at least 10 minutes, at most 2^32 seconds).
NUMBER_RANGES = {
    "kubewin_ready_timeout": (1, None, True, "seconds to wait for each node to be Ready"),
    "kubewin_vswitch_wait_timeout": (1, None, True, "seconds to wait for a host after its vSwitch change"),
    "kubewin_vswitch_settle_seconds": (0, None, True, "seconds to let a vSwitch change settle"),
    "kubewin_drain_timeout": (1, None, True, "seconds to wait for a drain"),
    "kubewin_node_token_expiration_seconds": (600, 2 ** 32, True, "seconds a node token lives (the TokenRequest "
                                              "API takes 600 to 2^32)"),
    "kubewin_node_token_renew_fraction": (0, 1, False, "the fraction of a token's lifetime left when it is renewed, "
                                                       "between 0 and 1"),
    "kube_apiserver_port": (1, 65535, True, "a TCP port"),
}
_EXCLUSIVE_BOUNDS = {"kubewin_node_token_renew_fraction"}


def duration_seconds(text):
    """A Go duration ('30m', '1h30m', '90s', '0') in seconds (module_utils/_go_formats, time.ParseDuration's
    syntax); None when it is none."""
    try:
        return go_formats.parse_duration(text).total_seconds()
    except go_formats.FormatError:
        return None


# The longest node-token lifetime accepted unless kubewin_node_token_allow_long_expiration (security-2 N6; the
# module k8s_node_credentials refuses the same: module_utils/_node_credentials.MAX_EXPIRATION_SECONDS).
TOKEN_CAP_SECONDS = 30 * 24 * 3600


def check_numbers(numbers, durations=None, allow_long_expiration=False):
    """Every numeric option in its range, and the durations in Go's form and above zero; values from -e arrive as
    strings and count when they are numbers."""
    f = Findings("numbers")
    lifetime = (numbers or {}).get("kubewin_node_token_expiration_seconds")
    if str(allow_long_expiration).strip().lower() not in ("true", "yes", "1", "on"):
        try:
            too_long = int(str(lifetime).strip()) > TOKEN_CAP_SECONDS
        except ValueError:
            too_long = False  # not a number: said below
        if too_long:
            f.fail("kubewin_node_token_expiration_seconds",
                   "kubewin_node_token_expiration_seconds is %s, more than %d (30 days): a copied token would work "
                   "that long. Renew more often instead (re-run scale_up.yml on a schedule), or set "
                   "kubewin_node_token_allow_long_expiration: true to accept it" % (lifetime, TOKEN_CAP_SECONDS))
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
