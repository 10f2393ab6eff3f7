# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the patch rollout (playbooks/patch.yml): its inputs checked before any change, and its tables."""

from __future__ import annotations

from ansible_collections.kubewin.nodes.plugins.plugin_utils import _patch as patch


class FilterModule:
    def filters(self):
        return {"patch_settings": patch.settings, "patch_updates": patch.found,
                "patch_check_table": patch.check_table, "patch_summary_table": patch.summary_table}
