#!/usr/bin/python
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: patch_rollout
short_description: The controller side of the patch rollout, its input check, updates found and tables
version_added: 0.1.0
description:
  - Runs on the controller only and never contacts a host. Used by C(playbooks/patch.yml) and the
    C(kubewin.nodes.patch) role; one of O(inputs), O(result) or O(rows) per call.
  - With O(inputs), checks the C(kubewin_patch_*) variables of one host before any change and returns the
    normalised RV(settings). Every bad input is reported at once, naming the variable and the fix, and the task
    fails.
  - With O(result), lists the updates of an M(ansible.windows.win_updates) result in RV(updates).
  - With O(rows) and O(table), makes the rollout's table in RV(table).
options:
  inputs:
    description:
      - The C(kubewin_patch_*) variables of the host, by name, as the inventory sets them (they are checked here).
      - C(kubewin_patch_categories) are M(ansible.windows.win_updates)' category names, its camel-case spellings
        (V(SecurityUpdates)) or V(*); an unknown one is refused, since the module compares categories as text and
        would silently install nothing from it.
      - C(kubewin_patch_accept_kbs), C(kubewin_patch_reject_kbs) and C(kubewin_patch_known_bad_kbs) are lists of KB
        ids, V(KB) and 6 to 8 digits; a KB accepted and also rejected or known bad is refused.
      - C(kubewin_patch_serial) is a number of nodes (1 or more) or a percentage from V(1%) to V(100%).
      - C(kubewin_patch_drain_timeout) (30 to 86400), C(kubewin_patch_reboot_timeout) (60 to 7200),
        C(kubewin_patch_health_timeout) (30 to 3600) and C(kubewin_patch_max_passes) (1 to 10) are whole numbers;
        C(kubewin_patch_skip_optional) and C(kubewin_patch_repair) booleans; C(kubewin_patch_server_selection)
        V(default), V(managed_server) or V(windows_update).
    type: dict
  result:
    description: A registered M(ansible.windows.win_updates) result (its C(updates)).
    type: dict
  rows:
    description:
      - One row per node, as the C(kubewin.nodes.patch) role makes them (C(_kubewin_patch_row)), in the order the
        nodes' turns ended.
      - Each row has C(host), C(node), C(updates) (as RV(updates)), C(kbs) (the KBs installed), C(reboots),
        C(minutes), C(repaired) (the repair steps taken) and C(result).
    type: list
    elements: dict
  table:
    description:
      - Which table to make of O(rows). V(check) lists the updates each node would get (node, host, KB, title);
        V(summary) what each node got (node, host, KBs installed, reboots, minutes, repair steps, result).
    type: str
    choices: [check, summary]
    default: summary
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  platform:
    platforms: all
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
notes:
  - Never changes anything and never contacts a host.
  - KB ids reach M(ansible.windows.win_updates) as regexes that end the number (C(KB5040437) followed by a
    lookahead for no further digit, in C(accept_list) and C(reject_list) of RV(settings)), because win_updates matches
    each entry as an unanchored, case-insensitive regex against the update's title and KB ids joined into one string.
seealso:
  - module: ansible.windows.win_updates
author:
  - kubewin.nodes maintainers (@kubewin)
"""

EXAMPLES = r"""
- name: Check the patch settings before any change
  kubewin.nodes.patch_rollout:
    inputs:
      kubewin_patch_categories: [Security Updates, Critical Updates]
      kubewin_patch_known_bad_kbs: [KB5040437]
      kubewin_patch_drain_timeout: 300
  register: _patch_check

- name: List the updates a search found
  kubewin.nodes.patch_rollout:
    result: "{{ _search }}"
  register: _found

- name: Make the rollout's table
  kubewin.nodes.patch_rollout:
    rows: "{{ _rows }}"
    table: summary
  register: _table
"""

RETURN = r"""
settings:
  description:
    - The checked O(inputs), each by its name without C(kubewin_patch_), that is C(serial), C(categories) (as
      win_updates names them), C(accept_kbs), C(reject_kbs) (with the known-bad ones), C(accept_list) and
      C(reject_list) (the win_updates entries of those KBs), C(skip_optional), C(server_selection), C(repair),
      C(drain_timeout), C(reboot_timeout), C(health_timeout), C(max_passes).
  returned: with O(inputs), when they are valid
  type: dict
  sample: {"serial": 1, "categories": ["Security Updates"], "accept_kbs": [], "reject_kbs": ["KB5040437"],
           "accept_list": [], "reject_list": ["KB5040437(?!\\d)"], "skip_optional": true,
           "server_selection": "default", "repair": true, "drain_timeout": 300, "reboot_timeout": 1800,
           "health_timeout": 300, "max_passes": 3}
errors:
  description: One sentence per bad input of O(inputs), naming the variable and the fix.
  returned: with O(inputs)
  type: list
  elements: str
  sample: ["kubewin_patch_reject_kbs: 'KB50404' is not a KB id; write it as KB followed by 6 to 8 digits, e.g.
            KB5040437."]
updates:
  description: The updates of O(result), sorted by KB, each with C(kb) (its KB ids, with the prefix), C(title) and
    C(installed).
  returned: with O(result)
  type: list
  elements: dict
  sample: [{"kb": "KB5072001", "title": "2026-11 Cumulative Update (KB5072001)", "installed": false}]
table:
  description: The lines of the table O(table), a header first.
  returned: with O(rows)
  type: list
  elements: str
  sample: ["NODE   HOST   KBS INSTALLED  REBOOTS  MINUTES  REPAIRED  RESULT",
           "win-1  win-1  KB5072001      1        4.2      -         patched"]
"""

from ansible.module_utils.basic import AnsibleModule

# The action plugin (plugins/action/patch_rollout.py) validates with this spec.
ARGUMENT_SPEC = dict(
    inputs=dict(type="dict"),
    result=dict(type="dict"),
    rows=dict(type="list", elements="dict"),
    table=dict(type="str", choices=["check", "summary"], default="summary"),
)
MUTUALLY_EXCLUSIVE = [("inputs", "result", "rows")]
REQUIRED_ONE_OF = [("inputs", "result", "rows")]


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, mutually_exclusive=MUTUALLY_EXCLUSIVE,
                           required_one_of=REQUIRED_ONE_OF, supports_check_mode=True)
    # Reached only if the action plugin was bypassed (e.g. the module was copied elsewhere).
    module.fail_json(msg="kubewin.nodes.patch_rollout runs through its action plugin; call it as a task of the "
                         "kubewin.nodes collection")


if __name__ == "__main__":
    main()
