# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Preflight: the container runtime, the deployment mode (services or HostProcess) and version skew.

PRIVATE to the collection: no compatibility promise outside it.
"""

from __future__ import annotations

import re

from ansible_collections.kubewin.nodes.plugins.module_utils import _versions as versions
from ansible_collections.kubewin.nodes.plugins.plugin_utils import _hostprocess as hostprocess
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import (
    containerd,
    containerd_support,
    runtime_cni,
    runtimes,
)
from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight.findings import VARIABLES, Findings, _v

DEPLOYMENT_MODES = ("services", "hostprocess")

# HostProcess containers see their volume mounts (ConfigMaps, the ServiceAccount token) at the paths the pod
# names only from containerd 1.7; 1.6 puts them under $CONTAINER_SANDBOX_MOUNT_POINT, where client-go and
# flanneld do not look (kubernetes.io, "Create a Windows HostProcess Pod", Volume mounts).
CONTAINERD_HOSTPROCESS_MIN = (1, 7)
CONTAINERD_RECOMMENDED = (1, 7)
# The floor the README states (containerd >= 1.6). It is also what the kubelet needs from Kubernetes
# 1.26 on, which speaks only the CRI v1 API (containerd 1.5 and older have v1alpha2 only).
CONTAINERD_MIN = (1, 6)
DOCKERSHIM_REMOVED = (1, 24)
HOSTPROCESS_BETA = (1, 23)
HOSTPROCESS_GA = (1, 26)


# ---------------------------------------------------------------------------------------------------
# container runtime and deployment mode


def _kube(kube_version):
    """(major, minor, patch) of a well-formed kube_version (either spelling), else None."""
    tag = versions.kube_release(kube_version) if kube_version else None
    return versions.parse(tag) if tag else None


def check_container_runtime(container_runtime, runtime, deployment_mode, kube_version=None):
    f = Findings("container_runtime")
    var = VARIABLES["container_runtime"]
    mode_var = VARIABLES["deployment_mode"]
    if container_runtime not in runtimes.NAMES:
        return f.result()  # check_inputs names the typo; nothing below means anything for it
    kube = _kube(kube_version)
    if container_runtime == "docker":
        if deployment_mode == "hostprocess":
            f.fail(mode_var, "%s: hostprocess needs containerd >= 1.7; Docker cannot run HostProcess containers: "
                             "set %s: containerd, or %s: services"
                   % (mode_var, var, mode_var))
        cri_dockerd = bool(runtime and runtime.get("cri_dockerd_service_exists"))
        if kube and kube[:2] >= DOCKERSHIM_REMOVED and not cri_dockerd:
            f.fail(var, "%s: docker cannot be used with kube_version %s: the kubelet's built-in Docker support "
                        "(dockershim) was removed in Kubernetes 1.24 and no cri-dockerd service exists on this "
                        "host: set %s: containerd (recommended), or install cri-dockerd as a Windows service"
                   % (var, _v(kube), var))
    if not runtime:
        return f.result()
    pipe = runtimes.pipe_path(container_runtime)
    if not runtime.get("service_exists"):
        f.fail(var, "%s is %s but the %s service does not exist on this host; install %s (and register its "
                    "service) or set %s to the runtime this host has"
               % (var, container_runtime, container_runtime, container_runtime, var))
        return f.result()
    status = runtime.get("service_status")
    if (status or "").lower() != "running":
        f.fail(var, "the %s service (%s: %s) is %s, not Running; start it (Start-Service %s) and set its start "
                    "type to Automatic"
               % (container_runtime, var, container_runtime, status or "in an unknown state", container_runtime))
    elif not runtime.get("pipe_exists"):
        f.fail(var, "the %s service is running but its named pipe %s does not exist; the kubelet connects to "
                    "it there: check the %s configuration (%s) and restart the service"
               % (container_runtime, pipe, container_runtime,
                  "grpc.address in config.toml" if container_runtime == "containerd" else "daemon.json hosts"))
    if container_runtime != "containerd":
        return f.result()
    version = versions.parse(runtime.get("version"), whole=False)
    if version is None:
        f.warn(var, "the containerd version (%r) could not be read, so it was not checked: containerd >= %s is "
                    "required (>= %s recommended)"
               % (runtime.get("version"), _v(CONTAINERD_MIN, 2), _v(CONTAINERD_RECOMMENDED, 2)))
        return f.result()
    if version[:2] < CONTAINERD_MIN:
        f.fail(var, "containerd %s is older than the supported minimum %s (%s: containerd; the kubelet speaks only "
                    "the CRI v1 API from Kubernetes 1.26, which containerd has from %s; HostProcess containers need "
                    "it too): upgrade containerd on this host to %s or later (%s recommended)"
               % (_v(version), _v(CONTAINERD_MIN, 2), var, _v(CONTAINERD_MIN, 2), _v(CONTAINERD_MIN, 2),
                  _v(CONTAINERD_RECOMMENDED, 2)))
    elif deployment_mode == "hostprocess" and version[:2] < CONTAINERD_HOSTPROCESS_MIN:
        f.fail(mode_var, "%s: hostprocess needs containerd >= %s on this host (it has %s): containerd 1.6 mounts a "
                         "HostProcess pod's volumes and ServiceAccount token under $CONTAINER_SANDBOX_MOUNT_POINT, not "
                         "at the paths the DaemonSets name; upgrade containerd, or set %s: services"
               % (mode_var, _v(CONTAINERD_HOSTPROCESS_MIN, 2), _v(version), mode_var))
    elif version[:2] < CONTAINERD_RECOMMENDED:
        f.warn(var, "containerd %s works but containerd >= %s is recommended for Windows nodes; upgrade "
                    "containerd when you can" % (_v(version), _v(CONTAINERD_RECOMMENDED, 2)))
    return f.result()


INSTALL_CHOICES = ("auto", "always", "never")
# containerd's and cri-tools' release tags are v<major>.<minor>.<patch>[-rc.N]; the variables hold them without the v.
RELEASE = re.compile(r"^\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?$")


def check_containerd_install(container_runtime, values, kube=None):
    """The containerd install's inputs (issue 23), before any change: the choice, the version's form and its support
    for Kubernetes ``kube`` (containerd's own table), the sandbox image and the registry mirrors, each naming its
    variable. ``values['kubewin_containerd_planned']``: this run installs it (the roles' decision from the choice and
    the host's facts); ``values['kubewin_containerd_upgrade']``: this run (upgrade.yml) replaces the collection's
    containerd of another release on this host."""
    f = Findings("containerd_install")
    values = values or {}
    var = VARIABLES["containerd_version"]
    choice = values.get(VARIABLES["containerd_install"])
    if choice not in (None, "") and str(choice) not in INSTALL_CHOICES:
        f.fail(VARIABLES["containerd_install"], "%s is %r; it must be one of %s (auto: install containerd where the "
                                                "host has none)" % (VARIABLES["containerd_install"], choice,
                                                                    ", ".join(INSTALL_CHOICES)))
    if container_runtime != "containerd":
        return f.result()
    installed = values.get("kubewin_containerd_installed") or {}
    wanted = str(values.get(var) or "").lstrip("v")
    have = str(installed.get("version") or "").lstrip("v")
    differs = bool(installed.get("service_exists") and have and RELEASE.match(wanted) and have != wanted)
    if str(values.get("kubewin_containerd_planned")).lower() != "true":
        # auto leaves an installed containerd alone: say so when it is the collection's, of another release
        if differs and installed.get("managed") and str(choice) != "never":
            f.warn(var, "containerd %s is installed on this host and %s is %s: this playbook leaves an installed "
                        "containerd as it is; playbooks/upgrade.yml upgrades it, one node at a time (drained, "
                        "containerd stopped and replaced, the runtime checked, uncordoned)" % (have, var, wanted))
        return f.result()
    for name in (var, VARIABLES["crictl_version"]):
        if not RELEASE.match(str(values.get(name) or "")):
            f.fail(name, "%s is %r, not a release version like 2.3.5 (without the v): set it to a release published "
                         "at its download URL" % (name, values.get(name)))
    # review-s8 W2: unpacking another release over an installed containerd fails part-way on a real host (Windows
    # locks a running containerd.exe and each pod's containerd-shim-runhcs-v1.exe) and leaves old and new binaries
    # mixed. Only the upgrade playbook replaces them: drained, pods removed, containerd stopped first.
    if differs and str(values.get("kubewin_containerd_upgrade")).lower() != "true":
        f.fail(var, "containerd %s is installed on this host (service %s) and %s is %s: this playbook does not "
                    "replace the binaries of an installed containerd (Windows keeps a running containerd.exe and the "
                    "pods' shims locked); run playbooks/upgrade.yml, which drains the node and upgrades %s, or set "
                    "%s to %s to keep it"
               % (have, installed.get("service_status") or "unknown", var, wanted,
                  "the collection's containerd" if installed.get("managed") else
                  "only the collection's containerd (this one is another installation: remove it first)", var, have))
    problem = containerd_support.support_problem(wanted, kube) if RELEASE.match(wanted) else None
    if problem and containerd_support.newer_than_listed(wanted, kube):
        # the default (the newest release) on a cluster older than its row: installed, with the table's advice
        f.warn(var, "%s is %s: %s. A newer minor than the table lists is installed anyway (the table recommends "
                    "what was tested most); set %s to such a release to follow it" % (var, wanted, problem, var))
    elif problem:
        f.fail(var, "%s is %s: %s; set it to such a release" % (var, wanted, problem))
    # the sandbox image: images.sandbox_image (the pause image for the host's build)
    problems = containerd.registry_problems(values.get(VARIABLES["registry_mirrors"]) or [])
    if problems:
        f.fail(VARIABLES["registry_mirrors"], "%s (kubespray's containerd_registries_mirrors unless set): %s"
               % (VARIABLES["registry_mirrors"], "; ".join(problems)))
    return f.result()


def check_deployment_mode(deployment_mode, kube_version=None):
    f = Findings("deployment_mode")
    var = VARIABLES["deployment_mode"]
    kube = _kube(kube_version)
    if deployment_mode == "hostprocess" and kube:
        if kube[:2] < HOSTPROCESS_BETA:
            f.fail(var, "%s: hostprocess needs HostProcess containers, which Kubernetes %s does not have (beta "
                        "from 1.23, stable from 1.26); set %s: services or use kube_version >= 1.26"
                   % (var, _v(kube, 2), var))
        elif kube[:2] < HOSTPROCESS_GA:
            f.warn(var, "%s: hostprocess on Kubernetes %s uses HostProcess containers while they are beta "
                        "(stable from 1.26)" % (var, _v(kube, 2)))
    return f.result()


def check_hostprocess_images(deployment_mode, images, pins):
    """hostprocess mode: images made for the DaemonSets (none is published), run as SYSTEM on every node,
    so only pinned by digest."""
    f = Findings("hostprocess_images")
    if deployment_mode == "hostprocess":
        unusable = hostprocess.unusable_images(images, pins)
        usable = {var: ref for var, ref in (images or {}).items() if not any(p.startswith(var + " ") for p in unusable)}
        for problem in unusable + hostprocess.image_problems(usable, pins):
            var = problem.split(" ", 1)[0].split("[", 1)[0]
            f.fail(var, problem)
    return f.result()


def hostprocess_images(deployment_mode, images, pins):
    """hostprocess mode: variable name -> the digest reference its DaemonSet runs (the node's
    ``hostprocess_images``); None in services mode and while check_hostprocess_images refuses them."""
    return hostprocess.daemonset_images(images, pins) if deployment_mode == "hostprocess" else None


def check_hostprocess_hosts(host, deployment_mode, images, pins, hosts):
    """hostprocess mode: the cluster runs one flannel and one kube-proxy DaemonSet for every Windows node, with the
    images of the first Windows host of the run in hostprocess mode (control_plane prepare). ``hosts``: inventory
    host -> {deployment_mode, images, pins}, every Windows host of the run. Where another host's images are pinned
    to other digests, this host is refused, naming the variable, the hosts and the fix (each host whose own images
    cannot be used is refused by its check_hostprocess_images)."""
    f = Findings("hostprocess_hosts")
    mine = hostprocess_images(deployment_mode, images, pins)
    if not mine or not isinstance(hosts, dict):
        return f.result()
    theirs = {}  # (variable, digest reference) -> the other hosts that run it
    for other, values in sorted(hosts.items()):
        if other == host or not isinstance(values, dict):
            continue
        resolved = hostprocess_images(values.get("deployment_mode"), values.get("images"), values.get("pins"))
        for var_ref in (resolved or {}).items():
            theirs.setdefault(var_ref, []).append(other)
    for var, ref in sorted(mine.items()):
        others = sorted((r, names) for (v, r), names in theirs.items() if v == var and r != ref)
        if others:
            f.fail(var, "%s resolves to %s on %s but to %s (pinned by digest): the cluster runs one DaemonSet of "
                        "each on every Windows node, so every host in hostprocess mode needs the same image; set %s "
                        "(and its pin in kubewin_hostprocess_image_pins) once for all Windows hosts, e.g. in "
                        "group_vars/all"
                   % (var, ref, host or "this host",
                      " and to ".join("%s on %s" % (r, ", ".join(n)) for r, n in others), var))
    return f.result()


# ---------------------------------------------------------------------------------------------------
# version skew


def allowed_kubelet_minors(server_minor):
    """Minor versions a kubelet may have against an API server 1.<server_minor> (skew policy):
    never newer, at most 3 minors older, 2 if the kubelet is older than 1.25."""
    return [m for m in range(max(server_minor - 3, 0), server_minor + 1)
            if server_minor - m <= (3 if m >= 25 else 2)]


def check_version_skew(kube_version, server_version):
    f = Findings("version_skew")
    var = VARIABLES["kube_version"]
    kube = _kube(kube_version)
    if kube is None or not server_version:
        return f.result()  # a malformed kube_version is reported by check_inputs
    server = versions.leading(server_version)
    if server is None:
        f.warn(var, "the API server version %r could not be read; kube_version %s was not checked against it"
               % (server_version, _v(kube)))
        return f.result()
    if kube[0] != 1 or server[0] != 1:
        f.fail(var, "kube_version %s and API server %s: only Kubernetes 1.x is supported" % (_v(kube), server_version))
        return f.result()
    minors = allowed_kubelet_minors(server[1])
    allowed = "v1.%d to v1.%d" % (minors[0], minors[-1])
    if kube[1] > server[1]:
        f.fail(var, "kube_version %s is newer than the API server %s; a kubelet must never be newer than the API "
                    "server (version skew policy; allowed: %s): set %s to %s, or upgrade the control plane first"
               % (_v(kube), server_version, allowed, var, "v1.%d.x" % server[1]))
    elif kube[1] not in minors:
        f.fail(var, "kube_version %s is too old for the API server %s; the kubelet may be at most %d minor versions "
                    "older (version skew policy; allowed: %s): set %s within that range"
               % (_v(kube), server_version, server[1] - minors[0], allowed, var))
    elif kube[1] == server[1] and kube[2] > server[2]:
        f.warn(var, "kube_version %s is a newer patch release than the API server %s; upgrading the control plane "
                    "to it first is recommended" % (_v(kube), server_version))
    return f.result()


CNI_DIRS_FIX = {
    "containerd": "make `containerd.exe config dump` work on the node (it reads config.toml, by default "
                  "C:\\Program Files\\containerd\\config.toml, or the file the service's --config names; "
                  "`containerd.exe config default` prints a valid one), then run the playbook again",
    "docker": "register cri-dockerd as a service (its --cni-bin-dir and --cni-conf-dir default to C:\\k\\cni\\bin "
              "and C:\\k\\cni\\config), then run the playbook again",
}


def check_cni_dirs(container_runtime, cni_dirs):
    """The node role writes the CNI config and plugins where the runtime looks (both modes); that must be known."""
    f = Findings("cni_dirs")
    if cni_dirs is None:
        return f.result()
    if cni_dirs.get("error") or not cni_dirs.get("bin_dir") or not cni_dirs.get("conf_dir"):
        f.fail(VARIABLES["container_runtime"],
               "the CNI directories of %s (kubewin_container_runtime=%s) are unknown, so the pod network's "
               "configuration cannot be put where the runtime reads it: %s. Fix: %s"
               % (container_runtime, container_runtime, cni_dirs.get("error") or "no directories reported",
                  CNI_DIRS_FIX.get(container_runtime, "use containerd or docker")))
        return f.result()
    # Another CNI configuration the runtime would load instead of (or besides) 10-flannel.conf (realnode F4).
    max_conf_num = cni_dirs.get("max_conf_num", 1)
    conflicts = runtime_cni.conf_dir_conflicts(cni_dirs.get("conf_files") or [], max_conf_num)
    message = runtime_cni.conf_dir_conflict_message(conflicts, cni_dirs["conf_dir"], container_runtime, max_conf_num)
    if message:
        f.fail(VARIABLES["container_runtime"], message)
    return f.result()
