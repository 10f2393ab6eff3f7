"""What the lab counts for `make bench` and the budget tests: each remote operation on a simulated host with the
kubewin.nodes script it ran (the winsim connection's ops.log), and each module execution on the control-plane
host (the counted_local connection's control-plane.log). Real ansible-playbook runs; no control plane needed."""

from winsim import core


def test_ops_log_names_the_script_each_operation_ran(lab):
    rc, _, _ = lab.play("""
        - name: facts
          kubewin.nodes.win_host_facts: {}
        - name: a plain module
          ansible.windows.win_file: {path: 'C:\\k', state: directory}
    """, extra=("--limit", "win-1"))
    assert rc == 0
    detailed = lab.ops_detailed()
    assert [(m, s) for _, m, s in detailed] == [("win_powershell", "node_facts"), ("win_file", None)]
    assert all(isinstance(t, float) for t, _, _ in detailed)
    assert detailed[0][0] <= detailed[1][0]
    assert lab.ops() == ["win_powershell", "win_file"]  # the module column, as every existing caller reads it
    assert core.ops_detailed(lab.root, "win-2") == []


PLAYS = """
- hosts: kube_control_plane
  gather_facts: false
  tasks:
    - name: a loop, pipelined
      ansible.builtin.command: echo {{ item }}
      loop: [a, b]
      changed_when: false
    - name: no module
      ansible.builtin.set_fact: {x: 1}
    - name: not pipelined
      ansible.builtin.stat: {path: /}
      vars: {ansible_pipelining: false}
- hosts: win-1
  gather_facts: false
  tasks:
    - name: delegated to the control plane
      ansible.builtin.stat: {path: /}
      delegate_to: localhost
    - name: on the Windows host
      ansible.windows.win_file: {path: 'C:\\\\k', state: directory}
"""


def test_control_plane_log_counts_every_module_execution_and_nothing_else(lab):
    rc, doc, res = lab.play(None, plays=PLAYS)
    assert rc == 0, res
    assert [r["stdout"] for r in res["a loop, pipelined"]["localhost"]["results"]] == ["a", "b"]  # behaves as local
    assert res["not pipelined"]["localhost"]["stat"]["isdir"] is True
    assert res["delegated to the control plane"]["win-1"]["stat"]["isdir"] is True
    logged = core.control_plane_ops(lab.root)
    assert [m for _, m in logged] == ["ansible.builtin.command", "ansible.builtin.command", "ansible.builtin.stat",
                                      "ansible.builtin.stat"]
    assert lab.ops() == ["win_file"]
    core.reset_control_plane_ops(lab.root)
    assert core.control_plane_ops(lab.root) == []
