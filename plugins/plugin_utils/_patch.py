# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The patch rollout's inputs checked before any change, and its tables (playbooks/patch.yml, roles/patch)."""

from __future__ import annotations

import difflib
import re

# The categories ansible.windows.win_updates documents (its category_names option), and the camel-case names it
# maps to them (win_updates.ps1, "For backwards compatibility", a case-insensitive switch). The module compares
# categories with -ieq and never checks them: an unknown name silently filters out every update.
CATEGORIES = ("Application", "Connectors", "Critical Updates", "Definition Updates", "Developer Kits", "Feature Packs",
              "Guidance", "Security Updates", "Service Packs", "Tools", "Update Rollups", "Updates", "Upgrades")
ALIASES = {"CriticalUpdates": "Critical Updates", "DefinitionUpdates": "Definition Updates",
           "DeveloperKits": "Developer Kits", "FeaturePacks": "Feature Packs", "SecurityUpdates": "Security Updates",
           "ServicePacks": "Service Packs", "UpdateRollups": "Update Rollups"}
SERVER_SELECTIONS = ("default", "managed_server", "windows_update")
KB_RE = re.compile(r"^KB\d{6,8}$", re.IGNORECASE)

# (variable, lowest, highest): whole numbers of seconds or counts.
RANGES = (
    ("kubewin_patch_drain_timeout", 30, 86400),
    ("kubewin_patch_reboot_timeout", 60, 7200),
    ("kubewin_patch_health_timeout", 30, 3600),
    ("kubewin_patch_max_passes", 1, 10),
)
BOOLS = ("kubewin_patch_skip_optional", "kubewin_patch_repair")
KB_LISTS = ("kubewin_patch_accept_kbs", "kubewin_patch_reject_kbs", "kubewin_patch_known_bad_kbs")
_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


def kb_pattern(kb):
    """The accept/reject entry win_updates matches exactly this KB with.

    win_updates matches each entry with -imatch (a case-insensitive, unanchored regex) against ONE string: the
    title followed by the KB ids joined by spaces (``$updateInfo.title + $updateInfo.kb`` in win_updates.ps1, a
    string plus an array), e.g. ``2024-07 Cumulative Update ... (KB5040437)KB5040437``. So ``^KB5040437$`` would
    match nothing, and a bare ``KB504043`` would also match KB5040437. The entry ends the number instead."""
    return "%s(?!\\d)" % kb


def _as_list(name, value, errors):
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        errors.append("%s must be a list (YAML: one entry per line, each starting with '- '), not %r." % (name, value))
        return []
    return list(value)


def _kbs(name, value, errors):
    kbs = []
    for entry in _as_list(name, value, errors):
        text = str(entry).strip()
        if not KB_RE.match(text):
            hint = "KB%s" % text if text.isdigit() else "KB followed by 6 to 8 digits, e.g. KB5040437"
            errors.append("%s: %r is not a KB id; write it as %s." % (name, entry, hint))
            continue
        kb = text.upper()
        if kb not in kbs:
            kbs.append(kb)
    return kbs


def _categories(value, errors):
    name = "kubewin_patch_categories"
    known = {c.lower(): c for c in CATEGORIES}
    known.update({a.lower(): c for a, c in ALIASES.items()})
    result = []
    for entry in _as_list(name, value, errors):
        text = str(entry).strip()
        if text == "*":
            category = "*"
        else:
            category = known.get(text.lower())
        if category is None:
            close = difflib.get_close_matches(text, CATEGORIES + tuple(ALIASES), n=1)
            errors.append("%s: unknown category %r (win_updates would silently install nothing from it); %suse one of "
                          "%s, or '*' for all." % (name, entry, ("did you mean %r? " % close[0]) if close else "",
                                                   ", ".join(CATEGORIES)))
        elif category not in result:
            result.append(category)
    if not result and not any(name in e for e in errors):
        errors.append("%s is empty: name at least one category, e.g. [Security Updates, Critical Updates]." % name)
    return result


def _int(name, value, low, high, errors):
    if isinstance(value, bool) or not re.match(r"^\s*\d+\s*$", str(value)):
        errors.append("%s must be a whole number from %d to %d, not %r." % (name, low, high, value))
        return None
    number = int(str(value))
    if not low <= number <= high:
        errors.append("%s must be from %d to %d, not %d." % (name, low, high, number))
        return None
    return number


def _bool(name, value, errors):
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    errors.append("%s must be true or false, not %r." % (name, value))
    return None


