#!/usr/bin/python
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: win_node_bundle
short_description: Read what a support bundle needs from a Windows node, redacted, in one remote operation
version_added: 0.3.0
description:
  - Reads, in one remote operation, the last lines of the node services' logs (C(C:\var\log\<service>\<service>.log)),
    the kubelet's configuration (C(config.yaml), the C(config.d) drop-ins, C(kubeadm-flags.env)), the container
    runtime's and the CNI configuration, flannel's C(net-conf.json) and C(subnet.env), the names of the files in the
    log directories, the node services' states and definitions (the registry), the HNS networks, endpoints and policy
    lists, and the newest records of the System and Application event logs.
  - Kubeconfigs, token files, keys and certificates are never read (a file in a configuration directory that may hold
    one is listed as not collected). Every text is redacted on the controller (bearer tokens, C(token:) and
    C(password) fields, C(client-key-data), PEM private keys, bootstrap tokens, JSON Web Tokens, and base64 that
    encodes one).
  - Also the container runtime's own log - the newest Application event log records of its event source (dockerd
    writes there under its service's name) and, when its service's command line has C(--log-file), the last lines of
    that file (containerd logs nowhere else; without it, its log is discarded).
  - An event log without records is an empty list; a record whose message cannot be formatted is kept with
    Get-WinEvent's C(Cannot retrieve event message text.) and a note in its file.
  - The texts are not returned. They are written, redacted, into a new staging directory on the controller (in its
    temporary directory, mode 0700, each file 0600), and the result names that directory and each file's size, so
    the task result that C(-v), AWX and ARA keep holds no log or event text.
  - Changes nothing on the host. M(kubewin.nodes.bundle_archive) writes the staged files into the run's archive and
    removes the staging directory; one that no archive took stays until the controller's temporary directory is
    cleaned.
options:
  container_runtime:
    description: The node's container runtime (C(containerd), or C(docker) and C(cri-dockerd)).
    type: str
    required: true
    choices: [containerd, docker]
  network_services:
    description: Whether flanneld and kube-proxy run as Windows services (the services mode), so their logs and
      services are read too.
    type: bool
    default: true
  cluster:
    description:
      - The cluster's view of the node, put in the bundle as it is (redacted) - C(node) and C(events), each a
        M(kubernetes.core.k8s_info) result; one that failed is listed as not collected, with its message.
    type: dict
    default: {}
  max_lines:
    description: The last lines read of each file.
    type: int
    default: 2000
  max_kib:
    description: At most this many KiB (thousands of characters) of each file, the last ones.
    type: int
    default: 1024
  max_events:
    description: The newest records read of each event log.
    type: int
    default: 200
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
- name: Read the node for the support bundle
  kubewin.nodes.win_node_bundle:
    container_runtime: containerd
  register: bundle
"""

RETURN = r"""
staging:
  description: The staging directory on the controller that holds the texts (mode 0700).
  returned: success
  type: str
  sample: /tmp/kubewin-bundle-win-1-3k2j1x0q
files:
  description:
    - One entry per file of the bundle, C(file) (its name in the host's part of the archive, or null when not
      collected), C(what), C(source) (where it was read), C(staged) (its file in RV(staging), or null), C(size) (bytes),
      C(error) (why it was not collected), C(truncated), C(lines) and C(redacted) (how many credentials were taken
      out). No text.
  returned: success
  type: list
  elements: dict
  sample: [{file: node/var/log/kubelet/kubelet.log, what: log (last lines), source: 'C:\var\log\kubelet\kubelet.log',
            staged: '0000', size: 181234, error: null, truncated: false, lines: 2000, redacted: 0}]
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kubewin.nodes.plugins.module_utils._windows_args import NODE_BUNDLE_ARGSPEC


def main():
    module = AnsibleModule(argument_spec=NODE_BUNDLE_ARGSPEC, supports_check_mode=True)
    # Reached only if the action plugin was bypassed.
    module.fail_json(msg="kubewin.nodes.win_node_bundle runs through its action plugin")


if __name__ == "__main__":
    main()
