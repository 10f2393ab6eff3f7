# Test-lab only: crictl.exe on a simulated host: the images containerd's CRI holds, pulled from simulated sources.
"""crictl against containerd's pipe, for the commands the collection runs (cri-tools cmd/crictl/image.go):

- ``crictl [--config <file>] images -o json``: the CRI's ListImages as protobuf JSON, ``{"images": [{"id", "repoTags",
  "repoDigests", "size", ...}]}``.
- ``crictl [--config <file>] inspecti -q <ref>``: exit 0 with the image's status when the CRI has it, else
  ``no such image "<ref>" present`` and exit 1 (crictl's logrus Fatal).
- ``crictl [--config <file>] pull <ref>``: ``Image is up to date for <image id>`` and exit 0; a failure is
  ``pulling image: rpc error: code = NotFound desc = failed to pull and unpack image "<ref>": ...`` and exit 1.
- ``crictl [--config <file>] rmi <ref>``: ``Deleted: <ref>`` (the integration target's clean-up).

Sources of the images (IMAGES): each reference's manifest list as its publisher describes it. containerd on Windows
chooses the manifest with its platform matcher (containerd/platforms platform_windows_compat.go, vendored at containerd
301026e5, checkWindowsHostAndContainerCompat; hcsshim osversion CheckHostAndContainerCompat is the same): on a host
below Windows Server 2022 (build 20348) only the host's build; from 20348 on, every build from the LTSC before the
host's generation (20348 for 20348 and for 26100 and later, the list being ltsc2022, ltsc2025) up to the host's build,
the newest preferred (windowsMatchComparer). One without such a manifest ends with "no match for platform in manifest:
not found" (containerd core/images/image.go Manifest). So a pull can succeed with an image that then fails to run
(kubernetes-sigs/windows-testing#557: pause 3.10.1's ltsc2022 manifest on Windows Server 2025; a sandbox's start and
HCS_E_IMAGE_MISMATCH are not simulated); preflight's own build table stays stricter. An unknown reference is not found
(stricter).
Digests are sha256 of the reference (lab only), except registry.k8s.io/pause:3.10.2's (plugin_utils/_host/images.py).
"""

from __future__ import annotations

import hashlib
import json

PIPE = r"\\.\pipe\containerd-containerd"
PAUSE_3_10_2_DIGEST = "sha256:f548e0e8e3dc1896ca956272154dde3314e8cc4fde0a57577ee9fa1c63f5baf4"

# reference (by tag) -> Windows builds of its manifest list
IMAGES = {
    # kubernetes build/pause CHANGELOG.md 3.6 (ltsc2022 added to 1809), 3.10.2 (ltsc2025 added);
    # kubernetes-sigs/windows-testing#557 (3.10, 3.10.1 without ltsc2025)
    "registry.k8s.io/pause:3.10.2": (17763, 20348, 26100),
    "registry.k8s.io/pause:3.10.1": (17763, 20348),
    "registry.k8s.io/pause:3.10": (17763, 20348),
    "registry.k8s.io/pause:3.9": (17763, 20348),
    "mcr.microsoft.com/oss/kubernetes/pause:3.9": (17763, 20348),
    # Microsoft Artifact Registry, Nano Server and Server Core: the ltsc tags are single-build
    "mcr.microsoft.com/windows/nanoserver:ltsc2019": (17763,),
    "mcr.microsoft.com/windows/nanoserver:ltsc2022": (20348,),
    "mcr.microsoft.com/windows/nanoserver:ltsc2025": (26100,),
    "mcr.microsoft.com/windows/servercore:ltsc2022": (20348,),
    "mcr.microsoft.com/windows/servercore:ltsc2025": (26100,),
}


# containerd/platforms platform_windows_compat.go: compatLTSCReleases (ltsc2022, ltsc2025)
_LTSC = (20348, 26100)


def compatible(host_build, image_build):
    """containerd's checkWindowsHostAndContainerCompat for the builds (major and minor are 10.0 on every Windows
    Server here)."""
    if host_build < _LTSC[0]:
        return image_build == host_build
    index = max(i for i, b in enumerate(_LTSC) if host_build >= b)
    floor = _LTSC[max(index - 1, 0)]
    return floor <= image_build <= host_build


