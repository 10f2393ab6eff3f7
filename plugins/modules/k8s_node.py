#!/usr/bin/python
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: k8s_node
short_description: Wait for, label, taint, cordon, drain or delete a Kubernetes Node
version_added: 0.1.0
description:
  - Manages the Node object of a (Windows) node through its life cycle in the cluster.
  - O(state=ready) waits until the Node has registered and its C(Ready) condition is C(True). When it does
    not within O(wait_timeout), the error lists the Node's conditions and says where to look (the kubelet
    service on that host).
  - O(labels) and O(taints) are applied with every state but V(absent), changing only the labels and taints
    the task names; others on the Node are left alone. With O(state=ready) they are applied as soon as the
    Node has registered, before waiting for it to be Ready.
  - O(state=cordoned) and O(state=uncordoned) set or clear C(spec.unschedulable), like C(kubectl cordon)/C(uncordon).
  - O(state=drained) cordons the Node and evicts its pods through the Eviction API like
    C(kubectl drain --ignore-daemonsets), so PodDisruptionBudgets are honoured. DaemonSet pods and mirror
    (static) pods are skipped. Pods with emptyDir volumes need O(delete_emptydir_data), pods not managed by a
    controller need O(force); otherwise the task fails naming them before changing anything. Evictions a
    PodDisruptionBudget refuses (HTTP 429) are retried until O(wait_timeout), then the task fails naming
    the pods. The task returns once the evicted pods are gone.
  - O(state=absent) deletes the Node object (what is left to do after C(kubeadm reset), which does not).
  - Runs where the Kubernetes API is reachable with a kubeconfig, usually on the controller or
    delegated to a control-plane host.
author:
  - kubewin.nodes maintainers (@kubewin)
requirements:
  - kubernetes >= 29.0.0 (Python library)
attributes:
  check_mode:
    support: full
    details:
      - Nothing is changed. O(state=ready) does not wait in check mode; it reports the Node as it is.
      - O(state=drained) reports the pods it would evict in RV(evicted_pods).
  diff_mode:
    support: full
    details:
      - Shows the labels, taints and C(unschedulable) that change, or the Node summary that is deleted.
  platform:
    platforms: posix
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kubewin.nodes.k8s_auth
options:
  name:
    description:
      - Name of the Node, as the kubelet registers it (on Windows usually the lower-case host name).
      - Required unless O(nodes) is given.
    type: str
  nodes:
    description:
      - Several Nodes in one task (one module run, whatever their number), instead of O(name). Each is handled
        as O(name) would be, in turn, within one O(wait_timeout) for all of them.
      - O(labels) and O(taints) of the task apply to every Node, over the entry's own (a label named in both
        takes the task's value; the task's taints follow the entry's).
      - A Node that fails does not stop the others; the task then fails, naming each Node that did.
    type: list
    elements: dict
    version_added: 0.3.0
    suboptions:
      name:
        description: Name of the Node.
        type: str
        required: true
      labels:
        description: Labels of this Node, as O(labels).
        type: dict
      taints:
        description: Taints of this Node, as O(taints) (each a dict with C(key), C(value), C(effect), C(state)).
        type: list
        elements: dict
  state:
    description:
      - V(present) requires the Node to exist and applies O(labels) and O(taints).
      - V(ready) waits for the Node to register and become Ready (and applies O(labels) and O(taints)).
      - V(cordoned) marks it unschedulable; V(uncordoned) schedulable again.
      - V(drained) cordons it and evicts its pods.
      - V(absent) deletes the Node object; nothing happens if it does not exist.
    type: str
    choices: [present, ready, cordoned, uncordoned, drained, absent]
    default: present
  labels:
    description:
      - Labels to set on the Node. A value of V(null) removes that label. Labels not named are left alone.
      - Values are strings; quote values such as V('true') in YAML.
    type: dict
  taints:
    description:
      - Taints to add, update or (with C(state=absent)) remove. A taint is identified by its key and effect,
        as C(kubectl taint) does. Taints not named are left alone.
    type: list
    elements: dict
    suboptions:
      key:
        description: Taint key.
        type: str
        required: true
      value:
        description: Taint value (optional).
        type: str
      effect:
        description:
          - Taint effect. Required unless O(taints[].state=absent), where leaving it out removes the key
            with every effect.
        type: str
        choices: [NoSchedule, PreferNoSchedule, NoExecute]
      state:
        description: Whether the taint must be on the Node or not.
        type: str
        choices: [present, absent]
        default: present
  wait_timeout:
    description:
      - Seconds to wait in total, for the Node to register and become Ready (O(state=ready)), or for its
        pods to be evicted and gone (O(state=drained)).
    type: int
    default: 300
  delete_emptydir_data:
    description:
      - With O(state=drained), also evict pods that use emptyDir volumes (their local data is lost).
    type: bool
    default: false
  force:
    description:
      - With O(state=drained), also evict pods that are not managed by a controller (they are not recreated).
    type: bool
    default: false
  require_labels:
    description:
      - Act only on a Node that carries all these labels with these values (for example the label
        C(node-restriction.kubernetes.io/kubewin-managed=true) this collection sets on the nodes it joins, and
        C(kubernetes.io/os=windows)).
      - Prefer labels a node cannot write itself (the prefix C(node-restriction.kubernetes.io/), which the
        NodeRestriction admission plugin forbids kubelets to set or remove), since a label the kubelet may set is no
        proof of ownership.
      - A Node that exists without them is left exactly as it is; the task then reports no change,
        RV(owned=false) and a warning that names the Node, the missing labels and the fix.
      - Not with O(state=ready), which is what sets the labels on a new Node.
    type: dict
  accept_legacy_labels:
    description:
      - With O(require_labels), also act on a Node that carries all these labels instead (the labels an older
        release of this collection marked ownership with), with a warning that names the Node.
      - For a transition only, since such labels may be writable by the node itself.
    type: dict
  grace_period:
    description:
      - With O(state=drained), the termination grace period in seconds for evicted pods, instead of each
        pod's own C(terminationGracePeriodSeconds).
    type: int
