# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters that turn the health check's per-host results into its report and its table (playbooks/health.yml)."""

from __future__ import annotations

from ansible_collections.kubewin.nodes.plugins.plugin_utils import _health as health


class FilterModule:
    def filters(self):
        return {"health_report": health.report, "health_table": health.table}
