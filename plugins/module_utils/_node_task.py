# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What ``kubewin.nodes.k8s_node`` does to a Node: wait for it, label, taint, cordon, drain or delete it.

The module's ``run(module, apis)`` and its ``NodeTask``, which reads and patches the Node, evicts its pods
and waits, with the decisions from ``_node_state``. The module file keeps its documentation, argument
spec and ``main()``. PRIVATE to the collection: no compatibility promise outside it.
"""

from __future__ import annotations

from ansible_collections.kubewin.nodes.plugins.module_utils import _node_state as ns
from ansible_collections.kubewin.nodes.plugins.module_utils._k8s import client as kc
from ansible_collections.kubewin.nodes.plugins.module_utils._k8s import waiter

POLL_INTERVAL = 2.0
EVICTION_RETRY_INTERVAL = 5.0
PATCH_ATTEMPTS = 5


class NodeTask(object):
    def __init__(self, module, apis, params=None, deadline=None):
        self.module = module
        self.apis = apis
        self.params = params or module.params
        self.name = self.params["name"]
        self.check = module.check_mode
        self.deadline = deadline or waiter.Deadline(self.params["wait_timeout"])
        self.timeout = self.deadline.timeout
        self.changed = False
        self.diff_before = {}
        self.diff_after = {}
        self.required = {}
        self.legacy = {}

    def fail(self, msg, **extra):
        extra.setdefault("changed", self.changed)
        raise kc.K8sError(msg, **extra)

    def get_node(self):
        return kc.call(self.apis, "get", "nodes", None, self.name, self.apis.core.read_node, self.name)

    def list_pods(self):
        result = kc.call(self.apis, "list", "pods", None, None, self.apis.core.list_pod_for_all_namespaces,
                         field_selector="spec.nodeName=%s" % self.name, not_found_ok=False)
        return (result or {}).get("items") or []

    # -- waits ------------------------------------------------------------------------------------

    def wait_for(self, predicate):
        """Poll the Node until predicate(node) or the deadline; returns ``(last Node read, done)``."""
        return waiter.poll(self.deadline, POLL_INTERVAL, self.get_node, predicate)

    # -- labels, taints, unschedulable ------------------------------------------------------------

    def apply(self, node, labels, taints, unschedulable):
        for _attempt in range(PATCH_ATTEMPTS):
            patch, before, after = ns.node_patch(node, labels, taints, unschedulable)
            if patch is None:
                return node
            self.changed = True
            for key, value in before.items():
                self.diff_before.setdefault(key, value)
            self.diff_after.update(after)
            if self.check:
                return node
            try:
                return kc.call(self.apis, "patch", "nodes", None, self.name, self.apis.core.patch_node,
                               self.name, patch, not_found_ok=False, _content_type=kc.STRATEGIC_MERGE_PATCH)
            except kc.K8sError as exc:
                if exc.status != 409:
                    exc.extra.setdefault("changed", False)
                    raise
            node = self.get_node()
            if node is None:
                self.fail("Node %s was deleted while this task was changing it." % self.name)
        self.fail("Node %s kept changing while this task patched it (HTTP 409 %d times); run the task again."
                  % (self.name, PATCH_ATTEMPTS))

    # -- drain ------------------------------------------------------------------------------------

    def drain(self, sorted_pods, result):
        to_evict = sorted_pods["evict"]
        result["evicted_pods"] = [ns.pod_ref(p) for p in to_evict]
        result["skipped_pods"] = sorted_pods["skipped_daemonset"] + sorted_pods["skipped_mirror"]
        if to_evict:
            self.changed = True
        if self.check:
            return
        refused = {}  # pod -> why the API refused its eviction for now (429)
        pending = to_evict

        def evict_pending():
            nonlocal pending
            pending = self.evict(pending, refused)
            return pending

        _pending, done = waiter.poll(self.deadline, EVICTION_RETRY_INTERVAL, evict_pending, lambda left: not left)
        if not done:
            self.fail(ns.drain_timeout_message(self.name, self.timeout, refused, [ns.pod_ref(p) for p in pending]),
                      evicted_pods=[r for r in result["evicted_pods"] if r not in refused])

        waiting = to_evict + sorted_pods["terminating"]

        def still_there():
            nonlocal waiting
            if waiting:
                current = self.list_pods()
                waiting = [p for p in waiting if ns.pod_still_there(p, current)]
            return waiting

        _waiting, done = waiter.poll(self.deadline, POLL_INTERVAL, still_there, lambda left: not left)
        if not done:
            self.fail(ns.drain_timeout_message(self.name, self.timeout, {}, [ns.pod_ref(p) for p in waiting]),
                      evicted_pods=result["evicted_pods"])

    def evict(self, pods, refused):
        """Ask for the eviction of each pod; returns those the API refused for now (HTTP 429)."""
        still = []
        for pod in pods:
            metadata = pod["metadata"]
            try:
                kc.call(self.apis, "create", "pods/eviction", metadata["namespace"], metadata["name"],
                        self.apis.core.create_namespaced_pod_eviction, metadata["name"], metadata["namespace"],
                        ns.eviction_body(pod, self.params["grace_period"]), not_found_ok=True)
                refused.pop(ns.pod_ref(pod), None)
            except kc.K8sError as exc:
                if exc.status == 429:
                    refused[ns.pod_ref(pod)] = exc.detail or "Too Many Requests"
                    still.append(pod)
                elif exc.status == 409:  # the UID precondition: the pod was replaced, which is done
                    refused.pop(ns.pod_ref(pod), None)
                else:
                    raise
        return still

    # -- states -----------------------------------------------------------------------------------

    def mismatches(self, node):
        """The required labels the Node lacks; none when it carries all of them, or (during a transition from
        an older labelling) all of accept_legacy_labels instead."""
        mismatches = ns.label_mismatches(node, self.required) if node is not None else []
        if mismatches and self.legacy and not ns.label_mismatches(node, self.legacy):
            return []
        return mismatches

    def owned(self, node, state):
        """False (and a warning) when the Node exists without the required labels: then nothing is changed."""
        mismatches = self.mismatches(node)
        if mismatches:
            self.module.warn(ns.not_owned_message(self.name, state, mismatches))
        elif node is not None and self.legacy and ns.label_mismatches(node, self.required):
            self.module.warn(ns.legacy_owned_message(self.name, self.legacy, self.required))
        return not mismatches

    def absent(self):
        node = self.get_node()
        if not self.owned(node, "deleted"):
            return dict(node=ns.node_summary(node), owned=False,
                        msg=ns.not_owned_message(self.name, "deleted", self.mismatches(node)))
        summary = ns.node_summary(node)
        if node is not None:
            self.changed = True
            self.diff_before = summary
            if not self.check:
                kc.call(self.apis, "delete", "nodes", None, self.name, self.apis.core.delete_node, self.name)
        verb = "would be deleted" if self.check else "deleted"
        msg = ("Node %s %s." % (self.name, verb)) if node is not None else "Node %s does not exist." % self.name
        return dict(node=summary, msg=msg, owned=True)

    def run(self):
        params = self.params
        state = params["state"]
        try:
            labels = ns.normalize_labels(params["labels"])
            taints = ns.normalize_taints(params["taints"])
        except ns.NodeStateError as exc:
            raise kc.K8sError(str(exc)) from None
        if params["require_labels"]:
            if state == "ready":
                raise kc.K8sError("require_labels cannot be used with state=ready, which sets the labels of a "
                                  "new Node.")
            try:
                self.required = ns.normalize_labels(params["require_labels"])
            except ns.NodeStateError as exc:
                raise kc.K8sError("require_labels: %s" % exc) from None
            if None in self.required.values():
                raise kc.K8sError("require_labels: every label needs a value (null is not allowed here).")
        if params.get("accept_legacy_labels"):
            if not params["require_labels"]:
                raise kc.K8sError("accept_legacy_labels is an alternative to require_labels: set require_labels "
                                  "too.")
            try:
                self.legacy = ns.normalize_labels(params["accept_legacy_labels"])
            except ns.NodeStateError as exc:
                raise kc.K8sError("accept_legacy_labels: %s" % exc) from None
            if None in self.legacy.values():
                raise kc.K8sError("accept_legacy_labels: every label needs a value (null is not allowed here).")
        if state == "absent":
            if labels or taints:
                raise kc.K8sError("labels and taints cannot be used with state=absent (the Node is deleted).")
            return self.absent()

        node = self.get_node()
        result = {}
        msg = []
        if node is None and state == "ready":
            if self.check:
                self.changed = bool(labels or taints)
                return dict(node=ns.node_summary(None),
                            msg="Check mode: Node %s has not registered yet; not waiting for it." % self.name)
            node, ok = self.wait_for(lambda n: n is not None)
            if not ok:
                self.fail(ns.not_registered_message(self.name, self.timeout), node=ns.node_summary(None))
        elif node is None:
            raise kc.K8sError(ns.missing_node_message(self.name, state))
        if not self.owned(node, state):
            return dict(node=ns.node_summary(node), owned=False, msg=ns.not_owned_message(
                self.name, state, self.mismatches(node)))

        sorted_pods = None
        if state == "drained":
            sorted_pods = ns.classify_pods(self.list_pods(), params["force"], params["delete_emptydir_data"])
            if sorted_pods["blocked"]:
                raise kc.K8sError(ns.blocked_message(self.name, sorted_pods["blocked"]))

        unschedulable = {"cordoned": True, "drained": True, "uncordoned": False}.get(state)
        node = self.apply(node, labels, taints, unschedulable)
        if self.changed:
            msg.append("Node %s %s." % (self.name, "would be updated" if self.check else "updated"))

        if sorted_pods is not None:
            self.drain(sorted_pods, result)
            if result["evicted_pods"]:
                msg.append("%s %d pod(s)." % ("Would evict" if self.check else "Evicted", len(result["evicted_pods"])))

        if state == "ready":
            if ns.node_is_ready(node):
                pass
            elif self.check:
                msg.append("Check mode: Node %s is not Ready; not waiting for it." % self.name)
            else:
                node, ok = self.wait_for(lambda n: n is None or ns.node_is_ready(n))
                if node is None:
                    self.fail("Node %s was deleted while waiting for it to become Ready." % self.name)
                if not ok:
                    self.fail(ns.not_ready_message(self.name, node, self.timeout), node=ns.node_summary(node))
            if not msg:
                msg.append("Node %s is Ready." % self.name)
        if sorted_pods is not None and not self.check:
            node = self.get_node() or node
        result["node"] = ns.node_summary(node)
        result["owned"] = True
        result["msg"] = " ".join(msg) or "Node %s is already as wanted." % self.name
        return result


def node_params(params, entry):
    """The parameters of one entry of ``nodes``: its name, the entry's labels with the task's over them, and the
    entry's taints followed by the task's."""
    labels = dict(entry.get("labels") or {}, **(params["labels"] or {}))
    taints = list(entry.get("taints") or []) + list(params["taints"] or [])
    return dict(params, name=entry["name"], labels=labels or None, taints=taints or None, nodes=None)


def run_one(module, apis, params=None, deadline=None):
    task = NodeTask(module, apis, params, deadline)
    try:
        result = task.run()
    except kc.K8sError as exc:
        exc.extra.setdefault("changed", task.changed)
        raise
    result["changed"] = task.changed
    if task.changed:
        result["diff"] = dict(before=task.diff_before, after=task.diff_after)
    return result


def run(module, apis):
    params = module.params
    if not params.get("nodes"):
        return run_one(module, apis)
    # One task for every Node (one Python start on the control-plane host, whatever their number): each in
    # turn, within one wait_timeout for all; a Node that fails does not stop the others, and the task fails
    # at the end naming each that did.
    deadline = waiter.Deadline(params["wait_timeout"])
    names = [entry["name"] for entry in params["nodes"]]
    if len(set(names)) != len(names):
        raise kc.K8sError("nodes: each Node may be named once (%s)." % ", ".join(sorted(
            n for n in set(names) if names.count(n) > 1)))
    results, errors, before, after = {}, [], {}, {}
    for entry in params["nodes"]:
        try:
            one = run_one(module, apis, node_params(params, entry), deadline)
        except kc.K8sError as exc:
            errors.append(exc.msg)
            one = dict(exc.extra, failed=True, msg=exc.msg)
        diff = one.pop("diff", None)
        if diff:
            before[entry["name"]], after[entry["name"]] = diff["before"], diff["after"]
        results[entry["name"]] = one
    changed = any(r.get("changed") for r in results.values())
    if errors:
        raise kc.K8sError(" ".join(errors), changed=changed, nodes=results)
    result = dict(changed=changed, nodes=results, owned=all(r.get("owned", True) for r in results.values()),
                  msg=" ".join(r["msg"] for r in results.values() if r.get("msg")))
    if changed:
        result["diff"] = dict(before=before, after=after)
    return result
