# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Decisions of the HostProcess mode (kubewin_deployment_mode: hostprocess): images pinned by digest (the Pod
Security Admission label it changes and puts back on reset: module_utils/_pod_security.py).

HostProcess pods run as SYSTEM on the node with the host's network, so their images are the node's
programs: a tag can be moved to another image by whoever controls the repository, a digest cannot
(an OCI image reference ``name@sha256:<hex>`` names the content).
"""

from __future__ import annotations

import re

_DIGEST_REF = re.compile(r"^[a-z0-9]+(?:[._-][a-z0-9]+)*(?::[0-9]+)?(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*"
                         r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?@sha256:[0-9a-f]{64}$")

PIN_HELP = ("pin it by digest: set it to <name>@sha256:<64 hex digits>, or map the tag to that in "
            "kubewin_hostprocess_image_pins (the digest of a tag: `crane digest <image>` or `docker buildx "
            "imagetools inspect <image>`; mirror the image and use your registry's digest in an air-gapped site)")


class HostProcessError(ValueError):
    """A value the HostProcess mode cannot use; the message names the variable and the fix."""


def is_digest_reference(ref):
    return bool(_DIGEST_REF.match(str(ref or "")))


def image_problems(images, pins):
    """``images``: variable name -> image reference; ``pins``: tag reference -> digest reference.
    Returns one message per image that is not pinned by digest, and per pin whose value is not one."""
    problems = []
    pins = pins or {}
    if not isinstance(pins, dict):
        return ["kubewin_hostprocess_image_pins must be a mapping of image reference to name@sha256:<digest>, "
                "got %r" % (pins,)]
    for ref, pinned in sorted(pins.items()):
        if not is_digest_reference(pinned):
            problems.append("kubewin_hostprocess_image_pins[%r] is %r, not an image pinned by digest "
                            "(name@sha256:<64 lowercase hex digits>)" % (ref, pinned))
    for var, ref in sorted((images or {}).items()):
        if not is_digest_reference(ref) and ref not in pins:
            problems.append("%s is %r, a tag the registry can move to another image that would run as SYSTEM on "
                            "every Windows node: %s" % (var, ref, PIN_HELP))
    return problems


# Images of kubernetes-sigs/sig-windows-tools (docker.io/sigwindowstools/...), refused for these DaemonSets:
# each runs a start script made for sig-windows-tools' own DaemonSet. The flannel ones read ConfigMaps at
# /mounts/kube-flannel/ and /mounts/kube-flannel-windows/ and the variables CNI_BIN_PATH, CNI_CONFIG_PATH and
# SERVICE_SUBNET, and write their own CNI config; their builds were removed in April 2025 (#385 on 2025-04-11:
# hostprocess/flannel; #388 on 2025-04-23: flannel from the kube-proxy image workflow), before flannel v0.26.7
# and Kubernetes v1.33. The kube-proxy images built since are for Calico (-calico-hostprocess: the HNS network
# "Calico"). Any Docker Hub spelling of the name counts (Docker's reference normalisation).
_SIG_WINDOWS_TOOLS = re.compile(r"^(?:(?:docker\.io|index\.docker\.io|registry-1\.docker\.io)/)?"
                                r"sigwindowstools/[^/:@]+(?:[:@]|$)")
IMAGE_HELP = ("build an image for this collection's DaemonSet as roles/control_plane/README.md (\"HostProcess "
              "images\") describes and set it here pinned by digest, or use kubewin_deployment_mode: services")


def unusable_images(images, pins=None):
    """``images``: variable name -> image reference; ``pins``: tag reference -> digest reference. One message
    per image this collection's DaemonSets cannot run: unset, or a sig-windows-tools image (by itself or pinned)."""
    problems = []
    for var, ref in sorted((images or {}).items()):
        ref = str(ref or "").strip()
        pinned = str((pins or {}).get(ref) or "") if isinstance(pins, dict) else ""
        if not ref:
            problems.append("%s is not set: hostprocess mode has no published image to default to "
                            "(kubernetes-sigs/sig-windows-tools removed the builds of its flannel HostProcess images "
                            "in April 2025, #385 and #388); %s" % (var, IMAGE_HELP))
        elif _SIG_WINDOWS_TOOLS.match(ref.lower()) or _SIG_WINDOWS_TOOLS.match(pinned.lower()):
            problems.append("%s is %r, a sig-windows-tools image: its start script was made for sig-windows-tools' "
                            "own DaemonSet (it reads ConfigMaps and variables this collection's DaemonSet does not "
                            "provide, and writes its own CNI config), the flannel ones were last built before flannel "
                            "v0.26.7 and Kubernetes v1.33 (builds removed in April 2025, "
                            "kubernetes-sigs/sig-windows-tools#385 and #388) and the kube-proxy ones since are for "
                            "Calico; %s" % (var, ref, IMAGE_HELP))
    return problems


def pinned_image(ref, pins=None, var="the image"):
    """The digest reference the DaemonSet uses for ``ref``."""
    if is_digest_reference(ref):
        return ref
    pinned = (pins or {}).get(ref)
    if pinned is not None and is_digest_reference(pinned):
        return pinned
    raise HostProcessError((image_problems({var: ref}, pins) or ["%s: %s" % (var, PIN_HELP)])[-1])


def daemonset_images(images, pins=None):
    """``images``: variable name -> image reference; ``pins``: tag reference -> digest reference. Variable name ->
    the digest reference its DaemonSet runs (the control_plane role's templates read it from the node's preflight
    result); None while one of them or a pin cannot be used (unusable_images and image_problems say why)."""
    if unusable_images(images, pins) or image_problems(images, pins):
        return None
    return {var: pinned_image(ref, pins, var) for var, ref in sorted((images or {}).items())}
