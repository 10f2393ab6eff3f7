"""Fake kubernetes.core.k8s_info: no objects of any kind (the health role's Services and EndpointSlices read, on the
control-plane host: not an operation on a Windows host, so not recorded)."""

from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):
    def run(self, tmp=None, task_vars=None):
        return {"changed": False, "resources": [], "api_found": True}
