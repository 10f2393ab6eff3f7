# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Keeping Linux DaemonSets off Windows nodes: decide which DaemonSets need ``kubernetes.io/os: linux``.

Plain functions with no Kubernetes API access but ``survey`` (the reads), used by
``kubewin.nodes.k8s_daemonset_os_pin`` and ``kubewin.nodes.k8s_join_info`` and unit-tested on their own.
kube-proxy and flannel tolerate every taint, so only a nodeSelector or a required node affinity on
``kubernetes.io/os`` keeps them off Windows nodes. A DaemonSet already kept off Windows either way is left
untouched (changing its pod template would roll all its pods).
"""

from __future__ import annotations

import copy

from ansible_collections.kubewin.nodes.plugins.module_utils._k8s import client as kc

OS_LABEL = "kubernetes.io/os"
LINUX = "linux"
WINDOWS = "windows"
DEFAULT_DAEMONSETS = ["kube-system/kube-proxy", "kube-flannel/kube-flannel-ds", "kube-system/kube-flannel"]


class DaemonSetPinError(Exception):
    """Invalid input, or a DaemonSet this module must not change."""


def parse_refs(refs):
    """``["ns/name", ...]`` -> list of ``(ns, name)``, order kept, duplicates dropped."""
    result = []
    for ref in refs or []:
        parts = str(ref).strip().split("/")
        if len(parts) != 2 or not all(parts):
            raise DaemonSetPinError("daemonsets entry %r must be written as namespace/name, e.g. kube-system/kube-proxy"
                                    % (ref,))
        item = (parts[0], parts[1])
        if item not in result:
            result.append(item)
    return result


def ref(namespace, name):
    return "%s/%s" % (namespace, name)


def pod_spec(daemonset):
    return (((daemonset or {}).get("spec") or {}).get("template") or {}).get("spec") or {}


def _term_excludes_windows(term):
    """A nodeSelectorTerm that no Windows node can match (its matchExpressions are ANDed)."""
    for expr in (term or {}).get("matchExpressions") or []:
        if not isinstance(expr, dict) or expr.get("key") != OS_LABEL:
            continue
        values = [str(v) for v in expr.get("values") or []]
        operator = expr.get("operator")
        if operator == "In" and values and WINDOWS not in values:
            return True
        if operator == "NotIn" and WINDOWS in values:
            return True
    return False


def affinity_excludes_windows(spec):
    """True when the required node affinity keeps the pods off Windows nodes.

    The terms of ``requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms`` are ORed, so
    every term must exclude Windows (``kubernetes.io/os In [linux]`` or ``NotIn [windows]``).
    """
    terms = _required_terms(spec)
    return bool(terms) and all(_term_excludes_windows(t) for t in terms)


def pin_status(daemonset):
    """How a DaemonSet is kept to Linux nodes.

    Returns ``(how, conflict)``: ``how`` is ``node_selector``, ``node_affinity`` or None (not pinned);
    ``conflict`` is a message when its nodeSelector asks for another OS (then it is not touched).
    """
    spec = pod_spec(daemonset)
    selector = spec.get("nodeSelector") or {}
    value = selector.get(OS_LABEL)
    if value == LINUX:
        return "node_selector", None
    name = ref((daemonset.get("metadata") or {}).get("namespace"), (daemonset.get("metadata") or {}).get("name"))
    if value is not None:
        return None, ("DaemonSet %s has nodeSelector %s=%s, so it is not a Linux DaemonSet; remove it from "
                      "daemonsets (this module only pins Linux DaemonSets)." % (name, OS_LABEL, value))
    if affinity_excludes_windows(spec):
        return "node_affinity", None
    return None, None


def tolerates_every_taint(spec):
    """A toleration with ``operator: Exists`` and no key matches every taint (core/v1 Toleration; an empty effect
    matches every effect), so tainting Windows nodes does not keep these pods off them."""
    for toleration in (spec or {}).get("tolerations") or []:
        if (isinstance(toleration, dict) and toleration.get("operator") == "Exists" and not toleration.get("key")
                and toleration.get("effect") in (None, "", "NoSchedule")):
            return True
    return False


def landing_on_windows(daemonsets, refs):
    """``ns/name`` of the DaemonSets, other than ``refs``, whose pods Windows nodes will get although they are
    not Windows DaemonSets: no OS nodeSelector or affinity, and a toleration of every taint (kubespray's
    multus, cinder-csi and nvidia device plugin do this), so the taint the sample gives Windows nodes does not
    help. Sorted."""
    skip = set(ref(ns, name) for ns, name in refs)
    found = []
    for daemonset in daemonsets or []:
        meta = (daemonset or {}).get("metadata") or {}
        key = ref(meta.get("namespace"), meta.get("name"))
        spec = pod_spec(daemonset)
        if key in skip or (spec.get("nodeSelector") or {}).get(OS_LABEL) is not None:
            continue
        if affinity_excludes_windows(spec) or not tolerates_every_taint(spec):
            continue
        if any(WINDOWS in [str(v) for v in (e or {}).get("values") or []]
               for t in _required_terms(spec) for e in (t or {}).get("matchExpressions") or []
               if (e or {}).get("key") == OS_LABEL and (e or {}).get("operator") == "In"):
            continue  # a DaemonSet meant for Windows nodes too
        found.append(key)
    return sorted(found)


def _required_terms(spec):
    required = (((spec or {}).get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution") or {}
    return required.get("nodeSelectorTerms") or []


def landing_message(keys):
    return ("DaemonSet(s) %s have no OS nodeSelector and tolerate every taint, so their (Linux) pods will also be "
            "scheduled on the Windows nodes and fail there. Add them to kubewin_pin_daemonsets (this module's "
            "daemonsets) to pin them to kubernetes.io/os=linux, or give them an OS nodeSelector where they are "
            "deployed (kubespray re-applies its own manifests)." % ", ".join(keys))


def pin_patch():
    """Strategic merge patch adding ``kubernetes.io/os: linux`` to the pod template's nodeSelector only."""
    return {"spec": {"template": {"spec": {"nodeSelector": {OS_LABEL: LINUX}}}}}


