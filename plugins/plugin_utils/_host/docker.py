# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Docker's own networks on a Windows host, read and changed through docker.exe (scripts docker_state, docker_apply).

Docker resolves a container's NetworkMode in its own store, not in HNS: on Windows NetworkMode ``host`` is a
user-defined network name (moby api/types/container/hostconfig_windows.go, ``IsHost`` is false), which cri-dockerd
gives the sandbox of a hostNetwork pod (CNI pods get ``none``: core/helpers_windows.go modifyHostOptionsForSandbox).
dockerd learns about HNS networks only at its start (moby daemon/daemon_windows.go initNetworkController, "discover
and add HNS networks"), so a network made through HNS while it runs stays unknown to it; one made through Docker is
in its store, and at each start dockerd re-creates a non-default NAT network of its store that HNS lost at a reboot
("non-default nat networks should be re-created if missing from HNS"). Hence sig-windows-tools' ``docker network
create -d nat host`` after ``docker network ls``.
"""

from __future__ import annotations

SERVICE = "docker"
# The NAT network hostNetwork pods' sandboxes need on a Docker host.
HOST_NETWORK = "host"


class DockerError(Exception):
    pass


def network_names(answer):
    """The docker_state script's answer -> the names in Docker's store; DockerError when they could not be read."""
    if answer.get("error") or answer.get("names") is None:
        raise DockerError("cannot read Docker's networks: %s (is the %s service running?)"
                          % (answer.get("error") or "no answer", SERVICE))
    return [str(n) for n in answer["names"]]


def check_apply(answer, action, name):
    """Raise DockerError unless the docker_apply script's docker.exe call succeeded."""
    if not answer.get("cli"):
        raise DockerError("the %s service does not exist: install Docker (or use kubewin_container_runtime "
                          "containerd)" % SERVICE)
    if answer.get("code") is None:
        raise DockerError("%s does not exist: Docker's CLI is expected beside dockerd.exe" % answer["cli"])
    if answer["code"] != 0:
        raise DockerError("docker network %s %s exited with code %s: %s" % (
            "create -d nat" if action == "create" else "rm", name, answer["code"],
            " ".join(answer.get("output") or []) or "no output"))
