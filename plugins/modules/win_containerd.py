#!/usr/bin/python
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: win_containerd
short_description: Configure, register and start containerd installed by the collection on a Windows node
version_added: 0.1.0
description:
  - Works on the containerd the P(kubewin.nodes.runtime#role) role unpacks into C(C:\Program Files\containerd)
    (C(bin\containerd.exe)).
  - Writes C(C:\Program Files\containerd\config.toml) from what the installed binary prints for
    C(containerd.exe config default), with only the sandbox image, the CNI directories
    (C(C:\Program Files\containerd\cni\bin) and C(cni\conf)) and the registry hosts directory
    (C(C:\Program Files\containerd\certs.d)) set; one C(hosts.toml) per registry of O(registry_mirrors) there
    (other registries' C(hosts.toml) files are removed); and C(crictl\crictl.yaml) pointing crictl at
    C(npipe:////./pipe/containerd-containerd).
  - Registers the service with C(containerd.exe --register-service --log-file C:\var\log\containerd\containerd.log)
    when it does not exist (start type Automatic, restarted by Windows twice after 15 seconds), restarts it when its
    configuration changed, and starts it. The log file is where the kubelet's node log query finds
    C(query=containerd); without C(--log-file) containerd discards its log.
  - A service an earlier release of the collection registered without C(--log-file) gets it in its command line in
    place (C(Win32_Service.Change), which keeps its recovery actions; not deleted and created again, which fails with
    error 1072 while another program holds the service open) and is restarted, and the services the restart stopped
    with it are started again, also when a step failed. A C(containerd) service that runs another command line is
    refused (another installation).
  - Writes C(kubewin-log-rotate.ps1) and its settings C(kubewin-log-rotate.json) into
    C(C:\Program Files\containerd), for the scheduled task the P(kubewin.nodes.runtime#role) role registers;
    containerd never rotates its log file.
  - With O(version), after it started or restarted the service, waits up to 60 seconds for the runtime to answer
    C(crictl version) (C(crictl\crictl.exe)) on its pipe, and fails when it does not, or answers with another
    version than O(version).
  - With O(state=stopped), removes every pod sandbox (C(crictl rmp --all --force), so no pod's
    C(containerd-shim-runhcs-v1.exe) keeps running) and stops the service, for its programs to be replaced (the
    P(kubewin.nodes.upgrade#role) role, after the kubelet stopped). Then, also when the service was stopped already,
    it waits up to 30 seconds until no C(containerd-shim-runhcs-v1.exe) runs, and fails naming their process IDs
    when some still run (the shim of a container in another containerd namespace, such as nerdctl's or buildkit's).
  - The comparison is made on the controller; one remote operation when nothing changes, two otherwise.
options:
  sandbox_image:
    description:
      - The pause image of every pod's sandbox (an image reference, for example V(registry.k8s.io/pause:3.10)).
      - Required with O(state=started).
    type: str
  version:
    description:
      - The containerd release installed (V(2.3.5)); when set, the runtime must answer as this version after a
        start.
    type: str
  state:
    description:
      - V(started) configures, registers and starts containerd; V(stopped) stops it for an upgrade.
    type: str
    choices: [started, stopped]
    default: started
  registry_mirrors:
    description:
      - Registry mirrors, as kubespray's C(containerd_registries_mirrors) has them. Each item has C(prefix), the
        registry (V(docker.io), V(registry.local:5000), or V(_default) for every registry), and C(mirrors), a list
        of C(host) (a URL), C(capabilities) (default V([pull, resolve])) and C(skip_verify) (default V(false)).
    type: list
    elements: dict
    default: []
  log_max_size_mb:
    description: The rotation task copies and truncates containerd's log once it has reached this many MiB. At least 1.
    type: int
    default: 100
  log_max_files:
    description: The rotation task keeps this many copies of containerd's log and removes older ones. At least 1.
    type: int
    default: 5
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
  - module: kubewin.nodes.win_host_files
author:
  - kubewin.nodes maintainers (@kubewin)
"""

EXAMPLES = r"""
- name: containerd configured, registered and running
  kubewin.nodes.win_containerd:
    sandbox_image: registry.k8s.io/pause:3.10
    registry_mirrors:
      - prefix: docker.io
        mirrors:
          - host: https://mirror.example
"""

RETURN = r"""
registered:
  description: Whether the service was registered by this run.
  returned: success
  type: bool
  sample: false
restarted:
  description: Whether the running service was restarted because its configuration changed.
  returned: success
  type: bool
  sample: false
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kubewin.nodes.plugins.module_utils._windows_args import CONTAINERD_ARGSPEC


def main():
    module = AnsibleModule(argument_spec=CONTAINERD_ARGSPEC, supports_check_mode=True)
    # Reached only if the action plugin was bypassed.
    module.fail_json(msg="kubewin.nodes.win_containerd runs through its action plugin")


if __name__ == "__main__":
    main()
