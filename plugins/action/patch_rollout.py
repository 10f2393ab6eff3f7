# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for kubewin.nodes.patch_rollout: the patch rollout's inputs, updates and tables, on the controller
only (plugin_utils/_patch.py), no remote call."""

from __future__ import annotations

from ansible.plugins.action import ActionBase

from ansible_collections.kubewin.nodes.plugins.modules.patch_rollout import (
    ARGUMENT_SPEC,
    MUTUALLY_EXCLUSIVE,
    REQUIRED_ONE_OF,
)
from ansible_collections.kubewin.nodes.plugins.plugin_utils import _patch as patch


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False  # nothing runs on the host: no connection is ever opened

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        dummy, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC, mutually_exclusive=MUTUALLY_EXCLUSIVE,
                                                  required_one_of=REQUIRED_ONE_OF)
        host = (task_vars or {}).get("inventory_hostname", "?")
        result["changed"] = False
        if args["inputs"] is not None:
            settings, errors = patch.check(args["inputs"])
            result["errors"] = errors
            if errors:
                result.update(failed=True, msg="Nothing was changed. Fix these inputs of %s: %s"
                              % (host, " ".join(errors)))
            else:
                result["settings"] = settings
        elif args["result"] is not None:
            result["updates"] = patch.found(args["result"])
        else:
            make = patch.check_table if args["table"] == "check" else patch.summary_table
            result["table"] = make(args["rows"])
        return result