notes:
  - The kubeconfig's user must be allowed to get, patch and delete Nodes, list Pods in all namespaces and
    create C(pods/eviction); C(/etc/kubernetes/admin.conf) can.
seealso:
  - name: Safely drain a node
    description: What kubectl drain does, and PodDisruptionBudgets.
    link: https://kubernetes.io/docs/tasks/administer-cluster/safely-drain-node/
  - module: kubewin.nodes.k8s_join_info
"""

EXAMPLES = r"""
- name: Wait for the new Windows node, then taint it for Windows workloads only
  kubewin.nodes.k8s_node:
    kubeconfig: /etc/kubernetes/admin.conf
    name: "{{ inventory_hostname_short | lower }}"
    state: ready
    wait_timeout: 600
    labels:
      node-role.kubernetes.io/windows-worker: ""
    taints:
      - key: os
        value: windows
        effect: NoSchedule
  delegate_to: "{{ groups['kube_control_plane'][0] }}"

- name: Drain before an upgrade
  kubewin.nodes.k8s_node:
    name: win-1
    state: drained
    delete_emptydir_data: true
    wait_timeout: 900

- name: Put it back into service
  kubewin.nodes.k8s_node:
    name: win-1
    state: uncordoned

- name: Remove a label and a taint
  kubewin.nodes.k8s_node:
    name: win-1
    labels:
      example.com/maintenance: null
    taints:
      - key: example.com/maintenance
        state: absent

- name: Remove the node from the cluster after kubeadm reset
  kubewin.nodes.k8s_node:
    name: win-1
    state: absent

- name: Delete it only if it is a Windows node this collection joined
  kubewin.nodes.k8s_node:
    name: win-1
    state: absent
    require_labels:
      kubernetes.io/os: windows
      node-restriction.kubernetes.io/kubewin-managed: "true"
