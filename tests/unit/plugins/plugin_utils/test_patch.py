"""The patch rollout's input check (playbooks/patch.yml's second play) and its tables: every bad input refused with
the variable and the fix, the KB patterns win_updates matches exactly one KB with, and the tables."""

import re
from pathlib import Path

import pytest
import yaml

from ansible_collections.kubewin.nodes.plugins.plugin_utils import _patch as patch

ROOT = Path(__file__).resolve().parents[4]
DEFAULTS = yaml.safe_load((ROOT / "roles" / "kubewin" / "defaults" / "main.yml").read_text())
SPEC = yaml.safe_load((ROOT / "roles" / "kubewin" / "meta" / "argument_specs.yml").read_text())[
    "argument_specs"]["main"]["options"]


def _values(**changes):
    values = {k: v for k, v in DEFAULTS.items() if k.startswith("kubewin_patch_")}
    values.update(kubewin_patch_serial=1, kubewin_patch_drain_timeout=300)
    values.update(changes)
    return values


def _errors(**changes):
    return patch.check(_values(**changes))[1]


def test_the_defaults_pass_and_reject_the_known_bad_kb():
    settings, errors = patch.check(_values())
    assert errors == []
    assert settings["categories"] == ["Security Updates", "Critical Updates", "Update Rollups"]
    assert settings["reject_kbs"] == ["KB5040437"] and settings["accept_list"] == []
    assert settings["reject_list"] == ["KB5040437(?!\\d)"]
    assert settings["skip_optional"] is True and settings["repair"] is True
    assert settings["drain_timeout"] == 300 and settings["max_passes"] == 3 and settings["serial"] == 1


@pytest.mark.parametrize("changes, variable, fix", [
    ({"kubewin_patch_categories": ["Securty Updates"]}, "kubewin_patch_categories", "did you mean 'Security Updates'"),
    ({"kubewin_patch_categories": []}, "kubewin_patch_categories", "name at least one category"),
    ({"kubewin_patch_categories": "Security Updates"}, "kubewin_patch_categories", "must be a list"),
    ({"kubewin_patch_accept_kbs": ["KB50404"]}, "kubewin_patch_accept_kbs", "KB followed by 6 to 8 digits"),
    ({"kubewin_patch_reject_kbs": ["5040437x"]}, "kubewin_patch_reject_kbs", "KB followed by 6 to 8 digits"),
    ({"kubewin_patch_reject_kbs": ["5044281"]}, "kubewin_patch_reject_kbs", "write it as KB5044281"),
    ({"kubewin_patch_reject_kbs": ["KB5044281.*"]}, "kubewin_patch_reject_kbs", "is not a KB id"),
    ({"kubewin_patch_known_bad_kbs": ["KB123456789"]}, "kubewin_patch_known_bad_kbs", "is not a KB id"),
    ({"kubewin_patch_accept_kbs": ["KB5044281"], "kubewin_patch_reject_kbs": ["kb5044281"]},
     "kubewin_patch_reject_kbs", "remove it from one"),
    ({"kubewin_patch_accept_kbs": ["KB5040437"]}, "kubewin_patch_known_bad_kbs", "without it"),
    ({"kubewin_patch_serial": 0}, "kubewin_patch_serial", "e.g. kubewin_patch_serial: 1"),
    ({"kubewin_patch_serial": "101%"}, "kubewin_patch_serial", "percentage from 1% to 100%"),
    ({"kubewin_patch_serial": True}, "kubewin_patch_serial", "number of nodes"),
    ({"kubewin_patch_server_selection": "wsus"}, "kubewin_patch_server_selection", "managed_server"),
    ({"kubewin_patch_skip_optional": "maybe"}, "kubewin_patch_skip_optional", "true or false"),
    ({"kubewin_patch_drain_timeout": 10}, "kubewin_patch_drain_timeout", "from 30 to 86400"),
    ({"kubewin_patch_reboot_timeout": "soon"}, "kubewin_patch_reboot_timeout", "whole number"),
    ({"kubewin_patch_max_passes": 0}, "kubewin_patch_max_passes", "from 1 to 10"),
    ({"kubewin_patch_health_timeout": True}, "kubewin_patch_health_timeout", "whole number"),
])
def test_a_bad_input_is_refused_naming_the_variable_and_the_fix(changes, variable, fix):
    errors = _errors(**changes)
    assert len(errors) == 1, errors
    assert variable in errors[0] and fix in errors[0]


def test_every_bad_input_is_reported_at_once():
    errors = _errors(kubewin_patch_categories=["Securty Updates"], kubewin_patch_accept_kbs=["KB50404"],
                     kubewin_patch_serial=0)
    assert len(errors) == 3


@pytest.mark.parametrize("given, expected", [
    (["security updates", "UpdateRollups", "criticalupdates"],
     ["Security Updates", "Update Rollups", "Critical Updates"]),
    (["*"], ["*"]),
    (["Upgrades", "Upgrades"], ["Upgrades"]),
])
def test_categories_as_the_module_names_them(given, expected):
    settings, errors = patch.check(_values(kubewin_patch_categories=given))
    assert errors == [] and settings["categories"] == expected


