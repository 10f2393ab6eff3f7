# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for kubewin.nodes.win_host_facts: one read of everything the roles decide on."""

from __future__ import annotations

from ansible_collections.kubewin.nodes.plugins.module_utils import _windows_args as wa
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import facts as host_facts
from ansible_collections.kubewin.nodes.plugins.plugin_utils._windows_action import WindowsAction


class ActionModule(WindowsAction):
    ARGSPEC = wa.FACTS_ARGSPEC

    def act(self, args):
        answer = self.script("node_facts", host_facts.script_parameters(args["extra_paths"], args["ca_cert_path"],
                                                                        args["list_images"]))
        return dict(changed=False, ansible_facts={"kubewin_host": host_facts.node_facts(answer, args["ca_cert_path"])})
