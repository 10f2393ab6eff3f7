# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Feature gates of the Windows node components, per Kubernetes minor version.

A component exits at start-up when ``--feature-gates`` names a gate its version does not know
("unrecognized feature gate: X") or sets a locked gate to another value ("cannot set feature gate
X to false, feature is locked to true"): k8s.io/component-base v0.37.2
featuregate/feature_gate.go ``unsafeSetFromMap``. A GA gate is locked to its default and removed a
few releases later, after which passing it at all stops the component. So the flags are rendered
per version: a gate is passed only when the version knows it, has not locked it, and its default
is not already the value wanted.

The table holds the versioned specs of the gates that matter on Windows, as
k8s.io/kubernetes pkg/features/kube_features.go declares them (``defaultVersionedKubernetesFeatureGates``),
read at v1.36.3 (lines 2111-2135) and v1.37.2 (lines 2282-2306), identical in both; NodeLogQuery read at v1.34.4
(lines 1512-1515), v1.35.4 (1571-1574), v1.36.3 (1726-1730) and v1.37.2 (1908-1912): Beta and off up to 1.35, GA
and locked on from 1.36 ("remove in 1.39"). Each entry is
(first minor, default, pre-release, locked); ``REMOVED`` holds the minor from which a gate is
gone from the code. Gates not in the table are passed through unchanged: this module cannot judge
them.
"""

from __future__ import annotations

# name -> [((major, minor), default, pre_release, locked), ...] in version order
GATES = {
    "NodeLogQuery": [((1, 27), False, "Alpha", False), ((1, 30), False, "Beta", False), ((1, 36), True, "GA", True)],
    "WinDSR": [((1, 14), False, "Alpha", False), ((1, 33), True, "Beta", False), ((1, 34), True, "GA", True)],
    "WinOverlay": [((1, 14), False, "Alpha", False), ((1, 20), True, "Beta", False), ((1, 34), True, "GA", True)],
    "WindowsCPUAndMemoryAffinity": [((1, 32), False, "Alpha", False)],
    "WindowsGracefulNodeShutdown": [((1, 32), False, "Alpha", False), ((1, 34), True, "Beta", False)],
    "WindowsHostNetwork": [((1, 26), False, "Alpha", False), ((1, 33), False, "Deprecated", False)],
}
# name -> (major, minor) of the first release without the gate. None of these gates is removed in
# the releases read (up to v1.37.2); an entry goes here when a release drops one.
REMOVED = {}


class FeatureGateError(Exception):
    """A feature gate the component of that version would refuse; the message names the fix."""


def gate_spec(name, version):
    """The spec of gate ``name`` at ``version`` ((major, minor, ...)): {default, pre_release, locked},
    None when the table does not know the gate, or "unknown" when that version does not know it."""
    specs = GATES.get(name)
    if specs is None:
        return None
    ver = tuple(version[:2])
    removed = REMOVED.get(name)
    if ver < specs[0][0] or (removed and ver >= removed):
        return "unknown"
    current = [s for s in specs if s[0] <= ver][-1]
    return {"default": current[1], "pre_release": current[2], "locked": current[3]}


def parse_feature_gates(text, source):
    """'A=true,B=false' -> {'A': True, 'B': False}, as the --feature-gates flag parses it."""
    gates = {}
    for item in str(text or "").split(","):
        item = item.strip()
        if not item:
            continue
        name, sep, value = item.partition("=")
        value = value.strip().lower()
        if not sep or value not in ("true", "false"):
            raise FeatureGateError("%s: %r is not a feature gate setting like WinDSR=true" % (source, item))
        gates[name.strip()] = value == "true"
    return gates


def render_feature_gates(gates):
    """{'A': True} -> 'A=true' (sorted, like the component prints them), or None when empty."""
    if not gates:
        return None
    return ",".join("%s=%s" % (k, "true" if v else "false") for k, v in sorted(gates.items()))


def _v(version):
    return "%d.%d" % tuple(version[:2])


def needed_gates(version, wanted, component):
    """The gates a component must get so that ``wanted`` ({name: bool}) holds at ``version``.

    For what the collection itself needs (e.g. WinOverlay on for an overlay kube-proxy): a gate
    whose default already is the value wanted is left out, so nothing is passed once a gate is
    on by default (and later locked and removed). Raises when the version cannot give the value.
    """
    out = {}
    for name, value in sorted(wanted.items()):
        spec = gate_spec(name, version)
        if spec is None:
            out[name] = value
            continue
        if spec == "unknown":
            raise FeatureGateError("%s %s does not know the feature gate %s, which is needed; use a newer "
                                   "kube_version" % (component, _v(version), name))
        if spec["default"] == value:
            continue
        if spec["locked"]:
            raise FeatureGateError("%s %s has the feature gate %s locked to %s" % (
                component, _v(version), name, str(spec["default"]).lower()))
        out[name] = value
    return out


def filter_user_gates(version, gates, component, variable):
    """Check the gates a user asked for against ``version``: (gates to pass, warnings).

    A gate the version does not know, or a locked gate set to another value, would stop the
    component: refused with the fix. A locked gate set to its locked value is dropped with a
    warning (it changes nothing, and the release that removes the gate would refuse to start).
    """
    out, warnings = {}, []
    for name, value in gates.items():
        spec = gate_spec(name, version)
        if spec is None:
            out[name] = value
        elif spec == "unknown":
            raise FeatureGateError(
                "%s sets the feature gate %s=%s, which %s %s does not know (it would refuse to start with "
                "'unrecognized feature gate: %s'); remove it from %s" % (
                    variable, name, str(value).lower(), component, _v(version), name, variable))
        elif spec["locked"] and spec["default"] != value:
            raise FeatureGateError(
                "%s sets the feature gate %s=%s, but %s %s has it locked to %s (GA): it would refuse to start; "
                "remove it from %s" % (variable, name, str(value).lower(), component, _v(version),
                                       str(spec["default"]).lower(), variable))
        elif spec["locked"]:
            warnings.append("dropped the feature gate %s=%s from %s: %s %s has it locked to that value (GA), and "
                            "the release that removes the gate refuses to start when it is passed"
                            % (name, str(value).lower(), variable, component, _v(version)))
        else:
            out[name] = value
    return out, warnings
