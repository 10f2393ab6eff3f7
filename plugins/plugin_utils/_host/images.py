# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Container images on a Windows node: the pause (sandbox) image that fits the host's build, and the images pulled
before the node takes work (issue 23 points 3 and 4).

Windows container images run only on hosts whose build their manifest names (Microsoft Learn, "Windows container
version compatibility": process isolation needs the image's build to match the host's; a mismatch fails with
HCS_E_IMAGE_MISMATCH, "The container operating system does not match the host operating system"). A multi-platform
image carries one manifest per build, told apart by ``platform."os.version"`` (``10.0.<build>.<revision>``) in its
manifest list (OCI image-spec image-index.md; kubernetes build/pause/Makefile annotates each with
``docker manifest annotate --os-version``). containerd on Windows picks the manifest for the host's build
(containerd platforms, matcher on windows); where a build is not known to be in an image, the collection refuses it
(the stricter choice: containerd accepts an older build's manifest on some hosts, which Hyper-V isolation then
refuses with HCS_E_IMAGE_MISMATCH, kubernetes-sigs/windows-testing#557).

PRIVATE to the collection: no compatibility promise outside it.
"""

from __future__ import annotations

import json

from ansible_collections.kubewin.nodes.plugins.module_utils import _versions as versions
from ansible_collections.kubewin.nodes.plugins.plugin_utils import _hostprocess as hostprocess
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import containerd

WS2019, WS2022, WS2025 = 17763, 20348, 26100
BUILD_NAMES = {WS2019: "Windows Server 2019", WS2022: "Windows Server 2022", WS2025: "Windows Server 2025"}

# The pin list shipped with the collection: image reference (by tag) -> the digest it is used by (None: not known
# to the collection, so the operator pins it) and the Windows builds its manifest list carries, with the sources.
# - registry.k8s.io/pause 3.6 added ltsc2022 to 1809 (build/pause/CHANGELOG.md 3.6, #104438); 3.7 and 3.9 removed only
#   semi-annual builds (3.7: 1903, 1909, 2004; 3.9: 20H2), so 3.9 to 3.10.1 carry 17763 and 20348.
#   kubernetes-sigs/windows-testing#557: pause 3.10 and 3.10.1 have no Windows Server 2025 manifest.
# - registry.k8s.io/pause 3.10.2: build/pause/CHANGELOG.md 3.10.2 ("Updating Windows pause image base to
#   mcr.microsoft.com/oss/v2/kubernetes/windows-pause-image-base:v0.4.1 to add Windows Server 2025 (ltsc2025)
#   support"), kubernetes v1.37.2 build/pause/Makefile (TAG 3.10.2; one manifest per os.version of that base);
#   kubeadm's default pause from v1.36 (cmd/kubeadm/app/constants PauseVersion 3.10.2). Its manifest list's digest
#   as published in digest-pinned references (not read from the registry by the collection's authors; a site whose
#   registry shows another digest pins its own in kubewin_hostprocess_image_pins).
# - mcr.microsoft.com/oss/kubernetes/pause:3.9: no source says it has a Windows Server 2025 manifest (review-s8 W7);
#   Microsoft's image-builder moved to mcr.microsoft.com/oss/v2/kubernetes/pause for 2025
#   (kubernetes-sigs/image-builder#1985), so it is listed with 17763 and 20348 only.
PAUSE_3_10_2 = "registry.k8s.io/pause:3.10.2"
PINS = {
    PAUSE_3_10_2: {"digest": "sha256:f548e0e8e3dc1896ca956272154dde3314e8cc4fde0a57577ee9fa1c63f5baf4",
                   "builds": (WS2019, WS2022, WS2025)},
    "registry.k8s.io/pause:3.10.1": {"digest": None, "builds": (WS2019, WS2022)},
    "registry.k8s.io/pause:3.10": {"digest": None, "builds": (WS2019, WS2022)},
    "registry.k8s.io/pause:3.9": {"digest": None, "builds": (WS2019, WS2022)},
    "mcr.microsoft.com/oss/kubernetes/pause:3.9": {"digest": None, "builds": (WS2019, WS2022)},
}

# The pause image per host build when kubewin_sandbox_image is not set: the one pause whose manifest list is known
# (above) to carry every supported build.
PAUSE_BY_BUILD = {WS2019: PAUSE_3_10_2, WS2022: PAUSE_3_10_2, WS2025: PAUSE_3_10_2}

SANDBOX_VAR = "kubewin_sandbox_image"
BUILDS_VAR = "kubewin_sandbox_image_builds"
PINS_VAR = "kubewin_hostprocess_image_pins"
PREPULL_VAR = "kubewin_prepull_images"


def _name(ref):
    return ref.split("@", 1)[0]


def shipped_pins():
    """tag reference -> digest reference of the pin list (the entries whose digest is known)."""
    return {ref: "%s@%s" % (ref, pin["digest"]) for ref, pin in PINS.items() if pin["digest"]}


def sandbox_image(build, image=None, builds=None, pins=None):
    """(digest reference, problems) of the pause image for a host of Windows ``build``: ``image`` (the operator's
    kubewin_sandbox_image) or, unset, the table's; its builds from the pin list, else ``builds`` (the operator's
    kubewin_sandbox_image_builds, read from the image's manifest list); ``pins`` (kubewin_hostprocess_image_pins) map
    a tag to its digest reference before the shipped pins. Each problem names the variable and the fix."""
    image = str(image or "").strip()
    where = "%s %s" % (SANDBOX_VAR, repr(image)) if image else "the pause image the collection picks"
    if not image:
        image = PAUSE_BY_BUILD.get(build)
        if image is None:
            return None, ["no pause image is known to carry Windows build %s (the collection's table lists %s): "
                          "set %s to a pause image whose manifest list has os.version 10.0.%s.*, pinned by digest, "
                          "and %s: [%s]" % (build, ", ".join("%d (%s)" % (b, BUILD_NAMES[b]) for b in PAUSE_BY_BUILD),
                                            SANDBOX_VAR, build, BUILDS_VAR, build)]
    problem = containerd.image_reference_problem(image)
    if problem:
        return None, ["%s: %s; set it to the pause image the nodes pull, pinned by digest, or leave it unset for "
                      "the collection's choice per Windows build" % (where, problem)]
    all_pins = dict(shipped_pins(), **(pins if isinstance(pins, dict) else {}))
    known = PINS.get(_name(image))
    if known:
        have = set(known["builds"])
        source = "the collection's pin list"
    elif builds:
        have = set(versions.windows_build(b) for b in (builds if isinstance(builds, list) else [builds]))
        if None in have:
            return None, ["%s is %r: list Windows builds like 20348 or 10.0.20348 (the os.version entries of the "
                          "image's manifest list)" % (BUILDS_VAR, builds)]
        source = BUILDS_VAR
    else:
        return None, ["%s: which Windows builds its manifest list carries is not known to the collection, so it "
                      "could run on this Windows build %s or fail every pod with HCS_E_IMAGE_MISMATCH; list the "
                      "builds in %s (the os.version entries of `crane manifest %s`), or leave %s unset"
                      % (where, build, BUILDS_VAR, _name(image), SANDBOX_VAR)]
    if build not in have:
        return None, ["%s has no manifest for this host's Windows build %s (%s lists %s): every pod's sandbox would "
                      "fail (HCS_E_IMAGE_MISMATCH, Microsoft Learn, Windows container version compatibility); use "
                      "a pause image with a %s manifest (%s has one for builds %s), or leave %s unset"
                      % (where, build, source, ", ".join(str(b) for b in sorted(have)), build, PAUSE_3_10_2,
                         ", ".join(str(b) for b in PINS[PAUSE_3_10_2]["builds"]), SANDBOX_VAR)]
    if hostprocess.is_digest_reference(image):
        return image, []
    if image in all_pins and hostprocess.is_digest_reference(all_pins[image]):
        return all_pins[image], []
    return None, ["%s is a tag the registry can move to another image: pin it by digest: set %s to "
                  "<name>@sha256:<64 hex digits>, or map the tag to that in %s (`crane digest %s`)"
                  % (where, SANDBOX_VAR, PINS_VAR, image)]


# --- pre-pull ------------------------------------------------------------------------------------------------------
def normalized(ref):
    """A reference as containerd's CRI lists it (distribution/reference ParseNormalizedNamed, then TagNameOnly):
    Docker Hub's domain docker.io and its library/ for one-component names, :latest where neither tag nor digest."""
    name, dummy, digest = ref.partition("@")
    slash = name.find("/")
    first = name[:slash] if slash > 0 else ""
    if not first or ("." not in first and ":" not in first and first != "localhost"):
        name = "docker.io/" + (name if "/" in name else "library/" + name)
    if not digest and ":" not in name.rsplit("/", 1)[-1]:
        name += ":latest"
    return name + ("@" + digest if digest else "")


def prepull_problems(images):
    """One message per entry of kubewin_prepull_images that is not an image reference (before any change)."""
    if images in (None, ""):
        return []
    if not isinstance(images, list):
        return ["%s is %r: it must be a list of image references" % (PREPULL_VAR, images)]
    problems = []
    for i, ref in enumerate(images):
        problem = containerd.image_reference_problem(ref)
        if problem:
            problems.append("%s entry %d (%r): %s; fix or remove it" % (PREPULL_VAR, i + 1, ref, problem))
    return problems


def present_images(crictl_output):
    """The references an image list from ``crictl images -o json`` holds ({images: [{repoTags, repoDigests}]},
    cri-tools cmd/crictl/image.go; the CRI's Image message), normalized; None when it cannot be read."""
    try:
        data = json.loads(crictl_output) if isinstance(crictl_output, str) else crictl_output
        refs = set()
        for image in (data or {}).get("images") or []:
            refs.update(normalized(r) for r in (image.get("repoTags") or []) + (image.get("repoDigests") or []))
        return refs
    except (ValueError, AttributeError, TypeError):
        return None


def to_pull(images, present):
    """The entries of ``images`` not in ``present`` (present_images), in the order given, each once."""
    present = present or set()
    out = []
    for ref in images or []:
        key = normalized(ref)
        name, dummy, digest = key.partition("@")
        if digest:  # CRI lists repoDigests as name@digest, without the tag a reference may carry
            key = "%s@%s" % (name.rsplit(":", 1)[0] if ":" in name.rsplit("/", 1)[-1] else name, digest)
        if key not in present and ref not in out:
            out.append(ref)
    return out


class ImageError(Exception):
    pass


def pull_result(image, answer, timeout, check_mode=False):
    """win_image_pull's result from image_pull's answer: {changed, present, seconds}; an ImageError naming the image
    and the fix when crictl is missing or the pull failed or was stopped. In check mode a host without crictl (the
    run would install it first) would pull the image."""
    if not answer.get("crictl") and check_mode:
        return {"changed": True, "present": False, "seconds": 0}
    if not answer.get("crictl"):
        raise ImageError("crictl is not at %s\\crictl.exe: the runtime role installs it with containerd "
                         "(kubewin_containerd_install); install it there or set kubewin_prepull_images to []"
                         % containerd.CRICTL_DIR)
    if answer.get("present"):
        return {"changed": False, "present": True, "seconds": 0}
    code = answer.get("code")
    if code is None:  # check mode: it would be pulled
        return {"changed": True, "present": False, "seconds": 0}
    output = " ".join(answer.get("output") or [])[-600:]
    if code == 1460:
        raise ImageError("pulling %s did not finish within %s s and was stopped: raise kubewin_prepull_timeout, or "
                         "check the node's connection to the registry (kubewin_containerd_registry_mirrors, "
                         "kubewin_http_proxy)" % (image, timeout))
    if code != 0:
        hint = ("the image has no manifest for this host's Windows build that containerd takes (the host's build, "
                "and from Windows Server 2022 on also the builds from ltsc2022 up to it: containerd/platforms "
                "checkWindowsHostAndContainerCompat); use a tag built for this build"
                if "no match for platform" in output else
                "check the reference, the registry's credentials and the node's connection to it")
        raise ImageError("crictl pull %s failed (exit code %s): %s; %s, or remove it from kubewin_prepull_images"
                         % (image, code, output or "no output", hint))
    return {"changed": True, "present": False, "seconds": answer.get("seconds") or 0}
