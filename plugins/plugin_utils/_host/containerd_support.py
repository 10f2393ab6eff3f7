# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which containerd a Kubernetes version supports: containerd's RELEASES.md, "Kubernetes Support" (the table at
containerd/containerd 301026e5, 2026-08-22): :data:`KUBERNETES_SUPPORT`.

PRIVATE to the collection: no compatibility promise outside it.
"""

from __future__ import annotations

import re

from ansible_collections.kubewin.nodes.plugins.module_utils import _versions as versions

# containerd's RELEASES.md, "Kubernetes Support" (containerd/containerd 301026e5): per Kubernetes minor, the lowest
# patch of each containerd minor recommended for it ("2.1.0+, 2.0.1+, 1.7.24+, 1.6.36+"). A containerd minor a row
# does not list is not supported for that Kubernetes version.
KUBERNETES_SUPPORT = {
    (1, 32): ((2, 1, 0), (2, 0, 1), (1, 7, 24), (1, 6, 36)),
    (1, 33): ((2, 1, 0), (2, 0, 4), (1, 7, 24), (1, 6, 36)),
    (1, 34): ((2, 1, 3), (2, 0, 6), (1, 7, 28), (1, 6, 39)),
    (1, 35): ((2, 2, 0), (2, 1, 5), (1, 7, 28)),
    (1, 36): ((2, 3, 0), (2, 2, 0)),
}
SUPPORT_SOURCE = "containerd's RELEASES.md, Kubernetes Support"


def _release(text):
    """((major, minor, patch), whether it is a pre-release) of a release version, (None, None) for anything else."""
    text = str(text or "")
    version = versions.parse(text) if re.match(r"^\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?$", text.lstrip("v")) else None
    return (version, "-" in text) if version else (None, None)


def _fmt(parts):
    return ".".join(str(p) for p in parts)


def support_problem(containerd_version, kube):
    """Why containerd ``containerd_version`` is not one :data:`KUBERNETES_SUPPORT` recommends for Kubernetes ``kube``
    ((major, minor, ...)), or None. A Kubernetes minor newer than the table's last row is held to that row
    (containerd adds a row per Kubernetes release; until it does, the newest row is the stricter guess), one older
    than its first to the first row. A pre-release (2.3.0-rc.1) is below its release."""
    version, pre = _release(containerd_version)
    if version is None or not kube:
        return None
    rows = sorted(KUBERNETES_SUPPORT)
    minor = tuple(kube[:2])
    row = minor if minor in KUBERNETES_SUPPORT else rows[-1] if minor > rows[-1] else rows[0]
    floors = KUBERNETES_SUPPORT[row]
    floor = next((f for f in floors if f[:2] == version[:2]), None)
    if floor is not None and (version > floor or (version == floor and not pre)):
        return None
    held = "" if row == minor else " (its row for %s, the %s it has)" % (
        _fmt(row), "newest" if minor > row else "oldest")
    return ("containerd %s is not a version %s recommends for Kubernetes %s%s: %s"
            % (str(containerd_version).lstrip("v"), SUPPORT_SOURCE, _fmt(minor), held,
               ", ".join("%s+" % _fmt(f) for f in floors)))


def newer_than_listed(containerd_version, kube):
    """Whether ``containerd_version``'s minor is newer than every one the Kubernetes version's row lists (2.3 where
    the 1.35 row lists 2.2, 2.1, 1.7). RELEASES.md calls its table the releases "recommended ... based on which
    versions have been the most thoroughly tested", not the only ones that work: preflight warns for these and refuses
    a patch below a listed floor or an older minor (see support_problem)."""
    version, _pre = _release(containerd_version)
    if version is None or not kube:
        return False
    rows = sorted(KUBERNETES_SUPPORT)
    minor = tuple(kube[:2])
    row = minor if minor in KUBERNETES_SUPPORT else rows[-1] if minor > rows[-1] else rows[0]
    return version[:2] > max(f[:2] for f in KUBERNETES_SUPPORT[row])
