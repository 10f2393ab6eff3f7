#!/usr/bin/python
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: win_kubelet_service
short_description: Register the kubelet as a native Windows service
version_added: 0.1.0
description:
  - Registers, updates or removes the C(kubelet) Windows service running C(kubelet.exe --windows-service) directly,
    with no NSSM and no wrapper process. Start mode automatic, a dependency on the container runtime service, and
    recovery actions that restart the kubelet after a crash or a non-zero exit.
  - The command line is computed on the controller from O(kubelet_version), the flags Windows nodes need
    (C(--cgroups-per-qos=false), C(--enforce-node-allocatable=), C(--resolv-conf=)), the contents of
    C(kubeadm-flags.env) on the node (so what C(kubeadm join) writes takes effect, unlike a static command line),
    and O(extra_args), in that order of precedence.
  - Flags a kubelet version removed are never passed. Those found in C(kubeadm-flags.env) (written by an older
    kubeadm) are dropped with a warning; those in O(extra_args) fail the task.
  - Idempotent, comparing the command line (as parsed arguments), dependencies, start mode and recovery actions.
    The service is restarted only when its definition changed and it was running.
options:
  name:
    description: Service name.
    type: str
    default: kubelet
  state:
    description:
      - V(present) registers or updates the service and leaves it running or stopped as it is (restarting it if it
        runs and its definition changed). C(kubeadm join) starts it.
      - V(started) and V(stopped) also set the run state. V(absent) stops and deletes the service.
    type: str
    choices: [present, started, stopped, absent]
    default: present
  kubelet_version:
    description: Version of the kubelet binary, for example V(v1.33.2). Required unless O(state=absent).
    type: str
  kubelet_path:
    description: Path of kubelet.exe on the node.
    type: str
    default: C:\k\kubelet.exe
  config_file:
    description: The kubelet configuration file C(kubeadm join) writes.
    type: str
    default: C:\var\lib\kubelet\config.yaml
  config_dir:
    description:
      - The kubelet's C(--config-dir), drop-in KubeletConfigurations (C(*.conf)) merged over O(config_file) in
        lexical order. The directory must exist when the kubelet starts. The node role writes the drop-in that turns
        the node log query on there (docs/troubleshooting.md, "Reading a node's logs"), C(C:\var\lib\kubelet\config.d).
      - Unset or empty passes no C(--config-dir) (a kubelet started with one that does not exist does not start).
    type: str
  kubeconfig:
    description: The kubelet's kubeconfig, written by the TLS bootstrap.
    type: str
    default: C:\etc\kubernetes\kubelet.conf
  bootstrap_kubeconfig:
    description: The bootstrap kubeconfig C(kubeadm join) writes.
    type: str
    default: C:\etc\kubernetes\bootstrap-kubelet.conf
  cert_dir:
    description: Directory for the kubelet's certificates.
    type: str
    default: C:\var\lib\kubelet\pki
  kubeadm_flags_file:
    description:
      - The environment file C(kubeadm join) writes with C(KUBELET_KUBEADM_ARGS). Set to an empty string to ignore it.
    type: str
    default: C:\var\lib\kubelet\kubeadm-flags.env
  container_runtime:
    description: Container runtime; selects the default service dependency.
    type: str
    choices: [containerd, docker]
    default: containerd
  dependencies:
    description:
      - Services the kubelet depends on. Defaults to V([containerd]) or, for Docker, V([cri-dockerd]) (the kubelet
        reaches Docker through cri-dockerd since 1.24) by O(container_runtime).
    type: list
    elements: str
  pod_infra_container_image:
    description:
      - Pause image passed as C(--pod-infra-container-image) for kubelets older than 1.27; ignored (with a warning)
        for newer ones, which take it from the container runtime.
    type: str
  extra_args:
    description:
      - Extra kubelet flags as a mapping of flag name (without C(--)) to value; they override all other sources.
    type: dict
    default: {}
  restart_delay_seconds:
    description: Delay before each of the three automatic restarts after a failure.
    type: int
    default: 10
  log_runner_path:
    description:
      - C(kube-log-runner.exe) (from the Kubernetes node binaries), which runs the kubelet and writes its output
        to O(log_file), since the kubelet has no C(--log-file) flag and a service's output goes nowhere otherwise.
        An empty value runs the kubelet directly (no log).
    type: str
    default: C:\k\kube-log-runner.exe
  log_file:
    description:
      - The kubelet's log file, written by O(log_runner_path) (rotated from Kubernetes 1.34 on, see
        O(log_file_max_size_mb)). The kubelet's node log query reads it there (C:\var\log\<service>\<service>.log).
    type: str
    default: C:\var\log\kubelet\kubelet.log
  log_file_max_size_mb:
    description:
      - kube-log-runner renames O(log_file) to C(<name>-<time>.log) and starts a new one when it would pass this many
        MiB (C(-log-file-size)); from Kubernetes 1.34 on, as for O(log_file_max_age_hours).
    type: int
    default: 100
  log_file_max_age_hours:
    description:
      - kube-log-runner removes rotated files older than this many hours when it rotates (C(-log-file-age)). It
        keeps no count, so the disk the log uses is bounded by the size times the rotations within this age.
    type: int
    default: 168
  watch_seconds:
    description:
      - After the task starts the kubelet, how long to watch that it stays Running with the same process (the
        kubelet reports Running before it connects to the runtime or the API server). Defaults to two
        O(restart_delay_seconds). V(0) does not watch.
    type: int
  observed:
    description:
      - This service as M(kubewin.nodes.win_host_facts) read it earlier in the run (its entry in
        C(kubewin_host.service_definitions)), taken instead of a read of its own, so a service already as wanted costs
        no remote operation.
      - Pass it only while nothing in the run has touched the service since that read; it is used only when its
        C(name) and C(flags_file) match this task's, otherwise the task reads the service itself.
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
notes:
  - Two remote operations at most per run (read the service and kubeadm-flags.env; apply), and one more to watch
    the kubelet when the task starts it.
