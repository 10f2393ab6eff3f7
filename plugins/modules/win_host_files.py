#!/usr/bin/python
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: win_host_files
short_description: Directories, checksum-verified downloads and configuration files of a Windows node
version_added: 0.1.0
description:
  - Creates directories (by default with access limited to Administrators and SYSTEM), downloads binaries and
    archives verified against their published SHA-512 (or a pinned checksum), unpacks archives, and writes
    configuration files, in one read and at most one write on the node.
  - Everything is compared by SHA-512 first, so a file that is already right is neither downloaded nor written.
  - The checksum files are fetched on the controller, so a download from a mirror, a file share or a local path
    is verified the same way.
options:
  directories:
    description: Directories to create.
    type: list
    elements: dict
    default: []
    suboptions:
      path:
        description: Directory path.
        type: str
        required: true
      restricted:
        description:
          - Owner Administrators and access for Administrators and SYSTEM only, not inherited; set before anything is
            written into it, also when it existed (then what others own or linked in it stops the task once it is
            secured), and read back (not a link, owner Administrators, protected access rules).
          - C(C:\var\lib\kubelet\pods) (pod volumes) also lets Users read and, in the directories below it, add
            files and folders that their creators own, so pods running as C(ContainerUser), a member of Users, read and
            write their volumes through the host's access rules.
        type: bool
        default: true
  downloads:
    description: Files or archives to download.
    type: list
    elements: dict
    default: []
    suboptions:
      url:
        description: C(http(s)://) URL, UNC path (C(\\server\share\...)) or local path on the node.
        type: str
        required: true
      dest:
        description: Destination file. Exactly one of O(downloads[].dest) and O(downloads[].extract_dir).
        type: str
      extract_dir:
        description: Unpack the archive (C(.zip), C(.tgz)) into this directory with C(tar.exe).
        type: str
      checksum:
        description: Pinned SHA-512, as hex or C(sha512:<hex>) (SHA-256 and C(sha256:<hex>) with
          O(downloads[].algorithm=sha256)). Wins over O(downloads[].checksum_url).
        type: str
      checksum_url:
        description: URL of the checksum file. Defaults to the O(downloads[].url) with C(.sha512) appended
          (C(.sha256sum) with O(downloads[].algorithm=sha256), as containerd publishes them).
        type: str
      algorithm:
        description:
          - The checksum the download is verified with. V(sha256) only for an archive (O(downloads[].extract_dir)),
            whose stamp file then holds the SHA-256.
        type: str
        default: sha512
        choices: [sha512, sha256]
      sha256:
        description: The SHA-256 (hex) from the C(downloads) result of M(kubewin.nodes.node_preflight), with
          O(downloads[].algorithm=sha256), used as given.
        type: str
      service:
        description:
          - The Windows service that runs this file. Windows does not let the program of a running process be
            overwritten, so when the file changes and the service is not stopped, it is stopped (C(Stop-Service),
            which refuses while a service that depends on it runs) once the new file is verified, just before it is
            put in place, and left stopped; RV(stopped) names it. Start it again afterwards, for example with
            M(kubewin.nodes.win_host_service) reading the service itself (without
            O(kubewin.nodes.win_host_service#module:observed)).
          - Nothing is stopped when the file is already as wanted.
        type: str
      sha512:
        description:
          - The SHA-512 (hex) from the C(downloads) result of M(kubewin.nodes.node_preflight), used as given
            (no checksum file is fetched). Wins over O(downloads[].checksum) and O(downloads[].checksum_url).
        type: str
  files:
    description: Files to write.
    type: list
    elements: dict
    default: []
    suboptions:
      path:
        description: File path.
        type: str
        required: true
      content:
        description:
          - File content (UTF-8).
          - A dict or list is written as JSON (two-space indent, sorted keys), so a JSON text the templating
            decoded on the way is written as it was.
        type: raw
        required: true
      restricted:
        description: Limit access to Administrators and SYSTEM (for credentials).
        type: bool
        default: false
      secret:
        description:
          - Keep the content out of diffs and run the write with C(no_log).
          - The content is sealed to the host on the way (RSA-OAEP and AES-256-CBC with HMAC-SHA256, to the
            host's own non-exportable key, container C(kubewin.nodes-transport) in the machine key store, which
            M(kubewin.nodes.win_host_facts) makes; run it before this task). That protects it from what records
            the module's arguments on the Windows host (the result's C(invocation), the Application event log,
            PowerShell module logging and transcription), where it is ciphertext only that host's Administrators
            and SYSTEM can open.
          - It does not protect the content on the controller, where it is still in the task's own arguments. Set
            C(no_log) to V(true) on the task, or a callback that shows task arguments (C(display_args_to_stdout),
            AWX job events) shows it in clear. Nor does it protect the file on the host from that host's
            Administrators; use O(files[].restricted) to keep other users out.
        type: bool
        default: false
  source_vip_reservation:
    description:
      - Write the file that keeps kube-proxy's source VIP on an overlay network from pods, as one more entry of
        O(files), in host-local's store (C(C:\var\lib\cni\networks\<network>\<address>)). It names an owner that
        is no container, and host-local skips an address whose file exists and removes only files holding the
        releasing container's id.
      - The address is the last usable one of O(source_vip_reservation.pod_cidr), the one kube-proxy's
        C(--source-vip) gets from M(kubewin.nodes.win_host_service) O(kubewin.nodes.win_host_service#module:kube_proxy);
        the network is flannel's, C(flannel.<vni>) for vxlan, C(cbr0) for host-gw.
      - Fails, writing nothing, when the pod subnet is empty or has no room for the address (smaller than C(/30)).
    type: dict
    suboptions:
      pod_cidr:
        description: The node's pod subnet (its Node's C(spec.podCIDR)).
        type: str
        required: true
      backend:
        description: The flannel backend, which names the network.
        type: str
        required: true
        choices: [vxlan, host-gw]
      vni:
        description: The VXLAN VNI, which names the vxlan network.
        type: int
        default: 4096
  absent:
    description:
      - Paths to remove with everything in them (after the rest of the task). Links are removed, never followed.
      - Each directory is made the collection's (owner Administrators, access for Administrators and SYSTEM only)
        before it is listed, so a local user cannot swap a folder for a junction while it is walked; a directory in
        which another user owns something stops the task before anything is deleted.
    type: list
    elements: str
    default: []
  prune:
    description:
      - Directories to remove only when empty once O(absent) is done, in the order given (deepest first), so a
        directory that holds anything else stays.
    type: list
    elements: str
    default: []
  forget_transport_key:
    description:
      - Delete the host's transport key (container C(kubewin.nodes-transport), which O(files[].secret) seals to)
        in the same remote operation, after the rest of the task; nothing happens when there is none. The reset
        role sets it, so reset leaves no key behind.
      - Not reported as a change, since every M(kubewin.nodes.win_host_facts) read makes the key again.
    type: bool
    default: false
  remove_cni:
    description:
      - Remove what the collection's roles put in the container runtime's CNI directories (the CNI configuration,
        every file of the CNI plugin archives and their stamps), as if listed in O(absent), and prune those two
        directories and their common parent when nothing else is left in them (before O(prune)).
      - Nothing else in those directories is touched; while the directories are unknown nothing is removed there.
    type: dict
    suboptions:
      dirs:
        description:
          - The runtime's CNI directories as M(kubewin.nodes.win_host_facts) reports them for that runtime
            (C(kubewin_host.cni[runtime]), with C(bin_dir) and C(conf_dir), or C(error)).
        type: dict
      container_runtime:
        description: The container runtime the CNI plugins were installed for (V(containerd) or V(docker)).
        type: str
        required: true
      versions:
        description: The CNI plugin releases installed, by source (C(cni), C(flannel_cni), C(sdn_cni)) -> tag.
        type: dict
        required: true
  proxy:
    description: HTTP proxy for the downloads and the checksum files, for example V(http://proxy:3128).
    type: str
  proxy_bypass:
    description:
      - Hosts the node reaches without the proxy, in C(no_proxy) form as Go programs read it (V(mirror.corp) with its
        subdomains, V(.corp) or V(*.corp) for subdomains only, V(10.0.0.1), V(10.0.0.0/8), each with an optional
        V(:port), or V(*)).
      - They become the regular expressions .NET's C(WebProxy) matches against C(scheme://host[:port]) of each
        download; an IPv4 network matches address literals only (names are not resolved for this), an IPv6 network
        is refused. The controller fetches the checksum files the same way.
    type: list
    elements: str
    default: []
  checksum_timeout:
    description: Seconds to wait for a checksum file.
    type: int
    default: 30
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
  platform:
    platforms: windows
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
author:
  - kubewin.nodes maintainers (@kubewin)
"""

EXAMPLES = r"""
- name: Kubernetes node binaries from the release tree, verified against the published SHA-512
  kubewin.nodes.win_host_files:
    directories:
      - path: C:\k
    downloads:
      - url: https://dl.k8s.io/release/v1.33.2/bin/windows/amd64/kubelet.exe
        dest: C:\k\kubelet.exe
      - url: https://github.com/containernetworking/plugins/releases/download/v1.6.2/cni-plugins-windows-amd64-v1.6.2.tgz
        extract_dir: C:\opt\cni\bin
"""

RETURN = r"""
directories:
  description: Directories created or whose access rules were set.
  returned: success
  type: list
  elements: str
  sample: ['C:\k']
downloaded:
  description: Destinations downloaded (for archives, the stamp file in the directory they were unpacked to).
  returned: success
  type: list
  elements: str
  sample: ['C:\k\kubelet.exe']
stopped:
  description: Services stopped before their program was replaced (O(downloads[].service)); empty in check mode.
  returned: success
  type: list
  elements: str
  sample: ['windows_exporter']
removed:
  description: Paths removed (or pruned).
  returned: success
  type: list
  elements: str
  sample: ['C:\k']
written:
  description: Files written.
  returned: success
  type: list
  elements: str
  sample: ['C:\etc\cni\net.d\10-flannel.conf']
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kubewin.nodes.plugins.module_utils._windows_args import FILES_ARGSPEC


def main():
    module = AnsibleModule(argument_spec=FILES_ARGSPEC, supports_check_mode=True)
    # Reached only if the action plugin was bypassed.
    module.fail_json(msg="kubewin.nodes.win_host_files runs through its action plugin")


if __name__ == "__main__":
    main()