def manifest_build(host_build, tag_ref):
    """The build of the manifest containerd takes for ``tag_ref`` on the host (the newest that matches), or None."""
    builds = [b for b in IMAGES[tag_ref] if host_build is not None and compatible(int(host_build), b)]
    return max(builds) if builds else None


def digest_of(tag_ref):
    if tag_ref == "registry.k8s.io/pause:3.10.2":
        return PAUSE_3_10_2_DIGEST
    return "sha256:" + hashlib.sha256(tag_ref.encode()).hexdigest()


def _repo(tag_ref):
    return tag_ref.rsplit(":", 1)[0]


def _resolve(ref):
    """(tag reference, digest) the registry has for ``ref`` (name:tag, name@digest or name:tag@digest), or None."""
    name, _, digest = ref.partition("@")
    repo = _repo(name) if ":" in name.rsplit("/", 1)[-1] else name
    for tag_ref in IMAGES:
        if (digest_of(tag_ref) == digest and _repo(tag_ref) == repo) if digest else tag_ref == name:
            return tag_ref, digest_of(tag_ref)
    return None


def _images(host):
    return host.state.setdefault("images", [])


def _find(host, ref):
    found = _resolve(ref)
    if not found:
        return None
    for image in _images(host):
        if image["tag"] == found[0]:
            return image
    return None


def _listing(image):
    return {"id": "sha256:" + hashlib.sha256(("id " + image["tag"]).encode()).hexdigest(),
            "repoTags": [image["tag"]] if image.get("by_tag") else [],
            "repoDigests": ["%s@%s" % (_repo(image["tag"]), image["digest"])], "size": "12345678", "uid": None,
            "username": "", "spec": None, "pinned": False}


def command(host, version, args):
    """crictl.exe [--config <file>] images -o json | inspecti -q <ref> | pull <ref> -> (rc, stdout, stderr)."""
    rest, i = [], 0
    while i < len(args):
        if args[i] in ("--config", "-c") and i + 1 < len(args):
            i += 2
            continue
        rest.append(args[i])
        i += 1
    if PIPE not in (host.state.get("pipes") or []):
        return 1, "", ('time="2026-01-01T00:00:00Z" level=fatal msg="validate service connection: validate CRI v1 '
                       'image API for endpoint \\"npipe:////./pipe/containerd-containerd\\": rpc error: code = '
                       'Unavailable desc = connection error"\n')
    if rest == ["images", "-o", "json"]:
        return 0, json.dumps({"images": [_listing(i) for i in _images(host)]}, indent=2) + "\n", ""
    if len(rest) == 3 and rest[:2] == ["inspecti", "-q"]:
        image = _find(host, rest[2])
        if image is None:
            return 1, "", 'time="2026-01-01T00:00:00Z" level=fatal msg="no such image \\"%s\\" present"\n' % rest[2]
        return 0, json.dumps({"status": _listing(image)}) + "\n", ""
    if len(rest) == 2 and rest[0] == "pull":
        ref = rest[1]
        fail = ('time="2026-01-01T00:00:00Z" level=fatal msg="pulling image: rpc error: code = NotFound desc = failed '
                'to pull and unpack image \\"%s\\": %%s"\n' % ref)
        found = _resolve(ref)
        if not found:
            return 1, "", fail % ("failed to resolve reference \\\"%s\\\": %s: not found" % (ref, ref))
        build = manifest_build(host.state.get("build"), found[0])
        if build is None:
            return 1, "", fail % "no match for platform in manifest: not found"
        image = _find(host, ref)
        if image is None:
            image = {"tag": found[0], "digest": found[1], "by_tag": False, "build": build}
            _images(host).append(image)
        image["by_tag"] = image["by_tag"] or "@" not in ref
        return 0, "Image is up to date for %s\n" % _listing(image)["id"], ""
    if len(rest) == 2 and rest[0] == "rmi":  # RemoveImage: "Deleted: <ref>"
        image = _find(host, rest[1])
        if image is None:
            return 1, "", 'time="2026-01-01T00:00:00Z" level=fatal msg="no such image %s"\n' % rest[1]
        _images(host).remove(image)
        return 0, "Deleted: %s\n" % rest[1], ""
    return 1, "", "winsim: crictl %s is not simulated\n" % " ".join(args)
