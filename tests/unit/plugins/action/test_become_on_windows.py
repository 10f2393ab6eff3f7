"""kubespray is run with -b. On a Windows host sudo cannot run (ansible-core refuses it for PowerShell
modules); the collection says so before anything runs on the host, naming the host and the fix."""

import pytest
from remote_host import RemoteHost

from ansible_collections.kubewin.nodes.plugins.action.win_host_facts import ActionModule as FactsAction


class Become:
    def __init__(self, load_name):
        self._load_name = load_name
        self.name = load_name.split(".")[-1]


@pytest.mark.parametrize("method", ["sudo", "ansible.builtin.sudo", "su"])
def test_become_with_a_linux_method_fails_before_any_remote_call_naming_host_and_fix(make_action, method):
    host = RemoteHost({"node_facts": lambda params: pytest.fail("node_facts ran under become")})
    action = make_action(FactsAction, {}, host)
    action._connection.become = Become(method)
    result = action.run(task_vars={"inventory_hostname": "win-7"})
    assert result["failed"] and host.calls == []
    assert "become is on for Windows host win-7 with the %s method" % method.split(".")[-1] in result["msg"]
    assert "set ansible_become: false for the Windows hosts' group" in result["msg"]
    assert "group_vars/kube_windows_nodes.yml" in result["msg"]


def test_without_become_or_with_runas_the_script_runs(make_action):
    answered = []
    host = RemoteHost({"node_facts": lambda params: answered.append(1) or {}})
    for become in (None, Become("ansible.builtin.runas")):
        action = make_action(FactsAction, {}, host)
        action._connection.become = become
        action.run(task_vars={"inventory_hostname": "win-7"})
    assert host.names() == ["node_facts", "node_facts"]
