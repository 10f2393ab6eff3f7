# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run one of the collection's fixed scripts on a Windows host from an action plugin."""

from __future__ import annotations

from ansible_collections.kubewin.nodes.plugins.plugin_utils import _win_scripts as win_scripts
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import sealed

POWERSHELL_MODULE = "ansible.windows.win_powershell"


class RemoteScriptError(Exception):
    """A script failed on the host; the message says which script and what the host answered."""


def become_problem(action, task_vars):
    """None, or why the task's become cannot run on this Windows host. kubespray is run with -b (sudo to
    root on its Linux hosts); on a Windows host only the runas method exists, and ansible-core refuses
    any other one for a PowerShell module: 2.19 "Become plugin sudo is not supported by the Windows exec
    wrapper" (executor/powershell/module_manifest.py), 2.18 "The powershell shell family is incompatible
    with the sudo become plugin" (plugins/become/__init__.py). Said before anything runs, with the fix."""
    become = getattr(action._connection, "become", None)
    if become is None:
        return None
    method = str(getattr(become, "_load_name", None) or getattr(become, "name", "") or "?").rsplit(".", 1)[-1]
    if method == "runas":
        return None
    host = task_vars.get("inventory_hostname", "?")
    return ("become is on for Windows host %s with the %s method (ansible-playbook -b/--become, or ansible_become), "
            "which cannot run on Windows: set ansible_become: false for the Windows hosts' group (group_vars/"
            "kube_windows_nodes.yml, or [kube_windows_nodes:vars] ansible_become=false); the first kube_control_plane "
            "host keeps -b to read its admin kubeconfig" % (host, method))


def run_script(action, task_vars, name, parameters=None, sensitive=False):
    """Run the script ``name`` (scripts/<name>.ps1) with ``parameters`` on the task's host and return
    its ``$Ansible.Result``.

    ``action`` is the calling ActionBase; the module runs through its ``_execute_module``, so one
    call is one remote operation. ``sensitive`` runs it with no_log, and seals the contents of its ``Files``
    (node_sync) to the host's transport key (plugin_utils/_host/sealed.py): win_powershell declares
    ``parameters`` without no_log, so Ansible.Basic echoes them in ``invocation.module_args`` of the result
    whatever the task's no_log, and the exec wrapper parses them with cmdlets that PowerShell module logging
    (event 4103) records; only ciphertext may travel there. The key comes from the host's facts
    (win_host_facts reads an existing one); without one, the first secret write of a run has the host make it (one
    more remote operation, so that a read, a --check run or a run refused by preflight changes nothing there) and
    keeps it as the fact kubewin_transport_key for the run's later writes.
    """
    problem = become_problem(action, task_vars)
    if problem:
        raise RemoteScriptError(problem)
    if sensitive and (parameters or {}).get("Files"):
        key = sealed.transport_key(task_vars)
        if not key:
            key = run_script(action, task_vars, "node_facts", {"MakeTransportKey": True}).get("transport_key")
            action.kubewin_facts = dict(getattr(action, "kubewin_facts", None) or {}, kubewin_transport_key=key)
        try:
            parameters = sealed.seal_files(parameters, key)
        except sealed.SealError as e:
            raise RemoteScriptError("cannot seal the secret files for script %s: %s; re-run, which makes the "
                                    "transport key again" % (name, e)) from None
    module_args = {
        "script": win_scripts.load(name),
        "parameters": parameters or {},
        "error_action": "stop",
        "depth": 8,
    }
    saved_no_log = action._task.no_log
    if sensitive:
        action._task.no_log = True  # _execute_module passes the task's no_log to the module
    try:
        result = action._execute_module(
            module_name=POWERSHELL_MODULE, module_args=module_args, task_vars=task_vars
        )
    finally:
        action._task.no_log = saved_no_log
    if result.get("failed") or result.get("unreachable"):
        errors = result.get("error") or []
        detail = "; ".join(
            str(e.get("exception", {}).get("message") or e.get("message") or e)
            if isinstance(e, dict) else str(e)
            for e in errors
        ) or result.get("msg") or "no error text returned"
        raise RemoteScriptError(
            "script %s failed: %s" % (name, detail)
        )
    return result.get("result") or {}
