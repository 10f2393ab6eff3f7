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
