"""Fake ansible.windows.win_updates: ``updates[host]`` is a queue of KB lists, one per install run (a search shows
the head); each installed list needs a reboot; a KB in ``failing`` fails to install."""

from ansible.plugins.action import ActionBase
from fake_state import op, state


class ActionModule(ActionBase):
    def run(self, tmp=None, task_vars=None):
        host = task_vars["inventory_hostname"]
        searched = self._task.check_mode or self._task.args.get("state") == "searched"
        with state() as data:
            op(data, host, "win_updates searched" if searched else "win_updates installed")
            queue = data.setdefault("updates", {}).setdefault(host, [])
            kbs = (queue[0] if searched else queue.pop(0)) if queue else []
            failing = set() if searched else set(data.get("failing", [])) & set(kbs)
            if not searched:
                data.setdefault("installed", {}).setdefault(host, []).extend(k for k in kbs if k not in failing)
        updates = {}
        for kb in kbs:
            info = {"title": "Update (KB%s)" % kb, "kb": [kb], "installed": not searched and kb not in failing}
            if not searched and kb in failing:
                info.update(failure_hresult_code=2149842978, failure_msg="WU_E_INSTALL_FAILED")
            updates["id-" + kb] = info
        result = {"changed": bool(kbs) and not searched, "updates": updates, "filtered_updates": {},
                  "found_update_count": len(kbs), "installed_update_count": len(kbs) - len(failing),
                  "failed_update_count": len(failing), "reboot_required": bool(kbs) and not searched, "rebooted": False}
        if failing:
            result.update(failed=True, msg="Failed to install all updates - see updates for more information")
        return result
