#!/usr/bin/python
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: k8s_daemonset_os_pin
short_description: Keep Linux DaemonSets such as kube-proxy and flannel off Windows nodes
version_added: 0.1.0
description:
  - kube-proxy and flannel tolerate every taint, so only a node selector keeps their Linux pods from being
    scheduled onto Windows nodes. This module ensures each DaemonSet of O(daemonsets) has the pod template
    nodeSelector C(kubernetes.io/os=linux).
  - A DaemonSet that already has that nodeSelector, or a required node affinity that already keeps it off
    Windows (every C(nodeSelectorTerms) entry has C(kubernetes.io/os In [linux]) or C(NotIn [windows])),
    is left untouched.
  - Others get a strategic merge patch of C(spec.template.spec.nodeSelector) only, adding the one key and
    keeping any other selector keys. Changing the pod template rolls the DaemonSet's pods once (they are
    recreated on the same Linux nodes); DaemonSets already pinned are not disturbed.
  - A DaemonSet whose nodeSelector asks for another OS (for example a Windows DaemonSet listed by mistake)
    is never changed; the task fails naming it.
  - DaemonSets that do not exist are reported in RV(missing), or fail the task with O(missing=fail).
  - Every other DaemonSet of the cluster whose Linux pods will land on Windows nodes anyway (no OS selector and a
    toleration of every taint, as kubespray's multus, cinder-csi and nvidia device plugin have) is named in
    RV(landing_on_windows) and a warning, and left as it is.
author:
  - kubewin.nodes maintainers (@kubewin)
requirements:
  - kubernetes >= 29.0.0 (Python library)
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
    details:
      - Shows the nodeSelector of each DaemonSet that is (or would be) patched, before and after.
  platform:
    platforms: posix
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kubewin.nodes.k8s_auth
options:
  daemonsets:
    description:
      - DaemonSets to pin to Linux nodes, each as C(namespace/name).
      - The default covers kubeadm's kube-proxy, flannel's own manifest and kubespray's flannel.
    type: list
    elements: str
    default: [kube-system/kube-proxy, kube-flannel/kube-flannel-ds, kube-system/kube-flannel]
  missing:
    description:
      - What to do when a DaemonSet of O(daemonsets) does not exist.
      - V(ignore) lists it in RV(missing); V(fail) fails the task before anything is changed.
    type: str
    choices: [ignore, fail]
    default: ignore
notes:
  - The kubeconfig's user must be allowed to get and patch DaemonSets in the namespaces named;
    C(/etc/kubernetes/admin.conf) can.
  - kubespray re-applies its own kube-proxy and flannel manifests on upgrade; run this again afterwards.
seealso:
  - name: Guide for scheduling Windows containers
    description: Why Linux workloads need a kubernetes.io/os node selector in mixed clusters.
    link: https://kubernetes.io/docs/concepts/windows/user-guide/
  - module: kubewin.nodes.k8s_join_info
"""

EXAMPLES = r"""
- name: Keep kube-proxy and flannel off the Windows nodes
  kubewin.nodes.k8s_daemonset_os_pin:
    kubeconfig: /etc/kubernetes/admin.conf
  delegate_to: "{{ groups['kube_control_plane'][0] }}"
  run_once: true

- name: Pin a monitoring agent too, and fail if any of them is missing
  kubewin.nodes.k8s_daemonset_os_pin:
    daemonsets:
      - kube-system/kube-proxy
      - kube-flannel/kube-flannel-ds
      - monitoring/node-exporter
    missing: fail
"""

RETURN = r"""
pinned:
  description: DaemonSets that were patched (or would be, in check mode), as C(namespace/name).
  returned: always
  type: list
  elements: str
  sample: [kube-system/kube-flannel]
already_pinned:
  description: DaemonSets that were already kept off Windows and left untouched.
  returned: always
  type: list
  elements: str
  sample: [kube-system/kube-proxy]
missing:
  description: DaemonSets of O(daemonsets) that do not exist.
  returned: always
  type: list
  elements: str
  sample: [kube-flannel/kube-flannel-ds]
landing_on_windows:
  description:
    - Other DaemonSets whose pods Windows nodes will get although they are Linux DaemonSets (no OS nodeSelector or
      affinity, and a toleration of every taint); the module warns about them and leaves them as they are.
  returned: always
  type: list
  elements: str
  sample: [kube-system/kube-multus-ds-amd64]
daemonsets:
  description:
    - Per DaemonSet, C(state) (V(pinned), V(already_pinned) or V(missing)) and C(pinned_by)
      (V(node_selector), V(node_affinity) or V(null)).
  returned: always
  type: dict
  sample:
    kube-system/kube-proxy: {state: already_pinned, pinned_by: node_selector}
    kube-system/kube-flannel: {state: pinned, pinned_by: node_selector}
"""

from ansible_collections.kubewin.nodes.plugins.module_utils import _daemonset_os as dso
from ansible_collections.kubewin.nodes.plugins.module_utils._k8s import client as kc
from ansible_collections.kubewin.nodes.plugins.module_utils._k8s.client import build_apis
from ansible_collections.kubewin.nodes.plugins.module_utils._k8s.runner import run_module


def run(module, apis):
    try:
        plan, landing = dso.survey(apis, module.params["daemonsets"])
    except dso.DaemonSetPinError as exc:
        raise kc.K8sError(str(exc)) from None
    if landing:
        module.warn(dso.landing_message(landing))
    if plan["conflicts"]:
        raise kc.K8sError(" ".join(plan["conflicts"]))
    if plan["missing"] and module.params["missing"] == "fail":
        raise kc.K8sError(dso.missing_message(plan["missing"]))

    pinned = []
    for key in plan["to_pin"]:
        namespace, name = key.split("/", 1)
        if not module.check_mode:
            try:
                kc.call(apis, "patch", "daemonsets", namespace, name, apis.apps.patch_namespaced_daemon_set,
                        name, namespace, dso.pin_patch(), not_found_ok=False,
                        _content_type=kc.STRATEGIC_MERGE_PATCH)
            except kc.K8sError as exc:
                exc.extra.update(changed=bool(pinned), pinned=pinned)
                raise
        pinned.append(key)

    result = dict(
        changed=bool(pinned),
        pinned=pinned,
        already_pinned=plan["already_pinned"],
        missing=plan["missing"],
        daemonsets=plan["daemonsets"],
        landing_on_windows=landing,
    )
    if pinned:
        result["diff"] = plan["diff"]
        result["msg"] = "%s %s to kubernetes.io/os=linux." % (
            "Would pin" if module.check_mode else "Pinned", ", ".join(pinned))
    else:
        result["msg"] = "Nothing to pin."
    if plan["missing"]:
        result["msg"] += " Not found: %s." % ", ".join(plan["missing"])
    return result


def argument_spec():
    spec = dict(
        daemonsets=dict(type="list", elements="str", default=list(dso.DEFAULT_DAEMONSETS)),
        missing=dict(type="str", choices=["ignore", "fail"], default="ignore"),
    )
    spec.update(kc.auth_argument_spec())
    return spec


def main():
    run_module(argument_spec(), run, build_apis=build_apis)


if __name__ == "__main__":
    main()
