#!/usr/bin/python
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: win_host_service
short_description: Run a Kubernetes node component (kube-proxy, flanneld) as a native Windows service
version_added: 0.1.0
description:
  - Registers, updates or removes a Windows service that runs a node component directly, with start mode
    automatic, service dependencies, its own environment, and recovery actions that restart it after a crash or a
    non-zero exit.
  - Idempotent, comparing the command line as parsed arguments, dependencies, environment, start mode and
    recovery. A running service is restarted only when its definition changed.
  - The program must speak the Service Control Manager protocol (for example C(kube-proxy --windows-service)).
  - Use M(kubewin.nodes.win_kubelet_service) for the kubelet, whose flags also come from C(kubeadm-flags.env).
options:
  name:
    description: Service name.
    type: str
    required: true
  state:
    description:
      - V(started) registers or updates the service and makes sure it runs; V(present) leaves the run state alone
        (restarting a running service whose definition changed); V(stopped) stops it; V(absent) removes it.
    type: str
    choices: [present, started, stopped, absent]
    default: started
  path:
    description: Path of the program on the node. Required unless O(state=absent).
    type: str
  args:
    description:
      - Arguments, one list item each; quoted for the Windows command line by the module.
      - Not together with O(kube_proxy), which makes them.
    type: list
    elements: str
    default: []
  kube_proxy:
    description:
      - Run O(path) as kube-proxy on a flannel network, with the arguments the module makes from these values, under
        C(C:\k\kube-log-runner.exe), which writes kube-proxy's output to
        O(kube_proxy.log_file) (kube-proxy has no C(--log-file)).
      - 'kube-proxy gets C(--windows-service), C(--proxy-mode=kernelspace), the kubelet''s kubeconfig
        (C(C:\etc\kubernetes\kubelet.conf): kube-proxy runs as its node), C(--hostname-override),
        C(--cluster-cidr), C(--network-name) (C(flannel.<vni>) for vxlan, C(cbr0) for host-gw), C(--v=2), the
        C(WinOverlay) feature gate on vxlan where O(kube_proxy.version) has it off by default, and on vxlan
        C(--source-vip): the last usable address of O(kube_proxy.pod_cidr), which
        M(kubewin.nodes.win_host_files) O(kubewin.nodes.win_host_files#module:source_vip_reservation) keeps from
        pods.'
      - O(log_files) defaults to O(kube_proxy.log_file).
      - Fails before any change, naming the value, for a malformed version, or on vxlan for a missing pod subnet or
        one with no room for the source VIP.
    type: dict
    suboptions:
      node_name:
        description: The Node's name (C(--hostname-override)).
        type: str
        required: true
      cluster_cidr:
        description: The cluster's pod network (C(--cluster-cidr)).
        type: str
        required: true
      backend:
        description: The flannel backend.
        type: str
        required: true
        choices: [vxlan, host-gw]
      vni:
        description: The VXLAN VNI (names the vxlan network).
        type: int
        default: 4096
      pod_cidr:
        description: The node's pod subnet (its Node's C(spec.podCIDR)); required for vxlan.
        type: str
      version:
        description: The Kubernetes version of kube-proxy and kube-log-runner, for example C(v1.37.2).
        type: str
        required: true
      log_file:
        description: The file kube-log-runner writes kube-proxy's output to.
        type: str
        default: C:\var\log\kube-proxy\kube-proxy.log
      log_file_max_size_mb:
        description:
          - kube-log-runner rotates O(kube_proxy.log_file) when it would grow past this many MiB
            (C(-log-file-size)), from Kubernetes 1.34 on (older kube-log-runners have no rotation).
        type: int
        default: 100
      log_file_max_age_hours:
        description: Rotated files older than this many hours are removed (C(-log-file-age)), from Kubernetes 1.34 on.
        type: int
        default: 168
  dependencies:
    description: Services that must run before this one.
    type: list
    elements: str
    default: []
  environment:
    description: Environment variables of the service only (the C(Environment) value of its registry key).
    type: dict
    default: {}
  parameters:
    description:
      - Values of the service's C(Parameters) registry key (a list becomes a multi-string value). NSSM reads what to
        run from there (C(Application), C(AppParameters), C(AppDirectory), C(AppEnvironmentExtra)). Only the values
        named here are compared; others under the key are left alone.
    type: dict
    default: {}
  app_parameters:
    description:
      - NSSM's C(AppParameters) (the arguments of the program NSSM runs), one list item each; quoted for the Windows
        command line by the module and stored in the C(Parameters) key like O(parameters). Not together with an
        C(AppParameters) value in O(parameters).
    type: list
    elements: str
  display_name:
    description: Display name. Defaults to O(name).
    type: str
  description:
    description: Service description. Windows refuses an empty one (C(Set-Service) and C(New-Service)), so does
      the module, before any change.
    type: str
    default: Kubernetes node component (managed by kubewin.nodes)
  restart_delay_seconds:
    description: Delay before each of the three automatic restarts after a failure.
    type: int
    default: 10
  log_files:
    description:
      - Files on the node where the service's program writes its output. When a started service does not stay
        Running, their last lines are part of the error. Defaults to the C(AppStderr) and C(AppStdout) values of
        O(parameters) (NSSM's output files).
    type: list
    elements: str
  watch_seconds:
    description:
      - After the task starts the service, how long to watch that it stays Running with the same process (the
        kubelet, kube-proxy and NSSM report Running before they check their inputs). Defaults to two
        O(restart_delay_seconds). V(0) does not watch.
      - For a service whose program is C(nssm.exe), the watch also follows the process of NSSM's
        C(Application), since NSSM restarts an application that exits inside the same service process and only the
        application's new process id shows it.
    type: int
  observed:
    description:
      - This service as M(kubewin.nodes.win_host_facts) read it earlier in the run (its entry in
        C(kubewin_host.service_definitions)), taken instead of a read of its own, so a service already as wanted costs
        no remote operation.
      - Pass it only while nothing in the run has touched the service since that read; it is used only when its
        C(name) matches this task's, otherwise the task reads the service itself.
    type: dict
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
  platform:
    platforms: windows
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
seealso:
  - module: kubewin.nodes.win_kubelet_service
author:
  - kubewin.nodes maintainers (@kubewin)
"""

EXAMPLES = r"""
- name: kube-proxy on a flannel vxlan network, its arguments made by the module, under kube-log-runner
  kubewin.nodes.win_host_service:
    name: kube-proxy
    path: C:\k\kube-proxy.exe
    kube_proxy:
      node_name: win-1
      cluster_cidr: 10.244.0.0/16
      backend: vxlan
      vni: 4096
      pod_cidr: 10.244.3.0/24
      version: v1.37.2
    dependencies: [flanneld]

- name: kube-proxy as a native service after the kubelet, with arguments of your own
  kubewin.nodes.win_host_service:
    name: kube-proxy
    path: C:\k\kube-proxy.exe
    args:
      - --windows-service
      - --proxy-mode=kernelspace
      - --kubeconfig=C:\etc\kube-proxy\kubeconfig
      - --hostname-override=win-1
      - --network-name=cbr0
    dependencies: [kubelet]
"""

RETURN = r"""
command_line:
  description: The service command line set (or that would be set in check mode).
  returned: when state is not absent
  type: str
  sample: C:\k\kube-proxy.exe --windows-service --proxy-mode=kernelspace
status:
  description: Service status after the task.
  returned: success
  type: str
  sample: Running
differences:
  description: Parts of the service definition that differed from the task.
  returned: success
  type: list
  elements: str
  sample: [command_line]
definition:
  description: What was done to the definition (V(create), V(update), V(remove), V(none)).
  returned: success
  type: str
  sample: create
run:
  description: What was done to the run state (V(none), V(start), V(restart), V(stop)).
  returned: success
  type: str
  sample: start
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kubewin.nodes.plugins.module_utils._windows_args import (
    NODE_SERVICE_ARGSPEC,
    NODE_SERVICE_REQUIRED_IF,
)


def main():
    module = AnsibleModule(argument_spec=NODE_SERVICE_ARGSPEC, required_if=NODE_SERVICE_REQUIRED_IF,
                           supports_check_mode=True)
    # Reached only if the action plugin was bypassed.
    module.fail_json(msg="kubewin.nodes.win_host_service runs through its action plugin")


if __name__ == "__main__":
    main()