author:
  - kubewin.nodes maintainers (@kubewin)
"""

EXAMPLES = r"""
- name: Register the kubelet service before kubeadm join
  kubewin.nodes.win_kubelet_service:
    kubelet_version: v1.33.2
    extra_args:
      node-labels: node.kubernetes.io/os-flavor=server2022
      v: 2

- name: Remove the kubelet service
  kubewin.nodes.win_kubelet_service:
    state: absent
"""

RETURN = r"""
command_line:
  description: The service command line set (or that would be set in check mode).
  returned: when state is not absent
  type: str
  sample: C:\k\kubelet.exe --windows-service --config=C:\var\lib\kubelet\config.yaml --cgroups-per-qos=false
status:
  description: Service status after the task (V(Running), V(Stopped), V(Absent), ...).
  returned: success
  type: str
  sample: Running
differences:
  description: Parts of the service definition that differed from the task.
  returned: success
  type: list
  elements: str
  sample: [command_line, recovery]
definition:
  description: What was done to the definition (V(create), V(update), V(remove), V(none)).
  returned: success
  type: str
  sample: update
run:
  description: What was done to the run state (V(none), V(start), V(restart), V(stop)).
  returned: success
  type: str
  sample: restart
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kubewin.nodes.plugins.module_utils._windows_args import (
    KUBELET_SERVICE_ARGSPEC,
    KUBELET_SERVICE_REQUIRED_IF,
)


def main():
    module = AnsibleModule(argument_spec=KUBELET_SERVICE_ARGSPEC, required_if=KUBELET_SERVICE_REQUIRED_IF,
                           supports_check_mode=True)
    # Reached only if the action plugin was bypassed.
    module.fail_json(msg="kubewin.nodes.win_kubelet_service runs through its action plugin")


if __name__ == "__main__":
    main()
