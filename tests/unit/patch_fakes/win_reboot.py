"""Fake ansible.windows.win_reboot: counts the reboots."""

from ansible.plugins.action import ActionBase
from fake_state import op, state


class ActionModule(ActionBase):
    def run(self, tmp=None, task_vars=None):
        with state() as data:
            op(data, task_vars["inventory_hostname"], "win_reboot")
        return {"changed": True, "rebooted": True, "elapsed": 1}
