#!/usr/bin/python
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: win_host_facts
short_description: Gather what adding a Windows node to Kubernetes depends on, in one remote operation
version_added: 0.1.0
description:
  - Reads the Windows version and build, host name, network adapters, the container runtimes (service, named pipe,
    version), the node services, and whether the node has joined a cluster, and sets them as the fact
    C(kubewin_host).
  - C(kubewin_host.join_state) is V(joined) when C(kubelet.conf) exists, V(partial) when an interrupted join left
    bootstrap files behind (reset before joining again), V(fresh) otherwise.
options:
  extra_paths:
    description: More paths whose existence to report in C(kubewin_host.paths).
    type: list
    elements: str
    default: []
  ca_cert_path:
    description:
      - Where C(kubeadm join) writes the cluster CA on this host (the JoinConfiguration's C(caCertPath)); a CA left
        there by an interrupted join makes C(join_state) V(partial).
      - The roles pass the cluster's path (kubelet-config's C(clientCAFile) on Windows, e.g.
        C(C:\etc\kubernetes\ssl\ca.crt) on a kubespray cluster). Omitted, kubeadm's default
        C(C:\etc\kubernetes\pki\ca.crt).
    type: str
  list_images:
    description:
      - Also list the container images on the host (C(crictl images -o json) with the collection's crictl and its
        C(crictl.yaml)) in C(kubewin_host.images) as C(code) (its exit code, null without crictl) and C(output), in
        the same remote operation (the runtime role's pre-pull decides from it).
    type: bool
    default: false
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  facts:
    support: full
  platform:
    platforms: windows
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.facts
author:
  - kubewin.nodes maintainers (@kubewin)
"""

EXAMPLES = r"""
- name: Read the node
  kubewin.nodes.win_host_facts:

- name: Show the build
  ansible.builtin.debug:
    msg: "{{ kubewin_host.windows_build }} {{ kubewin_host.runtimes.containerd.version }}"
"""

RETURN = r"""
ansible_facts:
  description: Facts about the node.
  returned: success
  type: dict
  contains:
    kubewin_host:
      description:
        - The node as seen by kubewin.nodes.
        - C(machine_path) is the machine-scope Path; C(kubeadm_path) the Path C(kubeadm join) and
          C(kubeadm upgrade node) run with (the install directory first, since their preflight runs C(kubelet --version)
          through a Path lookup); C(install_dir_on_path) whether C(C:\k) is on that machine Path (each element
          compared as M(ansible.windows.win_path) compares it, on the expanded Path); C(cri_endpoints) where the
          kubelet and kubeadm reach each runtime; C(containerd_managed) whether the containerd service is the one
          the collection registers (for C(C:\Program Files\containerd\bin\containerd.exe)).
        - C(cni) holds, per runtime, the directories it reads CNI configuration (C(conf_dir)) and plugins
          (C(bin_dir)) from, with C(source), or C(error) when unknown (containerd's from
          C(containerd.exe config dump), cri-dockerd's from its service command line), C(conf_files) (the file
          names in C(conf_dir), null when that directory was not listed) and, for containerd, C(max_conf_num).
        - C(adapters) lists each up adapter's IPv4 addresses with their prefix length (C(192.0.2.10/24)).
        - C(firewall_rules) maps the lower-case name of each firewall rule named C(kubewin-*) to its options in
          M(community.windows.win_firewall_rule)'s terms (C(description), C(direction), C(action), C(protocol),
          C(localport), C(remoteip), C(profiles), C(enabled)), or null when two rules share that name; absent when
          the rules could not be read.
        - C(firewall.state) is C(read), or C(unknown) with C(firewall.reason) when the firewall API failed (the
          Windows Defender Firewall service C(MpsSvc) stopped); the roles then run
          M(community.windows.win_firewall_rule) for every rule instead of skipping those already in place.
      type: dict
      returned: success
      sample: {"hostname": "win-1", "windows_build": "10.0.20348", "join_state": "fresh",
               "runtimes": {"containerd": {"service_exists": true, "service_status": "Running", "pipe_exists": true,
                                           "version": "1.7.20"}},
               "adapters": [{"name": "Ethernet0", "ipv4": ["192.0.2.10/24"]}],
               "machine_path": "C:\\Windows\\system32;C:\\Windows;C:\\k", "install_dir_on_path": true,
               "kubeadm_path": "C:\\k;C:\\Windows\\system32;C:\\Windows",
               "cri_endpoints": {"containerd": "npipe:////./pipe/containerd-containerd",
                                 "docker": "npipe:////./pipe/cri-dockerd"},
               "cni": {"containerd": {"bin_dir": "C:\\Program Files\\containerd\\cni\\bin",
                                      "conf_dir": "C:\\Program Files\\containerd\\cni\\conf",
                                      "source": "containerd config dump", "conf_files": ["10-flannel.conf"],
                                      "max_conf_num": 1},
                       "docker": {"error": "the cri-dockerd service does not exist"}}}
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kubewin.nodes.plugins.module_utils._windows_args import FACTS_ARGSPEC


def main():
    module = AnsibleModule(argument_spec=FACTS_ARGSPEC, supports_check_mode=True)
    # Reached only if the action plugin was bypassed.
    module.fail_json(msg="kubewin.nodes.win_host_facts runs through its action plugin")


if __name__ == "__main__":
    main()
