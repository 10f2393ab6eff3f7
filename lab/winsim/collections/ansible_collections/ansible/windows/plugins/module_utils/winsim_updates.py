# Test-lab only: the Windows Update Agent of a simulated host, as ansible.windows.win_updates sees it.
"""Search, filter and install the updates a test seeded, with the rules of the real module (ansible.windows 3.3.0
plugins/modules/win_updates.ps1 and plugins/action/win_updates.py); the win_updates stand-in (winsim_updates.ps1
and its action plugin) is the only caller besides the reboot model.

State (``state["windows_update"]``, seeded by tests): ``available``, a list of updates ``{id, title, kb: [ids
without "KB"], categories, browse_only, hidden, reboot_required, fail: {hresult, msg}, effects}``; ``installed``
and ``pending_reboot``, lists of update ids.

Rules, each from win_updates.ps1:
- The search is ``IsInstalled = 0``: every available update not installed. An update installed but waiting for a
  reboot is found again (the stricter reading: whether WUA reports it installed before the reboot is not stated in
  the module); installing while a reboot is pending fails with "A reboot is required before more updates can be
  installed" (the module checks Microsoft.Update.SystemInfo.RebootRequired first).
- Categories: the camel-case names map to the full ones with a case-insensitive ``switch`` ("For backwards
  compatibility"), ``*`` matches every update, others compare with ``-ieq`` against each of the update's
  categories; an unknown name matches nothing and is no error.
- accept_list and reject_list: each entry is a regex matched with ``-imatch`` (case-insensitive, unanchored)
  against ``$updateInfo.title + $updateInfo.kb``: a string plus an array, so ONE string, the title followed by the
  ``KB<id>`` ids joined by spaces. An empty accept_list accepts everything.
- ``filtered_reasons`` in this order: accept_list, reject_list, hidden, category_names, skip_optional
  (``browse_only`` updates with skip_optional).
- Results: ``kb`` without the "KB" prefix; an update that failed to install has ``failure_hresult_code`` (and the
  action adds ``failure_msg``); the run then fails with "Failed to install all updates - see updates for more
  information"; ``reboot_required`` is SystemInfo.RebootRequired after the install.
- Check mode is ``state=searched``; ``changed`` is true only when something was downloaded or installed.

Effects, applied when the reboot that completes an update happens (``complete_at_boot``, called by
winsim_boot.reboot, planned or not): ``{"hns_refuse": {"Overlay": "<error>"}}`` makes HNS refuse to create networks
of that type (winsim_hns; a stand-in for a KB5040437-like breakage of pod networking, microsoft/Windows-Containers
#516, whose exact failure the issue does not document).
"""

from __future__ import annotations

import re

from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError

ALIASES = {"criticalupdates": "Critical Updates", "definitionupdates": "Definition Updates",
           "developerkits": "Developer Kits", "featurepacks": "Feature Packs", "securityupdates": "Security Updates",
           "servicepacks": "Service Packs", "updaterollups": "Update Rollups"}
REBOOT_PENDING = "A reboot is required before more updates can be installed"
INSTALL_FAILED = "Failed to install all updates - see updates for more information"


def _wu(state):
    return state.setdefault("windows_update", {"available": [], "installed": [], "pending_reboot": []})


def _in_list(text, patterns):
    """Test-InList: True for an empty list, else any pattern -imatch the text."""
    if not patterns:
        return True
    for pattern in patterns:
        try:
            if re.search(pattern, text, re.IGNORECASE):
                return True
        except re.error as e:
            raise SimError("win_updates: the list entry %r is not a valid regex: %s" % (pattern, e)) from None
    return False


def _reasons(update, params):
    categories = [ALIASES.get(str(c).lower(), c) for c in params.get("category_names") or []]
    wanted = [str(c).lower() for c in categories]
    mine = [str(c).lower() for c in update.get("categories") or []]
    category_match = not categories or any(c == "*" or c in mine for c in wanted)
    match_text = (update.get("title") or "") + " ".join("KB%s" % kb for kb in update.get("kb") or [])
    reasons = []
    if not _in_list(match_text, params.get("accept_list") or []):
        reasons.append("accept_list")
    if params.get("reject_list") and _in_list(match_text, params["reject_list"]):
        reasons.append("reject_list")
    if update.get("hidden"):
        reasons.append("hidden")
    if not category_match:
        reasons.append("category_names")
    if params.get("skip_optional") and update.get("browse_only"):
        reasons.append("skip_optional")
    return reasons


def _info(update):
    return {"id": update["id"], "title": update.get("title") or "", "kb": [str(k) for k in update.get("kb") or []],
            "categories": list(update.get("categories") or []), "installed": False, "downloaded": False}


def reboot_required(state):
    return bool(_wu(state)["pending_reboot"])


def run(state, params, check_mode):
    """One win_updates run (without its reboot): the module's result keys, and ``failed``/``msg`` on failure."""
    wu = _wu(state)
    result = {"changed": False, "reboot_required": reboot_required(state), "updates": {}, "filtered_updates": {},
              "found_update_count": 0, "installed_update_count": 0, "failed_update_count": 0}
    selected = []
    for update in wu["available"]:
        if update["id"] in wu["installed"]:
            continue
        reasons = _reasons(update, params)
        if reasons:
            result["filtered_updates"][update["id"]] = dict(_info(update), filtered_reasons=reasons)
        else:
            selected.append(update)
            result["updates"][update["id"]] = _info(update)
    result["found_update_count"] = len(selected)
    if check_mode or params.get("state") == "searched" or not selected:
        return result
    if result["reboot_required"]:
        return dict(result, failed=True, msg=REBOOT_PENDING)
    result["changed"] = True
    failed = False
    for update in selected:
        info = result["updates"][update["id"]]
        info["downloaded"] = True
        if params.get("state") == "downloaded":
            result["installed_update_count"] += 1
            continue
        if update.get("fail"):
            failed = True
            info["failure_hresult_code"] = int(update["fail"].get("hresult", 0x80240022))
            info["failure_msg"] = update["fail"].get("msg", "Operation failed (WU_E_ALL_UPDATES_FAILED 0x80240022)")
            result["failed_update_count"] += 1
            continue
        info["installed"] = True
        result["installed_update_count"] += 1
        if update.get("reboot_required"):
            wu["pending_reboot"].append(update["id"])
        else:
            wu["installed"].append(update["id"])
    result["reboot_required"] = reboot_required(state)
    if failed:
        result.update(failed=True, msg=INSTALL_FAILED)
    return result


def complete_at_boot(state):
    """The updates waiting for a reboot are installed, and their effects applied; returns their ids."""
    wu = state.get("windows_update")
    if not wu or not wu.get("pending_reboot"):
        return []
    done = list(wu["pending_reboot"])
    by_id = {u["id"]: u for u in wu.get("available") or []}
    for update_id in done:
        effects = (by_id.get(update_id) or {}).get("effects") or {}
        if effects.get("hns_refuse"):
            state.setdefault("hns_refuse", {}).update(effects["hns_refuse"])
        wu["installed"].append(update_id)
    wu["pending_reboot"] = []
    return done
