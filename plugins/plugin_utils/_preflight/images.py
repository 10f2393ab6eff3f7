# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Preflight: the pause image for the host's Windows build and the images pulled before the node takes work
(issue 23 points 3 and 4; plugin_utils/_host/images.py has the table, the pin list and their sources).

PRIVATE to the collection: no compatibility promise outside it.
"""

from __future__ import annotations

from ansible_collections.kubewin.nodes.plugins.module_utils import _versions as versions
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import containerd, images
from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight.findings import Findings

IMAGE_VALUES = (images.SANDBOX_VAR, images.BUILDS_VAR, images.PREPULL_VAR, "kubewin_prepull_timeout",
                "kubewin_prepull_retries", "kubewin_images_present")


def sandbox_image(windows_build, values, pins):
    """(the digest reference containerd's config gets, Findings result): only where this run configures containerd
    (values' kubewin_containerd_planned), else (None, no findings)."""
    f = Findings("sandbox_image")
    values = values or {}
    if str(values.get("kubewin_containerd_planned")).lower() != "true":
        return None, f.result()
    build = versions.windows_build(windows_build)
    if build is None:
        return None, f.result()  # check_windows_build names it
    ref, problems = images.sandbox_image(build, values.get(images.SANDBOX_VAR), values.get(images.BUILDS_VAR), pins)
    for problem in problems:
        f.fail(images.SANDBOX_VAR, problem)
    return ref, f.result()


def images_to_pull(container_runtime, values):
    """(the entries of kubewin_prepull_images the host does not have, Findings result). The host's images are the
    facts read's (kubewin_images_present: `crictl images -o json`, read only when the list is not empty; absent on a
    host without crictl, where every entry is pulled after the install)."""
    f = Findings("prepull_images")
    values = values or {}
    wanted = values.get(images.PREPULL_VAR)
    for problem in images.prepull_problems(wanted):
        f.fail(images.PREPULL_VAR, problem)
    if f.failures or not wanted:
        return [], f.result()
    if container_runtime != "containerd":
        f.fail(images.PREPULL_VAR, "%s pulls through crictl and containerd; with kubewin_container_runtime %s, "
                                   "set it to []" % (images.PREPULL_VAR, container_runtime))
        return [], f.result()
    present = values.get("kubewin_images_present") or {}
    if present.get("code") is None and str(values.get("kubewin_containerd_planned")).lower() != "true":
        f.fail(images.PREPULL_VAR, "%s pulls with the collection's crictl, which this host does not have (%s\\"
                                   "crictl.exe) and this run does not install (containerd is there and "
                                   "kubewin_containerd_install is not always): set kubewin_containerd_install: "
                                   "always, or %s to []" % (images.PREPULL_VAR, containerd.CRICTL_DIR,
                                                            images.PREPULL_VAR))
        return [], f.result()
    have = images.present_images(present.get("output") or '{"images": []}') if present.get("code") in (0, None) \
        else None
    if have is None:
        f.fail(images.PREPULL_VAR, "the images on this host could not be listed (`crictl images -o json` exited "
                                   "with %s: %s); check that containerd runs and crictl reaches it (crictl.yaml), "
                                   "or set %s to []" % (present.get("code"), (present.get("output") or "")[:300],
                                                        images.PREPULL_VAR))
        return [], f.result()
    return images.to_pull(wanted, have), f.result()
