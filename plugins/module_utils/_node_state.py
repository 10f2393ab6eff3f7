# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Node lifecycle decisions for Windows nodes: readiness, labels, taints, cordon and drain.

Plain functions with no Kubernetes API access, used by ``kubewin.nodes.k8s_node`` and unit-tested on
their own. The drain rules follow ``kubectl drain`` (k8s.io/kubectl/pkg/drain/filters.go): mirror
pods and DaemonSet pods are skipped, finished pods are always removable, pods with emptyDir volumes
need ``delete_emptydir_data`` and pods without a controller need ``force``; pods are removed with the
Eviction API so PodDisruptionBudgets are honoured (HTTP 429 while a budget does not allow it).
"""

from __future__ import annotations

import copy
import re

from ansible_collections.kubewin.nodes.plugins.module_utils import _windows_paths as wp

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"

_LABEL_VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_LABEL_NAME_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


class NodeStateError(Exception):
    """Invalid input, or a state that cannot be reached; the message says what to do."""


# --- reading a Node ---------------------------------------------------------------------------

def node_conditions(node):
    """``[{type, status, reason, message}]`` of a Node dict, in API order."""
    result = []
    for cond in ((node or {}).get("status") or {}).get("conditions") or []:
        if isinstance(cond, dict):
            result.append({k: cond.get(k) for k in ("type", "status", "reason", "message")})
    return result


def node_is_ready(node):
    for cond in node_conditions(node):
        if cond["type"] == "Ready":
            return cond["status"] == "True"
    return False


def node_summary(node):
    """The ``node`` result: ``exists``, ``ready``, ``conditions``, ``labels``, ``taints``, ``unschedulable``..."""
    if node is None:
        return {"exists": False, "name": None, "ready": False, "conditions": [], "labels": {}, "taints": [],
                "unschedulable": False, "kubelet_version": None, "os": None, "pod_cidr": None}
    metadata = node.get("metadata") or {}
    spec = node.get("spec") or {}
    info = (node.get("status") or {}).get("nodeInfo") or {}
    labels = dict(metadata.get("labels") or {})
    return {
        "exists": True,
        "name": metadata.get("name"),
        "ready": node_is_ready(node),
        "conditions": node_conditions(node),
        "labels": labels,
        "taints": [dict(t) for t in spec.get("taints") or []],
        "unschedulable": bool(spec.get("unschedulable")),
        "kubelet_version": info.get("kubeletVersion"),
        "os": labels.get("kubernetes.io/os") or info.get("operatingSystem"),
        # kube-proxy's source VIP on overlay networks comes from this subnet
        "pod_cidr": spec.get("podCIDR"),
    }


def format_conditions(node):
    """One line per condition: ``Ready=False (KubeletNotReady: container runtime network not ready)``."""
    lines = []
    for cond in node_conditions(node):
        text = "%s=%s" % (cond["type"], cond["status"])
        detail = ": ".join(x for x in (cond.get("reason"), cond.get("message")) if x)
        if detail:
            text += " (%s)" % detail
        lines.append(text)
    return "; ".join(lines) if lines else "(no conditions reported yet)"


def kubelet_hint(name):
    return ("Look at the kubelet service on %s: on Windows 'Get-Service kubelet' and its log %s (written by "
            "kube-log-runner; 'Get-Content -Tail 50 %s'), and the System event log for the Service Control "
            "Manager's entries; on Linux 'systemctl status kubelet' and 'journalctl -u kubelet'."
            % (name, wp.LOG_FILES["kubelet"], wp.LOG_FILES["kubelet"]))


def not_registered_message(name, timeout):
    return ("Node %s did not register with the API server within %ss. The kubelet on that host has not joined "
            "(or uses another node name: check --hostname-override). %s Also check that 'kubeadm join' succeeded "
            "there and that its bootstrap token was valid." % (name, timeout, kubelet_hint(name)))


def not_ready_message(name, node, timeout):
    return ("Node %s did not become Ready within %ss. Its conditions: %s. %s For a Windows node also check that "
            "the CNI (flannel) and kube-proxy run there (their logs: %s, %s): a node without a working pod network "
            "stays NotReady." % (name, timeout, format_conditions(node), kubelet_hint(name), wp.LOG_FILES["flanneld"],
                                 wp.LOG_FILES["kube-proxy"]))


def label_mismatches(node, required):
    """``["key=value (has: ...)"]`` for each of ``required`` the Node does not carry; empty when it has them all."""
    labels = ((node or {}).get("metadata") or {}).get("labels") or {}
    out = []
    for key in sorted(required or {}):
        want = str(required[key])
        if labels.get(key) != want:
            have = ("%r" % labels[key]) if key in labels else "no such label"
            out.append("%s=%s (has: %s)" % (key, want, have))
    return out


def not_owned_message(name, state, mismatches):
    """Why a Node is left alone: it lacks the labels that mark it as one this collection manages."""
    return ("Node %s was left alone (not %s): it lacks %s, so it is not a node this task manages. "
            "If it really is one, label it (kubectl label node %s %s) and run again; otherwise take it "
            "out of the inventory." % (name, state, ", ".join(mismatches), name,
                                       " ".join(m.split(" (")[0] for m in mismatches)))


def legacy_owned_message(name, legacy, required):
    """A Node accepted only by the labels an older release marked ownership with (nodes may write those)."""
    return ("Node %s carries the older ownership labels (%s) but not %s: accepted during the transition to labels "
            "that nodes cannot write. A scale-up or upgrade run of this node sets them; to trust only those, "
            "set kubewin_ownership_legacy_label: false." % (
                name, ", ".join("%s=%s" % kv for kv in sorted(legacy.items())),
                ", ".join("%s=%s" % kv for kv in sorted(required.items()) if legacy.get(kv[0]) != kv[1])))


def missing_node_message(name, state):
    return ("Node %s does not exist, so it cannot be %s. Check the name (kubectl get nodes) or join the node "
            "first; use state=ready to wait for it to register." % (name, state))


# --- labels and taints ------------------------------------------------------------------------

def validate_label_key(key):
    key = str(key)
    prefix, _sep, name = key.rpartition("/")
    if (not name or len(name) > 63 or not _LABEL_NAME_RE.match(name)
            or (prefix and (len(prefix) > 253 or not _DNS_SUBDOMAIN_RE.match(prefix)))):
        raise NodeStateError(
            "label or taint key %r is not valid: an optional DNS subdomain prefix and '/', then a name of at most "
            "63 characters [A-Za-z0-9_.-] starting and ending alphanumeric" % key)
    return key


def normalize_labels(labels):
    """``{key: str or None}``; numbers become strings, booleans are refused (quote them in YAML)."""
    result = {}
    for key, value in (labels or {}).items():
        key = validate_label_key(key)
        if value is None:
            result[key] = None
            continue
        if isinstance(value, bool):
            raise NodeStateError("label %s has the boolean value %s; label values are strings, quote it ('%s')"
                                 % (key, value, str(value).lower()))
        if isinstance(value, (int, float)):
            value = str(value)
        if not isinstance(value, str):
            raise NodeStateError("label %s must have a string value (or null to remove it)" % key)
        if len(value) > 63 or not _LABEL_VALUE_RE.match(value):
            raise NodeStateError("label %s value %r is not valid: at most 63 characters [A-Za-z0-9_.-], starting "
                                 "and ending alphanumeric" % (key, value))
        result[key] = value
    return result


def labels_patch(current, wanted):
    """Only the changes: ``{key: new value}`` to set and ``{key: None}`` to remove."""
    current = current or {}
    patch = {}
    for key, value in wanted.items():
        if value is None:
            if key in current:
                patch[key] = None
        elif current.get(key) != value:
            patch[key] = value
    return patch


def normalize_taints(taints):
    """List of ``{key, value, effect, state}``; ``effect`` may be omitted only with ``state: absent``."""
    result = []
    for item in taints or []:
        if not isinstance(item, dict) or not item.get("key"):
            raise NodeStateError("each taint needs a key, e.g. {key: os, value: windows, effect: NoSchedule}")
        state = item.get("state") or "present"
        if state not in ("present", "absent"):
            raise NodeStateError("taint %s: state must be present or absent" % item["key"])
        effect = item.get("effect")
        if effect is None and state == "present":
            raise NodeStateError("taint %s needs an effect (%s)" % (item["key"], ", ".join(TAINT_EFFECTS)))
        if effect is not None and effect not in TAINT_EFFECTS:
            raise NodeStateError("taint %s: effect %r is not one of %s"
                                 % (item["key"], effect, ", ".join(TAINT_EFFECTS)))
        value = item.get("value")
        if value is not None:
            value = str(value)
            if len(value) > 63 or not _LABEL_VALUE_RE.match(value):
                raise NodeStateError("taint %s value %r is not valid: at most 63 characters [A-Za-z0-9_.-]"
                                     % (item["key"], value))
        result.append({"key": validate_label_key(item["key"]), "value": value or None, "effect": effect,
                       "state": state})
    return result


def taints_after(current, wanted):
    """The Node's taint list after applying ``wanted`` (normalized); ``None`` when nothing changes.

    A taint is identified by key and effect, as ``kubectl taint`` does. Taints the task does not name
    stay as they are (including their ``timeAdded``); a changed value replaces the taint in place.
    """
    taints = [dict(t) for t in current or []]
    changed = False
    for want in wanted:
        same = [i for i, t in enumerate(taints)
                if t.get("key") == want["key"] and (want["effect"] is None or t.get("effect") == want["effect"])]
        if want["state"] == "absent":
            if same:
                taints = [t for i, t in enumerate(taints) if i not in same]
                changed = True
            continue
        new = {"key": want["key"], "effect": want["effect"]}
        if want["value"]:
            new["value"] = want["value"]
        if same:
            existing = taints[same[0]]
            if (existing.get("value") or None) != want["value"]:
                taints[same[0]] = new
                changed = True
        else:
            taints.append(new)
            changed = True
    return taints if changed else None


def node_patch(node, labels=None, taints=None, unschedulable=None):
    """The strategic merge patch for the wanted labels/taints/unschedulable, or None if nothing changes.

    Returns ``(patch, before, after)``; ``before``/``after`` show only what changes (for diff mode).
    A patch that replaces the taint list carries the Node's resourceVersion, so a taint added by someone
    else meanwhile makes it fail with 409 (the caller re-reads and retries) instead of being lost.
    """
    metadata = (node or {}).get("metadata") or {}
    spec = (node or {}).get("spec") or {}
    patch, before, after = {}, {}, {}
    if labels:
        current = metadata.get("labels") or {}
        changes = labels_patch(current, labels)
        if changes:
            patch["metadata"] = {"labels": changes}
            before["labels"] = {k: current[k] for k in changes if k in current}
            after["labels"] = {k: v for k, v in changes.items() if v is not None}
    if taints:
        new_taints = taints_after(spec.get("taints"), taints)
        if new_taints is not None:
            patch.setdefault("spec", {})["taints"] = new_taints
            patch.setdefault("metadata", {})["resourceVersion"] = metadata.get("resourceVersion")
            if not patch["metadata"]["resourceVersion"]:
                del patch["metadata"]["resourceVersion"]
            before["taints"] = [dict(t) for t in spec.get("taints") or []]
            after["taints"] = copy.deepcopy(new_taints)
    if unschedulable is not None and bool(spec.get("unschedulable")) != unschedulable:
        patch.setdefault("spec", {})["unschedulable"] = True if unschedulable else None
        before["unschedulable"] = bool(spec.get("unschedulable"))
        after["unschedulable"] = unschedulable
    if not patch:
        return None, {}, {}
    return patch, before, after


# --- drain ------------------------------------------------------------------------------------

def pod_ref(pod):
    metadata = (pod or {}).get("metadata") or {}
    return "%s/%s" % (metadata.get("namespace"), metadata.get("name"))


def pod_controller(pod):
    for owner in ((pod or {}).get("metadata") or {}).get("ownerReferences") or []:
        if isinstance(owner, dict) and owner.get("controller"):
            return owner
    return None


def pod_is_finished(pod):
    return ((pod or {}).get("status") or {}).get("phase") in ("Succeeded", "Failed")


def pod_has_emptydir(pod):
    return any(isinstance(v, dict) and "emptyDir" in v for v in ((pod or {}).get("spec") or {}).get("volumes") or [])


def classify_pods(pods, force=False, delete_emptydir_data=False):
    """Sort the pods on a node the way ``kubectl drain --ignore-daemonsets`` does.

    Returns ``evict`` (pods to evict), ``terminating`` (already being deleted: only waited for),
    ``skipped_daemonset``, ``skipped_mirror`` (``ns/name`` lists) and ``blocked`` (``(ns/name, why)``):
    pods that need ``force`` or ``delete_emptydir_data`` first.
    """
    result = {"evict": [], "terminating": [], "skipped_daemonset": [], "skipped_mirror": [], "blocked": []}
    for pod in pods or []:
        metadata = pod.get("metadata") or {}
        name = pod_ref(pod)
        controller = pod_controller(pod)
        if controller and controller.get("kind") == "DaemonSet":
            result["skipped_daemonset"].append(name)
            continue
        if MIRROR_POD_ANNOTATION in (metadata.get("annotations") or {}):
            result["skipped_mirror"].append(name)
            continue
        if metadata.get("deletionTimestamp"):
            result["terminating"].append(pod)
            continue
        if not pod_is_finished(pod):
            if pod_has_emptydir(pod) and not delete_emptydir_data:
                result["blocked"].append((name, "it uses emptyDir (local data is lost): set delete_emptydir_data=true"))
                continue
            if controller is None and not force:
                result["blocked"].append((
                    name, "it is not managed by a controller (ReplicaSet, StatefulSet, Job, ...) and would not be "
                          "recreated: set force=true to delete it anyway"))
                continue
        result["evict"].append(pod)
    return result


def blocked_message(node_name, blocked):
    return ("Cannot drain node %s: %s. Nothing was evicted." % (
        node_name, "; ".join("pod %s: %s" % (name, why) for name, why in blocked)))


def eviction_body(pod, grace_period=None):
    """The policy/v1 Eviction for a pod (its UID as precondition, so a recreated pod is not hit)."""
    metadata = pod.get("metadata") or {}
    body = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": metadata.get("name"), "namespace": metadata.get("namespace")},
    }
    delete_options = {}
    if metadata.get("uid"):
        delete_options["preconditions"] = {"uid": metadata["uid"]}
    if grace_period is not None:
        delete_options["gracePeriodSeconds"] = int(grace_period)
    if delete_options:
        body["deleteOptions"] = delete_options
    return body


def drain_timeout_message(node_name, timeout, refused, remaining):
    """``refused``: ``{ns/name: why}`` of evictions still refused (429); ``remaining``: pods not gone yet."""
    parts = ["Timed out after %ss draining node %s." % (timeout, node_name)]
    if refused:
        parts.append("Eviction was refused for %s. A PodDisruptionBudget does not allow these pods to be "
                     "disrupted now (kubectl get pdb -A): wait until its other pods are ready, scale the "
                     "workload, or relax the budget, then run the task again."
                     % "; ".join("%s (%s)" % (k, v) for k, v in sorted(refused.items())))
    gone_slow = sorted(set(remaining) - set(refused or {}))
    if gone_slow:
        parts.append("Evicted but not yet gone: %s (they are still terminating; raise wait_timeout or check "
                     "their terminationGracePeriodSeconds and finalizers)." % ", ".join(gone_slow))
    parts.append("The node stays cordoned.")
    return " ".join(parts)


def pod_still_there(pod, current_pods):
    """True if the same pod (same namespace, name and UID) is still in ``current_pods``."""
    metadata = pod.get("metadata") or {}
    for other in current_pods or []:
        m = other.get("metadata") or {}
        if (m.get("namespace"), m.get("name")) == (metadata.get("namespace"), metadata.get("name")) and (
                not metadata.get("uid") or m.get("uid") == metadata.get("uid")):
            return True
    return False
