# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for kubewin.nodes.win_containerd: containerd's configuration from the installed binary's defaults,
its service and crictl's configuration, decided on the controller (plugin_utils/_host/containerd.py)."""

from __future__ import annotations

import base64

from ansible_collections.kubewin.nodes.plugins.module_utils import _windows_args as wa
from ansible_collections.kubewin.nodes.plugins.plugin_utils import _win_scripts
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import containerd
from ansible_collections.kubewin.nodes.plugins.plugin_utils._windows_action import WindowsAction


class ActionModule(WindowsAction):
    ARGSPEC = wa.CONTAINERD_ARGSPEC
    ERRORS = (containerd.ContainerdError,)

    def subject(self, args):
        return "containerd"

    def act(self, args):
        if args["state"] == "stopped":
            return self.stop()
        problem = containerd.image_reference_problem(args["sandbox_image"])
        if problem:
            raise containerd.ContainerdError("sandbox_image %r: %s" % (args["sandbox_image"], problem))
        problems = containerd.registry_problems(args["registry_mirrors"])
        if problems:
            raise containerd.ContainerdError("registry_mirrors: %s" % "; ".join(problems))
        state = self.script("containerd_state", {"Exe": containerd.EXE, "Files": [
            containerd.CONFIG, containerd.CRICTL_CONFIG, containerd.ROTATE_SCRIPT, containerd.ROTATE_SETTINGS],
            "HostsDir": containerd.HOSTS_DIR, "Service": containerd.SERVICE})
        plan = containerd.plan(state, args["sandbox_image"], args["registry_mirrors"],
                               _win_scripts.load("containerd_log_rotate"), args["log_max_size_mb"],
                               args["log_max_files"])
        result = {"changed": bool(plan["changed"]), "registered": plan["register"] or plan["reregister"],
                  "restarted": plan["restart"]}
        if self._task.diff and plan["changed"]:
            have = state.get("files") or {}
            before = "".join("# %s\n%s" % (f["path"], have.get(f["path"]) or "") for f in plan["files"])
            after = "".join("# %s\n%s" % (f["path"], base64.b64decode(f["content"]).decode("utf-8"))
                            for f in plan["files"])
            result["diff"] = {"before": before + "".join("# %s\n" % p for p in plan["remove"]), "after": after,
                              "before_header": "containerd", "after_header": "containerd"}
        if plan["changed"] and not self._task.check_mode:
            answer = self.script("containerd_apply", {
                "Exe": containerd.EXE, "Files": plan["files"], "Remove": plan["remove"], "LogDir": containerd.LOG_DIR,
                "Register": plan["register"], "RegisterArgs": containerd.register_args(),
                "ImagePath": containerd.service_command() if plan["reregister"] else "",
                "Restart": plan["restart"], "Start": plan["start"],
                "Service": containerd.SERVICE, "Crictl": containerd.CRICTL, "Endpoint": containerd.PIPE,
                "WaitSeconds": containerd.VERIFY_SECONDS if args["version"] else 0})
            problem = containerd.register_problem(answer, plan)
            if problem:
                raise containerd.ContainerdError(problem)
            problem = containerd.verify_problem(answer, args["version"])
            if problem:
                raise containerd.ContainerdError(problem)
        return result

    def stop(self):
        """containerd stopped for its binaries to be replaced (the upgrade role, after the kubelet stopped): its pod
        sandboxes removed first, then a wait until no shim runs, so none keeps a program of its bin directory in use."""
        state = self.script("containerd_state", {"Exe": containerd.EXE, "Files": [], "HostsDir": containerd.HOSTS_DIR,
                                                 "Service": containerd.SERVICE})
        service = state.get("service") or {}
        if not service.get("exists"):
            raise containerd.ContainerdError("the containerd service does not exist: there is nothing to stop")
        running = (service.get("status") or "").lower() != "stopped"
        # also when containerd is stopped already: a shim left running keeps bin\ in use (review-s9 W8)
        if not self._task.check_mode:
            answer = self.script("containerd_apply", {"Stop": True, "Service": containerd.SERVICE,
                                                      "Crictl": containerd.CRICTL, "Endpoint": containerd.PIPE,
                                                      "Shim": containerd.SHIM,
                                                      "ShimWaitSeconds": containerd.SHIM_WAIT_SECONDS})
            problem = containerd.stop_problem(answer)
            if problem:
                raise containerd.ContainerdError(problem)
        return {"changed": running, "registered": False, "restarted": False}
