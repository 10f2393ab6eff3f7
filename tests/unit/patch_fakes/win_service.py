"""Fake ansible.windows.win_service: records the call."""

from ansible.plugins.action import ActionBase
from fake_state import op, state


class ActionModule(ActionBase):
    def run(self, tmp=None, task_vars=None):
        with state() as data:
            op(data, task_vars["inventory_hostname"], "win_service %s %s" % (self._task.args["name"],
                                                                           self._task.args.get("state")))
        return {"changed": True}
