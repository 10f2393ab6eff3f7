"""Fake ansible.windows.win_service: records the call."""

from ansible.plugins.action import ActionBase
from fake_state import op, state


class ActionModule(ActionBase):
    def run(self, tmp=None, task_vars=None):
        with state() as data:
            args = self._task.args
            op(data, task_vars["inventory_hostname"], "win_service %s %s" % (args["name"], args.get("state")))
        return {"changed": True}
