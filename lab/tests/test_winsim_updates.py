"""The lab's Windows Update Agent (winsim_updates) and the win_updates stand-in (issue 21 point 5): the real
module's category names and aliases, its unanchored case-insensitive list matching on one string (title and KB
ids), the order of filtered_reasons, an unknown category matching nothing without an error, check mode as a
search, a failed update, a pending reboot, and updates completed by the reboot with their effects (HNS refusing
Overlay networks). No control plane needed; only the last test runs a playbook (against a simulated host)."""

import re

import pytest
from simhost import one
from winsim import core

# isort: split
# winsim.core has put the stand-in ansible.windows collection on sys.path.
from ansible_collections.ansible.windows.plugins.module_utils import (
    winsim_boot,
    winsim_hns,
    winsim_module,
    winsim_updates,
)

CU = {"id": "a1", "title": "2024-07 Cumulative Update for Microsoft server operating system (KB5040437)",
      "kb": ["5040437"], "categories": ["Security Updates", "Windows Server 2022"], "reboot_required": True}
DEFENDER = {"id": "d1", "title": "Security Intelligence Update for Microsoft Defender (KB2267602)", "kb": ["2267602"],
            "categories": ["Definition Updates"]}
OPTIONAL = {"id": "o1", "title": "2024-07 Preview of Cumulative Update (KB5040438)", "kb": ["5040438"],
            "categories": ["Updates"], "browse_only": True}


def _state(*updates, **wu):
    return {"windows_update": dict({"available": [dict(u) for u in updates], "installed": [], "pending_reboot": []},
                                   **wu)}


def _search(state, **params):
    return winsim_updates.run(state, dict({"state": "searched"}, **params), check_mode=False)


def test_the_aliases_are_the_real_modules():
    """win_updates.ps1 maps these camel-case names with a case-insensitive switch ("For backwards compatibility")."""
    with open(winsim_module.real_collection_dir() + "/plugins/modules/win_updates.ps1") as f:
        text = f.read()
    block = text[text.index("For backwards compatibility"):]
    block = block[:block.index("default {")]
    real = {alias.lower(): name for alias, name in re.findall(r"(\w+) \{ '([^']+)' \}", block)}
    assert real == winsim_updates.ALIASES


def test_the_stand_in_takes_the_real_modules_options():
    options, legacy = winsim_module.real_documentation("win_updates")
    assert not legacy
    assert {"category_names", "accept_list", "reject_list", "skip_optional", "server_selection", "state", "reboot",
            "reboot_timeout", "log_path"} <= set(options)
    assert options["state"]["choices"] == ["installed", "searched", "downloaded"]


def test_categories_by_full_name_alias_or_star_case_insensitive():
    state = _state(CU, DEFENDER)
    assert set(_search(state, category_names=["securityupdates"])["updates"]) == {"a1"}
    assert set(_search(state, category_names=["SECURITY UPDATES"])["updates"]) == {"a1"}
    assert set(_search(state, category_names=["*"])["updates"]) == {"a1", "d1"}


def test_an_unknown_category_matches_nothing_and_is_no_error():
    result = _search(_state(CU, DEFENDER), category_names=["Securty Updates"])
    assert result["updates"] == {} and not result.get("failed")
    assert result["filtered_updates"]["a1"]["filtered_reasons"] == ["category_names"]


def test_list_entries_are_unanchored_case_insensitive_regexes_on_title_and_kbs():
    state = _state(CU, DEFENDER)
    result = _search(state, category_names=["*"], reject_list=["kb504043"])  # a shorter id still matches
    assert set(result["updates"]) == {"d1"} and result["filtered_updates"]["a1"]["filtered_reasons"] == ["reject_list"]
    # one string (title + KB ids): an anchored id matches nothing, so nothing is rejected
    assert set(_search(state, category_names=["*"], reject_list=["^KB5040437$"])["updates"]) == {"a1", "d1"}
    # an id that ends the number matches that KB only
    assert set(_search(state, category_names=["*"], reject_list=[r"KB504043(?!\d)"])["updates"]) == {"a1", "d1"}
    assert set(_search(state, category_names=["*"], reject_list=[r"KB5040437(?!\d)"])["updates"]) == {"d1"}
    assert set(_search(state, category_names=["*"], accept_list=["Defender"])["updates"]) == {"d1"}


