# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for kubewin.nodes.win_image_pull: one image pulled through crictl unless the host has it, decided on
the controller (plugin_utils/_host/images.py)."""

from __future__ import annotations

from ansible_collections.kubewin.nodes.plugins.module_utils import _windows_args as wa
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import containerd, images
from ansible_collections.kubewin.nodes.plugins.plugin_utils._windows_action import WindowsAction


class ActionModule(WindowsAction):
    ARGSPEC = wa.IMAGE_PULL_ARGSPEC
    ERRORS = (images.ImageError,)

    def subject(self, args):
        return "image %s" % args["image"]

    def act(self, args):
        image, timeout = args["image"], args["timeout"]
        problem = containerd.image_reference_problem(image)
        if problem:
            raise images.ImageError("%r: %s" % (image, problem))
        if timeout < 1:
            raise images.ImageError("timeout is %s: it must be at least 1 (seconds)" % timeout)
        answer = self.script("image_pull", {"Crictl": containerd.CRICTL_DIR + "\\crictl.exe",
                                            "CrictlConfig": containerd.CRICTL_CONFIG, "Image": image,
                                            "Pull": not self._task.check_mode, "TimeoutSeconds": timeout})
        result = images.pull_result(image, answer, timeout, self._task.check_mode)
        if self._task.diff and result["changed"]:
            result["diff"] = {"before": {"images": []}, "after": {"images": [image]}}
        return result
