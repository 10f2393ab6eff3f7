# Test-lab stand-in for the ansible.windows.win_updates action: one remote operation (winsim_updates) per round, and
# with reboot=true the real action's loop (plugins/action/win_updates.py _run_sync): reboot through the win_reboot
# stand-in's module when the updates need it, then run again until a round installs nothing. Check mode is
# state=searched (the module exits after the search). rebooted is set when it rebooted.
from __future__ import annotations

from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):
    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        self._supports_check_mode = True
        result = super(ActionModule, self).run(tmp, task_vars)
        args = dict(self._task.args)
        reboot = bool(args.get("reboot"))
        merged = {"changed": False, "rebooted": False, "updates": {}, "filtered_updates": {}}
        while True:
            answer = self._execute_module("ansible.windows.winsim_updates", module_args=args, task_vars=task_vars)
            for key in ("updates", "filtered_updates"):
                merged[key].update(answer.pop(key, None) or {})
            merged["changed"] = merged["changed"] or bool(answer.pop("changed", False))
            merged.update(answer)
            if answer.get("failed") or not (reboot and answer.get("reboot_required")) or self._task.check_mode \
                    or args.get("state", "installed") != "installed":
                break
            booted = self._execute_module("ansible.windows.winsim_reboot", module_args={}, task_vars=task_vars)
            if booted.get("failed"):
                merged.update(failed=True, msg="Failed to reboot host: %s" % booted.get("msg"))
                break
            merged.update(rebooted=True, changed=True, reboot_required=False)
        updates = merged["updates"]
        merged["found_update_count"] = len(updates)
        merged["failed_update_count"] = sum(1 for u in updates.values() if "failure_hresult_code" in u)
        merged["installed_update_count"] = sum(1 for u in updates.values()
                                               if u.get("installed") and "failure_hresult_code" not in u)
        result.update(merged)
        return result