def plan(refs, found):
    """Decide what to do.

    ``refs``: list of ``(ns, name)``; ``found``: ``{(ns, name): DaemonSet dict or None}``.
    Returns a dict with ``to_pin``/``already_pinned``/``missing`` (lists of ``ns/name``),
    ``conflicts`` (messages), ``daemonsets`` (per DaemonSet: ``state`` and ``pinned_by``) and
    ``diff`` (``before``/``after`` nodeSelectors of those to pin).
    """
    result = {"to_pin": [], "already_pinned": [], "missing": [], "conflicts": [], "daemonsets": {},
              "diff": {"before": {}, "after": {}}}
    for namespace, name in refs:
        key = ref(namespace, name)
        daemonset = found.get((namespace, name))
        if daemonset is None:
            result["missing"].append(key)
            result["daemonsets"][key] = {"state": "missing", "pinned_by": None}
            continue
        how, conflict = pin_status(daemonset)
        if conflict:
            result["conflicts"].append(conflict)
            result["daemonsets"][key] = {"state": "conflict", "pinned_by": None}
        elif how:
            result["already_pinned"].append(key)
            result["daemonsets"][key] = {"state": "already_pinned", "pinned_by": how}
        else:
            result["to_pin"].append(key)
            result["daemonsets"][key] = {"state": "pinned", "pinned_by": "node_selector"}
            before = copy.deepcopy(pod_spec(daemonset).get("nodeSelector") or {})
            after = dict(before)
            after[OS_LABEL] = LINUX
            result["diff"]["before"][key] = {"nodeSelector": before}
            result["diff"]["after"][key] = {"nodeSelector": after}
    return result


def survey(apis, daemonsets):
    """``(plan, landing on Windows)`` of the DaemonSets named (``ns/name``), read through ``apis``: what
    k8s_daemonset_os_pin decides and k8s_join_info reports (the only Kubernetes API reads here)."""
    refs = parse_refs(daemonsets)
    found = {}
    for namespace, name in refs:
        found[(namespace, name)] = kc.call(apis, "get", "daemonsets", namespace, name,
                                           apis.apps.read_namespaced_daemon_set, name, namespace)
    listed = kc.call(apis, "list", "daemonsets", None, None, apis.apps.list_daemon_set_for_all_namespaces) or {}
    return plan(refs, found), landing_on_windows(listed.get("items"), refs)


def missing_message(missing):
    return ("DaemonSet(s) %s do not exist. Check the names (namespace/name), or set missing=ignore when a "
            "cluster may not have them." % ", ".join(missing))
