# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The base of the collection's action plugins for Windows hosts: the shared prologue and one error format.

FOR INTERNAL COLLECTION USE ONLY (as ansible.windows says of its plugin_utils/_reboot.py): the interface
may change in any release.
"""

from __future__ import annotations

from ansible.plugins.action import ActionBase

from ansible_collections.kubewin.nodes.plugins.plugin_utils._winremote import RemoteScriptError, run_script


class WindowsAction(ActionBase):
    """Validates the task's options against ``ARGSPEC`` and runs ``act``; an exception listed in ``ERRORS``
    (or a failed script) ends the task with ``<module> on <host>: <reason>``.

    Subclasses set ``ARGSPEC`` (and ``REQUIRED_IF``), ``ERRORS``, and implement ``act(args)``, which returns
    the task result fields; ``self.task_vars`` and ``self.host`` are set before it runs.
    """

    TRANSFERS_FILES = False
    _requires_connection = True
    ARGSPEC = {}
    REQUIRED_IF = None
    ERRORS = ()

    @property
    def module_name(self):
        # The plugin's file name is its module's name (plugins/action/<module>.py).
        return type(self).__module__.rsplit(".", 1)[-1]

    def run(self, tmp=None, task_vars=None):
        self.task_vars = task_vars or {}
        result = super(WindowsAction, self).run(tmp, self.task_vars)
        dummy, args = self.validate_argument_spec(argument_spec=self.ARGSPEC, required_if=self.REQUIRED_IF)
        self.host = self.task_vars.get("inventory_hostname", "?")
        try:
            result.update(self.act(args))
        except (RemoteScriptError,) + tuple(self.ERRORS) as e:
            result.update(failed=True, msg=self.error(args, e))
        # facts run_script learnt on the way (the transport key a first secret write had the host make)
        if getattr(self, "kubewin_facts", None):
            result["ansible_facts"] = dict(result.get("ansible_facts") or {}, **self.kubewin_facts)
        return result

    def act(self, args):
        raise NotImplementedError

    def subject(self, args):
        """What the task acts on (e.g. 'service kubelet'), named in an error that does not name it already."""
        return None

    def error(self, args, reason):
        reason = str(reason)
        subject = self.subject(args)
        if subject and not reason.startswith(subject):
            reason = "%s: %s" % (subject, reason)
        return "%s on %s: %s" % (self.module_name, self.host, reason)

    def script(self, name, parameters=None, sensitive=False):
        """Run the collection's script ``name`` on the task's host (see winremote.run_script)."""
        return run_script(self, self.task_vars, name, parameters, sensitive=sensitive)