def _serial(value, errors):
    name = "kubewin_patch_serial"
    text = str(value).strip()
    percent = re.match(r"^(\d+)%$", text)
    if percent and 1 <= int(percent.group(1)) <= 100:
        return text
    if not isinstance(value, bool) and re.match(r"^\d+$", text) and int(text) >= 1:
        return int(text)
    errors.append("%s must be a number of nodes (1 or more) or a percentage from 1%% to 100%%, not %r; "
                  "e.g. kubewin_patch_serial: 1." % (name, value))
    return None


def check(values):
    """``(settings, errors)`` for the kubewin_patch_* variables in ``values``: the settings the role uses (KB ids
    upper case, the reject list with the known-bad list, and their win_updates patterns; the categories as the
    module names them), and one sentence per bad input naming the variable and the fix."""
    errors = []
    settings = {"serial": _serial(values.get("kubewin_patch_serial", 1), errors),
                "categories": _categories(values.get("kubewin_patch_categories"), errors)}
    kbs = {name: _kbs(name, values.get(name), errors) for name in KB_LISTS}
    accept = kbs["kubewin_patch_accept_kbs"]
    reject = list(kbs["kubewin_patch_reject_kbs"])
    reject += [kb for kb in kbs["kubewin_patch_known_bad_kbs"] if kb not in reject]
    for kb in accept:
        if kb in kbs["kubewin_patch_reject_kbs"]:
            errors.append("%s is in both kubewin_patch_accept_kbs and kubewin_patch_reject_kbs: remove it from one."
                          % kb)
        elif kb in kbs["kubewin_patch_known_bad_kbs"]:
            errors.append("%s is in kubewin_patch_accept_kbs and in kubewin_patch_known_bad_kbs (it breaks Windows "
                          "nodes): to install it anyway, set kubewin_patch_known_bad_kbs without it." % kb)
    settings.update(accept_kbs=accept, reject_kbs=reject, accept_list=[kb_pattern(kb) for kb in accept],
                    reject_list=[kb_pattern(kb) for kb in reject])
    selection = values.get("kubewin_patch_server_selection", "default")
    if selection not in SERVER_SELECTIONS:
        errors.append("kubewin_patch_server_selection must be one of %s, not %r."
                      % (", ".join(SERVER_SELECTIONS), selection))
    settings["server_selection"] = selection
    for name in BOOLS:
        settings[name[len("kubewin_patch_"):]] = _bool(name, values.get(name), errors)
    for name, low, high in RANGES:
        settings[name[len("kubewin_patch_"):]] = _int(name, values.get(name), low, high, errors)
    return settings, errors


def found(result):
    """The updates a win_updates result lists to install, sorted by KB: ``[{kb, title}]`` (kb with its prefix)."""
    updates = (result or {}).get("updates") or {}
    rows = []
    for update in updates.values():
        kbs = ["KB%s" % kb for kb in update.get("kb") or []]
        rows.append({"kb": ", ".join(kbs) or "-", "title": update.get("title") or "", "installed":
                     bool(update.get("installed"))})
    return sorted(rows, key=lambda r: (r["kb"], r["title"]))


def _lines(rows):
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]) - 1)]
    return ["  ".join([str(r[i]).ljust(w) for i, w in enumerate(widths)] + [str(r[-1])]).rstrip() for r in rows]


def check_table(rows):
    """--check: one line per update each node would get (or 'nothing to install'): NODE, HOST, KB, TITLE."""
    lines = [("NODE", "HOST", "KB", "TITLE")]
    for row in rows:
        updates = row.get("updates") or []
        if row.get("result", "").startswith("failed"):
            lines.append((row.get("node") or "-", row["host"], "-", row["result"]))
        elif not updates:
            lines.append((row.get("node") or "-", row["host"], "-", "nothing to install"))
        for update in updates:
            lines.append((row.get("node") or "-", row["host"], update["kb"], update["title"]))
    return _lines(lines)


def summary_table(rows):
    """The rollout's table: NODE, HOST, KBS INSTALLED, REBOOTS, MINUTES, REPAIRED, RESULT, one line per node in
    the order the rows were made (a node's row is made when its turn ends)."""
    lines = [("NODE", "HOST", "KBS INSTALLED", "REBOOTS", "MINUTES", "REPAIRED", "RESULT")]
    for row in rows:
        lines.append((row.get("node") or "-", row["host"], ", ".join(row.get("kbs") or []) or "-",
                      row.get("reboots", 0), "%.1f" % float(row.get("minutes") or 0),
                      ", ".join(row.get("repaired") or []) or "-", row.get("result") or "-"))
    return _lines(lines)
