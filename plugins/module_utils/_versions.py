# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's one version parser: Kubernetes, runtime and release versions.

Kubernetes versions come in two spellings: kubespray writes ``kube_version: 1.36.4`` (since v2.28,
commit f6ae46c9d "download: remove 'v' version prefix from defaults"), kubeadm and the API server
write ``v1.36.4``. Both are accepted everywhere; download URLs, image tags and comparisons use the
release tag this module returns (``v1.36.4``), so no caller adds or strips the ``v`` itself.
"""

from __future__ import annotations

import re

# major.minor[.patch], with an optional leading v.
_CORE = r"v?(\d+)\.(\d+)(?:\.(\d+))?"
# A whole version: the core and an optional pre-release (-rc.1) or build (+k3s1, -eks-1) suffix.
_WHOLE = re.compile(r"^" + _CORE + r"((?:[-+][0-9A-Za-z][0-9A-Za-z.+-]*)?)$")
# A version inside free text ('containerd github.com/containerd/containerd/v2 v2.0.4 abc').
_INSIDE = re.compile(r"(?<![\w.])" + _CORE + r"(?![\w])")
# What Kubernetes releases are tagged as (kubernetes/release: vX.Y.Z, vX.Y.Z-alpha.N/-beta.N/-rc.N).
_KUBE_RELEASE = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)(-(?:alpha|beta|rc)\.\d+)?$")
# A release tag of flannel or the CNI plugins as used in their download URLs (v0.26.7, v1.6.2-flannel1).
_RELEASE_TAG = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z][0-9A-Za-z.-]*)?$")

KUBE_VERSION_FORM = "major.minor.patch with or without a leading v, e.g. 1.36.4 or v1.36.4 (or a pre-release such " \
                    "as v1.37.0-rc.1)"


def parse(text, whole=True):
    """'v1.31.2', '1.7.13', '1.33' -> (1, 31, 2) / (1, 7, 13) / (1, 33, 0); None when it is no version.

    ``whole``: the text must be a version (a -suffix or +suffix allowed); otherwise the first version
    found inside the text is returned (for the output of ``containerd --version``).
    """
    text = str(text if text is not None else "").strip()
    m = _WHOLE.match(text) if whole else _INSIDE.search(text)
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


def leading(text, full=False):
    """The version a text starts with, whatever follows ('v1.28.3-eks-4f4795d' -> (1, 28, 3)).
    ``full``: only a major.minor.patch counts."""
    m = re.match(_CORE, str(text or "").strip())
    if not m or (full and m.group(3) is None):
        return None
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


def leading_number(text):
    """The number a version field starts with (the API server's minor '28+' of a provider build -> 28); None
    when it starts with none."""
    m = re.match(r"\s*(\d+)", str(text if text is not None else ""))
    return int(m.group(1)) if m else None


def kube_release(text):
    """A Kubernetes release version in either spelling -> its tag 'v1.36.4'; None if it is none."""
    m = _KUBE_RELEASE.match(str(text if text is not None else "").strip())
    if not m:
        return None
    return "v%s.%s.%s%s" % (m.group(1), m.group(2), m.group(3), m.group(4) or "")


def server_release(git_version):
    """The release an API server's gitVersion belongs to, without a provider's build suffix
    ('v1.28.3-eks-4f4795d' and 'v1.30.1+k3s1' -> 'v1.28.3' / 'v1.30.1'; 'v1.37.0-rc.1' stays)."""
    text = str(git_version or "").strip()
    tag = kube_release(text)
    if tag:
        return tag
    ver = leading(text, full=True)
    return format_version(ver) if ver else None


def effective_kube_version(kube_version, server_git_version=None):
    """The release tag the node installs: ``kube_version`` in either spelling, or, when it is empty,
    the API server's release. A malformed ``kube_version`` is returned unchanged, so preflight (which
    checks it first) reports it in words instead of a template error."""
    if kube_version is not None and str(kube_version).strip():
        return kube_release(kube_version) or kube_version
    return server_release(server_git_version) or ""


def release_tag(text):
    """A flannel / CNI plugins release version -> 'v0.26.7'; None when it is none."""
    m = _RELEASE_TAG.match(str(text if text is not None else "").strip())
    if not m:
        return None
    return "v%s.%s.%s%s" % (m.group(1), m.group(2), m.group(3), m.group(4) or "")


def windows_build(text):
    """A Windows version's build number: '10.0.20348', '10.0.20348.2113' or '20348' -> 20348; None if the
    text is no Windows build."""
    text = str(text or "").strip()
    m = re.match(r"^10\.0\.(\d+)(?:\.\d+)?$", text) or re.match(r"^(\d{5})$", text)
    return int(m.group(1)) if m else None


def windows_update_revision(text):
    """A Windows version's update revision (UBR): '10.0.20348.2113' -> 2113; None when the text has none."""
    m = re.match(r"^10\.0\.\d+\.(\d+)$", str(text or "").strip())
    return int(m.group(1)) if m else None


def format_version(ver, parts=3, prefix="v"):
    """(1, 36, 4) -> 'v1.36.4' (parts=2: 'v1.36')."""
    return prefix + ".".join(str(p) for p in ver[:parts])
