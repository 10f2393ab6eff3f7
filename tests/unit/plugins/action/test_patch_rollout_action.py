"""The patch_rollout action plugin: the patch rollout's inputs, updates found and tables, on the controller only."""

from unittest.mock import MagicMock

import pytest
from ansible.errors import AnsibleActionFail

from ansible_collections.kubewin.nodes.plugins.action.patch_rollout import ActionModule as PatchAction

GOOD = {"kubewin_patch_serial": 1, "kubewin_patch_categories": ["SecurityUpdates", "Critical Updates"],
        "kubewin_patch_accept_kbs": [], "kubewin_patch_reject_kbs": ["kb5044281"],
        "kubewin_patch_known_bad_kbs": ["KB5040437"], "kubewin_patch_skip_optional": True,
        "kubewin_patch_server_selection": "default", "kubewin_patch_drain_timeout": 300,
        "kubewin_patch_reboot_timeout": 1800, "kubewin_patch_max_passes": 3, "kubewin_patch_repair": True,
        "kubewin_patch_health_timeout": 300}


def _run(args, check_mode=False):
    task = MagicMock()
    task.args = args
    task.async_val = 0
    task.check_mode = check_mode
    task.diff = False
    connection = MagicMock()
    play_context = MagicMock()
    play_context.check_mode = check_mode
    action = PatchAction(task, connection, play_context, MagicMock(), MagicMock(), MagicMock())
    action._load_name = "kubewin.nodes.patch_rollout"
    remote = MagicMock(side_effect=AssertionError("patch_rollout made a remote call"))
    action._execute_module = action._low_level_execute_command = action._transfer_data = remote
    result = action.run(task_vars={"inventory_hostname": "win-2"})
    assert remote.call_count == 0 and connection.exec_command.call_count == 0
    assert connection._connect.call_count == 0
    return result


def test_plugin_needs_no_connection():
    assert PatchAction._requires_connection is False and PatchAction.TRANSFERS_FILES is False


@pytest.mark.parametrize("check_mode", [False, True])
def test_good_inputs_are_normalised(check_mode):
    result = _run({"inputs": GOOD}, check_mode)
    assert not result.get("failed") and result["changed"] is False and result["errors"] == []
    settings = result["settings"]
    assert settings["categories"] == ["Security Updates", "Critical Updates"]
    assert settings["reject_kbs"] == ["KB5044281", "KB5040437"]
    assert settings["reject_list"] == ["KB5044281(?!\\d)", "KB5040437(?!\\d)"] and settings["accept_list"] == []
    assert settings["serial"] == 1 and settings["drain_timeout"] == 300 and settings["repair"] is True


def test_inputs_as_templated_strings_are_accepted():
    """ansible-core 2.18 may hand templated numbers and booleans over as text."""
    values = dict(GOOD, kubewin_patch_serial="25%", kubewin_patch_drain_timeout="600", kubewin_patch_repair="False")
    settings = _run({"inputs": values})["settings"]
    assert settings["serial"] == "25%" and settings["drain_timeout"] == 600 and settings["repair"] is False


def test_bad_inputs_fail_at_once_naming_host_variables_and_fix():
    values = dict(GOOD, kubewin_patch_categories=["Securty Updates"], kubewin_patch_accept_kbs=["5040437x"],
                  kubewin_patch_reject_kbs=["KB50404"], kubewin_patch_serial=0, kubewin_patch_max_passes=11)
    result = _run({"inputs": values})
    assert result["failed"] is True and "settings" not in result and len(result["errors"]) == 5
    msg = result["msg"]
    assert msg.startswith("Nothing was changed. Fix these inputs of win-2: ")
    for part in ("kubewin_patch_categories: unknown category 'Securty Updates'", "did you mean 'Security Updates'",
                 "kubewin_patch_accept_kbs: '5040437x' is not a KB id", "kubewin_patch_reject_kbs: 'KB50404'",
                 "kubewin_patch_serial must be", "kubewin_patch_max_passes must be from 1 to 10, not 11"):
        assert part in msg, part


def test_the_updates_of_a_win_updates_result_sorted_by_kb():
    search = {"changed": False, "found_update_count": 2, "updates": {
        "b": {"title": "Update B (KB5072002)", "kb": ["5072002"], "installed": False},
        "a": {"title": "Update A (KB5072001)", "kb": ["5072001"], "installed": True}}}
    assert _run({"result": search})["updates"] == [
        {"kb": "KB5072001", "title": "Update A (KB5072001)", "installed": True},
        {"kb": "KB5072002", "title": "Update B (KB5072002)", "installed": False}]
    assert _run({"result": {"changed": False}})["updates"] == []


ROWS = [{"host": "win-1", "node": "n1", "updates": [{"kb": "KB5072001", "title": "Update A", "installed": False}],
         "kbs": ["KB5072001"], "reboots": 1, "minutes": 4.25, "repaired": [], "result": "patched"},
        {"host": "win-2", "node": "n2", "updates": [], "kbs": [], "reboots": 0, "minutes": 0, "repaired": [],
         "result": "nothing to install"}]


def test_the_tables():
    summary = _run({"rows": ROWS})["table"]
    assert summary[0].split() == ["NODE", "HOST", "KBS", "INSTALLED", "REBOOTS", "MINUTES", "REPAIRED", "RESULT"]
    assert summary[1].split() == ["n1", "win-1", "KB5072001", "1", "4.2", "-", "patched"]
    assert summary[2].split()[-3:] == ["nothing", "to", "install"]
    check = _run({"rows": ROWS, "table": "check"}, check_mode=True)["table"]
    assert check[1].split() == ["n1", "win-1", "KB5072001", "Update", "A"]
    assert check[2].split() == ["n2", "win-2", "-", "nothing", "to", "install"]


@pytest.mark.parametrize("args", [{}, {"inputs": GOOD, "rows": ROWS}, {"rows": ROWS, "table": "wide"}])
def test_one_of_inputs_result_rows(args):
    with pytest.raises(AnsibleActionFail):
        _run(args)
