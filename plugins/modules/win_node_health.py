#!/usr/bin/python
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: win_node_health
short_description: Check a Windows node's services, HNS, CNI configuration, credential and Node in one remote operation
version_added: 0.2.0
description:
  - Reads, in one remote operation, the state and start mode of the node's services (the runtime's, the kubelet's
    and, with O(network_services), flanneld's and kube-proxy's) and the names and types of the HNS networks, and
    judges them with the Node the Kubernetes API returned (O(node)).
  - Healthy means every service exists, is Running and is Automatic (not delayed); the pod network (O(pod_network))
    and, when given, O(external_network) exist in HNS; the Node is Ready and its C(NetworkUnavailable) condition is
    not True. A cordoned Node is a warning, not a failure.
  - In the same read, with O(network_services), the HNS endpoints the pod network needs (kube-proxy's source VIP on
    an Overlay network, flanneld's C(<network>_ep) on an L2Bridge one); the CNI configuration the runtime loads (the
    first file in name order of the directory containerd's configuration or cri-dockerd's command line names, which
    must be the collection's C(10-flannel.conf), valid JSON, naming O(pod_network)); the kubelet's client certificate
    (C(C:\var\lib\kubelet\pki\kubelet-client-current.pem), also flanneld's and kube-proxy's credential; only its
    certificate leaves the host, not its key), failed when expired, a warning per O(cert_warn_days); on a Docker host,
    Docker's network C(host) in Docker's store and, while dockerd runs, in HNS; with O(services), kube-proxy's HNS
    v2 load balancers.
  - Changes nothing; the repair is left to the caller (the kubewin.nodes.health role), in the order of RV(repair).
  - With O(report), checks nothing and reads no host, but returns the report (RV(report)) and the table (RV(table)) of
    the results of earlier checks (the last play of the collection's C(playbooks/health.yml)).
options:
  node_name:
    description: The Node's name, for the findings. Required unless O(report) is given.
    type: str
  node:
    description:
      - The Node as M(kubewin.nodes.k8s_node) returns it (C(exists), C(conditions), C(unschedulable)).
      - C(error), when set, says why the Node could not be read; it is then reported instead of the conditions.
      - Required unless O(report) is given.
    type: dict
  pod_network:
    description:
      - The HNS network flanneld creates (C(flannel.<VNI>) on vxlan, C(cbr0) on host-gw).
      - Required unless O(report) is given.
    type: str
  container_runtime:
    description:
      - The node's container runtime, whose services are checked (C(containerd), or C(docker) and C(cri-dockerd)).
      - Required unless O(report) is given.
    type: str
    choices: [containerd, docker]
  external_network:
    description: The HNS network that binds the adapter to its vSwitch (V(External) in the services mode).
    type: str
  network_services:
    description: Whether flanneld and kube-proxy run as Windows services (the services mode), so are checked.
    type: bool
    default: true
  cert_warn_days:
    description:
      - A warning when the kubelet's client certificate has fewer days left than this and is past 90 % of its life (the
        kubelet renews it at 70-90 %, so it was not renewed). An expired certificate is a failure.
    type: int
    default: 30
  services:
    description:
      - The cluster's Services and EndpointSlices, C(services) and C(endpointslices), each a list of the objects as
        the API returns them (M(kubernetes.core.k8s_info)'s C(resources)), read once for every node of the run.
      - With it, kube-proxy's load balancers in HNS (its HNS v2 load balancers, read in the same remote operation) are
        checked against them, each ClusterIP and port of a Service that has ready endpoints (except Services with
        C(internalTrafficPolicy) C(Local), whose load balancers depend on the node's own endpoints); without it, they
        are not checked.
      - A ClusterIP and port without a load balancer is a warning (kube-proxy makes them one Service at a time after
        its start or a change, and the Service may have changed since it was read), and a failure only when an earlier
        check of the run (O(load_balancers_missing_since)) found it missing O(load_balancer_wait) seconds before or
        more.
    type: dict
  load_balancers_missing_since:
    description:
      - RV(load_balancers_missing_since) of an earlier check of this node in the run, the ClusterIP:ports it found
        without a load balancer and since when.
    type: dict
  load_balancer_wait:
    description:
      - How many seconds a ClusterIP and port may have no load balancer in HNS before it is a failure. The default is
        kube-proxy's own health timeout, twice its default sync period of 30 s.
    type: int
    default: 60
  report:
    description:
      - Instead of a check, the report of checks made before, a mapping of inventory host name to this module's
        result for that host (with C(repaired), the repair steps taken, when the host was repaired), or null for a
        host that has none (unreachable, or failed before its check), which is reported unhealthy.
      - Mutually exclusive with the options of a check (O(node_name), O(node), O(pod_network), O(container_runtime),
        O(external_network), O(services)).
    type: dict
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  platform:
    platforms: windows
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
author:
  - kubewin.nodes maintainers (@kubewin)
"""

EXAMPLES = r"""
- name: Read the Node
  kubewin.nodes.k8s_node:
    name: win-1
  delegate_to: "{{ groups['kube_control_plane'] | first }}"
  register: node

- name: Check the node
  kubewin.nodes.win_node_health:
    node_name: win-1
    node: "{{ node.node }}"
    pod_network: flannel.4096
    container_runtime: containerd
    external_network: External
"""

RETURN = r"""
healthy:
  description: Whether no check failed.
  returned: success, without O(report)
  type: bool
checks:
  description:
    - One entry per check, C(check) (what), C(status) (V(ok), V(warn) or V(fail)), C(detail), C(fix) (what to do,
      or null) and C(repair) (the repair step that addresses it, or null).
  returned: success, without O(report)
  type: list
  elements: dict
  sample: [{check: pod network flannel.4096, status: fail, detail: missing from HNS (HNS restarted, or flanneld failed),
            fix: "run playbooks/repair.yml, which restarts flanneld and then kube-proxy", repair: flanneld}]
repair:
  description: The repair steps the failed checks ask for, in dependency order (V(runtime), V(docker-restart),
    V(docker-network), V(kubelet), V(flanneld), V(kube-proxy)).
  returned: success, without O(report)
  type: list
  elements: str
  sample: [flanneld, kube-proxy]
certificates:
  description: The notAfter of each credential read (C(kubelet client)), ISO 8601 in UTC, or null when unreadable.
  returned: success, without O(report)
  type: dict
  sample: {kubelet client: "2027-11-28T08:00:00Z"}
node_name:
  description: O(node_name).
  returned: success, without O(report)
  type: str
report:
  description:
    - With O(report), the machine-readable report (schema C(kubewin.nodes/health/v1)), C(schema), C(healthy) (whether
      every host is), and C(nodes), per host C(host), C(node), C(healthy), C(repaired), C(certificates) (see
      RV(certificates)) and C(checks) (C(check), C(status), C(detail), C(fix)), sorted by host.
  returned: with O(report)
  type: dict
  sample: {schema: kubewin.nodes/health/v1, healthy: true, nodes: [{host: win-1, node: win-1, healthy: true,
           repaired: [], checks: [{check: node Ready, status: ok, detail: "True", fix: null}]}]}
table:
  description: With O(report), the report as lines of text, node, check, status, detail and fix in padded columns.
  returned: with O(report)
  type: list
  elements: str
load_balancers_missing_since:
  description: The ClusterIP:ports (C(VIP:port/protocol)) that have no load balancer in HNS, each with the time (epoch
    seconds, the controller's clock) it was first found missing in the run; give it to the next check of the run.
  returned: success, without O(report)
  type: dict
  sample: {"10.96.0.10:53/UDP": 1795683600.0}
load_balancers_pending:
  description: Whether some ClusterIP:ports have had no load balancer for less than O(load_balancer_wait) (the check
    is a warning); check again, with RV(load_balancers_missing_since), until it is false.
  returned: success, without O(report)
  type: bool
runtime_services:
  description: The runtime's services that were checked (what the repair step V(runtime) starts).
  returned: success, without O(report)
  type: list
  elements: str
  sample: [containerd]
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kubewin.nodes.plugins.module_utils._windows_args import NODE_HEALTH_ARGSPEC


def main():
    module = AnsibleModule(argument_spec=NODE_HEALTH_ARGSPEC, supports_check_mode=True)
    # Reached only if the action plugin was bypassed.
    module.fail_json(msg="kubewin.nodes.win_node_health runs through its action plugin")


if __name__ == "__main__":
    main()