@pytest.mark.parametrize("value, expected", [(2, 2), ("3", 3), ("25%", "25%"), ("100%", "100%")])
def test_serial_as_a_count_or_a_percentage(value, expected):
    settings, errors = patch.check(_values(kubewin_patch_serial=value))
    assert errors == [] and settings["serial"] == expected


def test_kb_ids_are_upper_case_and_the_reject_list_keeps_the_known_bad_ones():
    settings, errors = patch.check(_values(kubewin_patch_reject_kbs=["kb5044281", "KB5044281"],
                                           kubewin_patch_accept_kbs=["kb5044282"]))
    assert errors == []
    assert settings["reject_kbs"] == ["KB5044281", "KB5040437"]
    assert settings["accept_kbs"] == ["KB5044282"]


def _win_updates_match(entry, title, kbs):
    """What win_updates.ps1 does with an accept/reject entry: ``$matchList = ($updateInfo.title + $updateInfo.kb)``
    is a string plus an array, so ONE string (the KB ids, each with its KB prefix, joined by spaces after the
    title), matched with -imatch (unanchored, case-insensitive; .NET regex, whose (?!...) Python's re shares)."""
    return re.search(entry, title + " ".join("KB%s" % kb for kb in kbs), re.IGNORECASE) is not None


@pytest.mark.parametrize("title, kbs, matched", [
    ("2024-07 Cumulative Update for Microsoft server operating system (KB5040437)", ["5040437"], True),
    ("Update without the KB in its title", ["5040437"], True),
    ("2024-07 Cumulative Update (KB50404371)", ["50404371"], False),  # a longer id that starts the same
    ("2024-10 Cumulative Update (KB5044281)", ["5044281"], False),
])
def test_the_kb_pattern_matches_that_kb_only_in_win_updates_match_string(title, kbs, matched):
    assert _win_updates_match(patch.kb_pattern("KB5040437"), title, kbs) is matched


def test_the_traps_the_pattern_avoids():
    """A bare id also matches a longer one; an anchored id matches nothing (the string starts with the title)."""
    title, kbs = "2024-07 Cumulative Update (KB5040437)", ["5040437"]
    assert _win_updates_match("KB504043", title, kbs)
    assert not _win_updates_match("^KB5040437$", title, kbs)
    assert not _win_updates_match(patch.kb_pattern("KB504043"), title, kbs)


def test_the_playbook_passes_every_patch_variable_to_the_check():
    """A kubewin_patch_* option the validation play does not pass would reach the role unchecked."""
    plays = yaml.safe_load((ROOT / "playbooks" / "patch.yml").read_text())
    passed = plays[1]["tasks"][0]["kubewin.nodes.patch_rollout"]["inputs"]
    assert set(passed) == {name for name in SPEC if name.startswith("kubewin_patch_")}
    assert all(value.startswith("{{ %s " % name) for name, value in passed.items())


def test_the_documented_categories_are_the_ones_refused_otherwise():
    for category in patch.CATEGORIES:
        assert category in SPEC["kubewin_patch_categories"]["description"][0]


def _result(*updates):
    return {"updates": {str(i): dict(u, id=str(i)) for i, u in enumerate(updates)}}


def test_updates_of_a_win_updates_result_by_kb():
    result = _result({"title": "B", "kb": ["5044281"], "installed": True}, {"title": "A", "kb": ["5040437"]},
                     {"title": "Defender", "kb": []})
    assert patch.found(result) == [{"kb": "-", "title": "Defender", "installed": False},
                                   {"kb": "KB5040437", "title": "A", "installed": False},
                                   {"kb": "KB5044281", "title": "B", "installed": True}]
    assert patch.found({}) == [] and patch.found(None) == []


def test_check_table_lists_each_nodes_updates():
    rows = [{"host": "win-1", "node": "win-1", "updates": [{"kb": "KB5044281", "title": "2024-10 CU"}],
             "result": "would install"},
            {"host": "win-2", "node": "win-2", "updates": [], "result": "nothing to install"}]
    assert patch.check_table(rows) == ["NODE   HOST   KB         TITLE",
                                       "win-1  win-1  KB5044281  2024-10 CU",
                                       "win-2  win-2  -          nothing to install"]


def test_summary_table_keeps_the_order_of_the_rows():
    """With serial: 1 or 2 the rows come in the inventory's order; a failed row says where it stopped."""
    rows = [{"host": "win-1", "node": "win-1", "kbs": ["KB5044281"], "reboots": 1, "minutes": 12.25,
             "repaired": [], "result": "patched"},
            {"host": "win-2", "node": "win-2", "kbs": ["KB5044282"], "reboots": "1", "minutes": "3.0",
             "repaired": ["flanneld"], "result": "failed at health check"}]
    assert patch.summary_table(rows) == [
        "NODE   HOST   KBS INSTALLED  REBOOTS  MINUTES  REPAIRED  RESULT",
        "win-1  win-1  KB5044281      1        12.2     -         patched",
        "win-2  win-2  KB5044282      1        3.0      flanneld  failed at health check"]