def test_filtered_reasons_in_the_modules_order_and_skip_optional():
    state = _state(dict(OPTIONAL, hidden=True), CU)
    result = _search(state, category_names=["Security Updates"], accept_list=["KB5040437"], reject_list=["Preview"],
                     skip_optional=True)
    assert result["filtered_updates"]["o1"]["filtered_reasons"] == ["accept_list", "reject_list", "hidden",
                                                                    "category_names", "skip_optional"]
    assert set(result["updates"]) == {"a1"} and result["updates"]["a1"]["kb"] == ["5040437"]


def test_check_mode_and_searched_install_nothing():
    state = _state(CU)
    for result in (winsim_updates.run(state, {"state": "installed", "category_names": ["*"]}, check_mode=True),
                   _search(state, category_names=["*"])):
        assert result["found_update_count"] == 1 and not result["changed"]
        assert result["updates"]["a1"]["installed"] is False
    assert state["windows_update"]["pending_reboot"] == [] and state["windows_update"]["installed"] == []


def test_an_update_that_needs_a_reboot_completes_at_the_reboot_with_its_effects(tmp_path):
    host = core.create_host(str(tmp_path), "w")
    with host.open():
        host.state["windows_update"] = _state(dict(CU, effects={"hns_refuse": {"Overlay": "HNS failed with error : "
                                                                               "Unspecified error"}}))["windows_update"]
        result = winsim_updates.run(host.state, {"state": "installed", "category_names": ["*"]}, check_mode=False)
        assert result["changed"] and result["reboot_required"] and result["installed_update_count"] == 1
        again = winsim_updates.run(host.state, {"state": "installed", "category_names": ["*"]}, check_mode=False)
        assert again["failed"] and again["msg"] == winsim_updates.REBOOT_PENDING
        assert winsim_hns.flannel_network(host.state, "vxlan", 4096, "10.244.1.0/24")["Success"]  # not yet
        winsim_boot.reboot(host)
        assert host.state["windows_update"]["installed"] == ["a1"]
        assert _search(host.state, category_names=["*"])["updates"] == {}
        refused = winsim_hns.flannel_network(host.state, "vxlan", 4097, "10.244.2.0/24")
        assert not refused["Success"] and refused["Error"] == "HNS failed with error : Unspecified error"
        assert winsim_hns.flannel_network(host.state, "host-gw", None, "10.244.3.0/24")["Success"]  # L2Bridge works


def test_a_failed_update_fails_the_run_with_its_hresult():
    state = _state(dict(DEFENDER, fail={"hresult": 0x80240022, "msg": "Operation failed"}), CU)
    result = winsim_updates.run(state, {"state": "installed", "category_names": ["*"]}, check_mode=False)
    assert result["failed"] and result["msg"] == winsim_updates.INSTALL_FAILED
    assert result["failed_update_count"] == 1 and result["updates"]["d1"]["failure_hresult_code"] == 0x80240022
    assert result["updates"]["a1"]["installed"] is True


@pytest.mark.parametrize("reboot", [False, True])
def test_the_stand_in_action_reboots_only_when_asked(lab, reboot):
    """Runs a playbook against a simulated host (no control plane)."""
    core.edit(lab.root, "win-1", lambda state: state.update(_state(CU)))
    lab.reset_ops()
    rc, _, res = lab.play("""
        - name: updates
          ansible.windows.win_updates:
            category_names: ['*']
            reboot: %s
    """ % str(reboot).lower())
    result = one(res, "updates")
    assert rc == 0, res
    assert result["installed_update_count"] == 1 and result["updates"]["a1"]["installed"]
    assert result["rebooted"] is reboot and result["reboot_required"] is not reboot
    assert lab.ops() == (["winsim_updates", "winsim_reboot", "winsim_updates"] if reboot else ["winsim_updates"])
