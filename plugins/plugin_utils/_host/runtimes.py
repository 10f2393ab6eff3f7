# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container runtimes a Windows node can use, in one place: the runtime's Windows service and the
named pipe it serves, and the CRI service and endpoint the kubelet and kubeadm talk to (Docker through
cri-dockerd: dockershim left the kubelet in 1.24).

Sources: containerd's default grpc.address on Windows (defaults/defaults_windows.go:
\\\\.\\pipe\\containerd-containerd); Docker's default host (npipe:////./pipe/docker_engine); cri-dockerd's
default --container-runtime-endpoint on Windows (npipe:////./pipe/cri-dockerd).
"""

from __future__ import annotations

RUNTIMES = {
    "containerd": {"service": "containerd", "pipe": "containerd-containerd", "cri_service": "containerd",
                   "cri_pipe": "containerd-containerd"},
    "docker": {"service": "docker", "pipe": "docker_engine", "cri_service": "cri-dockerd",
               "cri_pipe": "cri-dockerd"},
}
NAMES = tuple(RUNTIMES)


def pipe_path(runtime):
    """The runtime's own named pipe as Windows writes it: \\\\.\\pipe\\containerd-containerd."""
    return "\\\\.\\pipe\\" + RUNTIMES[runtime]["pipe"]


def cri_endpoint(runtime):
    """The CRI endpoint the kubelet (--container-runtime-endpoint) and kubeadm (criSocket) use."""
    if runtime not in RUNTIMES:
        raise ValueError("kubewin_container_runtime is %r; it must be one of: %s" % (runtime, ", ".join(NAMES)))
    return "npipe:////./pipe/" + RUNTIMES[runtime]["cri_pipe"]
