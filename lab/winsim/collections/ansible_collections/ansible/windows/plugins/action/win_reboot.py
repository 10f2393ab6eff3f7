# Test-lab stand-in for the ansible.windows.win_reboot action: one remote operation that reboots the
# simulated host (services restart by start mode and dependencies, non-persistent and NAT HNS networks are gone:
# the reboot model of winsim_boot).
from __future__ import annotations

from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):
    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        if self._task.check_mode:
            return dict(result, changed=True)
        answer = self._execute_module("ansible.windows.winsim_reboot", module_args=dict(self._task.args),
                                      task_vars=task_vars)
        result.update(answer)
        return result