"""

RETURN = r"""
nodes:
  description:
    - With O(nodes), the result of each Node by name (the keys RV(node), RV(owned), RV(evicted_pods) and
      RV(skipped_pods) of one Node, its C(msg), and C(changed) and C(failed)).
  returned: O(nodes) is given
  type: dict
  sample: {win-1: {changed: false, owned: true, node: {name: win-1, ready: true}, msg: Node win-1 is Ready.}}
node:
  description: The Node after the task (before it, in check mode); for O(state=absent) the Node that was deleted.
  returned: O(name) is given
  type: dict
  contains:
    exists:
      description: Whether the Node exists.
      type: bool
      sample: true
    name:
      description: Node name.
      type: str
      sample: win-1
    ready:
      description: Whether its Ready condition is True.
      type: bool
      sample: true
    conditions:
      description: Its conditions, each with C(type), C(status), C(reason), C(message).
      type: list
      elements: dict
      sample: [{type: Ready, status: "True", reason: KubeletReady, message: kubelet is posting ready status}]
    labels:
      description: Its labels.
      type: dict
      sample: {kubernetes.io/os: windows}
    taints:
      description: Its taints.
      type: list
      elements: dict
      sample: [{key: os, value: windows, effect: NoSchedule}]
    unschedulable:
      description: Whether it is cordoned.
      type: bool
      sample: false
    pod_cidr:
      description: The pod subnet the controller-manager gave the node (C(spec.podCIDR)).
      type: str
      sample: 10.244.3.0/24
    kubelet_version:
      description: Version of its kubelet.
      type: str
      sample: v1.31.4
    os:
      description: Its operating system (C(kubernetes.io/os)).
      type: str
      sample: windows
evicted_pods:
  description: Pods evicted (or that would be, in check mode), as C(namespace/name).
  returned: state is drained
  type: list
  elements: str
  sample: [default/web-5d9c7b-x2k4q]
owned:
  description:
    - Whether the Node carries every label of O(require_labels) (V(true) when O(require_labels) is not set
      or the Node does not exist). When V(false) the task changed nothing.
  returned: always
  type: bool
  sample: true
skipped_pods:
  description: Pods left on the node by a drain (DaemonSet and mirror pods), as C(namespace/name).
  returned: state is drained
  type: list
  elements: str
  sample: [kube-system/kube-proxy-windows-7xk2p]
"""

from ansible_collections.kubewin.nodes.plugins.module_utils import _node_state as ns
from ansible_collections.kubewin.nodes.plugins.module_utils._k8s import client as kc
from ansible_collections.kubewin.nodes.plugins.module_utils._k8s.client import build_apis
from ansible_collections.kubewin.nodes.plugins.module_utils._k8s.runner import run_module
from ansible_collections.kubewin.nodes.plugins.module_utils._node_task import run


def argument_spec():
    spec = dict(
        name=dict(type="str"),
        nodes=dict(type="list", elements="dict", options=dict(
            name=dict(type="str", required=True),
            labels=dict(type="dict"),
            taints=dict(type="list", elements="dict"),
        )),
        state=dict(type="str", default="present",
                   choices=["present", "ready", "cordoned", "uncordoned", "drained", "absent"]),
        labels=dict(type="dict"),
        taints=dict(type="list", elements="dict", options=dict(
            key=dict(type="str", required=True, no_log=False),
            value=dict(type="str"),
            effect=dict(type="str", choices=list(ns.TAINT_EFFECTS)),
            state=dict(type="str", choices=["present", "absent"], default="present"),
        )),
        wait_timeout=dict(type="int", default=300),
        delete_emptydir_data=dict(type="bool", default=False),
        force=dict(type="bool", default=False),
        grace_period=dict(type="int"),
        require_labels=dict(type="dict"),
        accept_legacy_labels=dict(type="dict"),
    )
    spec.update(kc.auth_argument_spec())
    return spec


def main():
    run_module(argument_spec(), run, build_apis=build_apis, mutually_exclusive=[("name", "nodes")],
               required_one_of=[("name", "nodes")])


if __name__ == "__main__":
    main()
