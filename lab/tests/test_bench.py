"""bench/remote_ops.py's own logic, on made-up results (no lab): operations attributed to the task that was
running, ratchets per node count, and the exit status when a count goes above its ratchet."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "bench"))

import remote_ops  # noqa: E402


def test_operations_belong_to_the_last_task_started_before_them():
    doc = {"plays": [{"tasks": [
        {"task": {"name": "kubewin.nodes.preflight : Read the host", "duration": {"start": "2026-11-27T18:00:00.5Z"}}},
        {"task": {"name": "kubewin.nodes.node : Files", "duration": {"start": "2026-11-27T18:00:02.000001Z"}}},
        {"task": {"name": "Gather", "duration": {"start": "2026-11-27T18:00:03Z"}}},
    ]}]}
    starts = remote_ops.task_starts(doc)
    t0 = remote_ops.iso_to_epoch("2026-11-27T18:00:00Z")
    assert starts[0][1:] == ("preflight", "Read the host") and starts[2][1:] == ("-", "Gather")
    events = [(t0 + 0.1, "early"), (t0 + 1, "win_powershell:node_facts"), (t0 + 2.5, "win_powershell:files_state"),
              (t0 + 2.6, "win_file"), (t0 + 9, "win_service")]
    assert list(remote_ops.attribute(events, starts).items()) == [
        (("?", "before the first task"), ["early"]),
        (("preflight", "Read the host"), ["win_powershell:node_facts"]),
        (("node", "Files"), ["win_powershell:files_state", "win_file"]),
        (("-", "Gather"), ["win_service"])]


def _results(fresh_ops, cp_by_n):
    def run(ops, cp):
        return {"wall": 10.0, "ops": {"win-1": ops}, "worst": "win-1", "worst_by_task": [["node", "t", ["m"] * ops]],
                "by_label": {"m": ops}, "cp": cp, "cp_by_module": {"a.b.c": cp}, "cp_by_task": []}
    return {n: {"fresh": run(fresh_ops, cp), "noop": run(1, 1), "reset": run(1, 1)} for n, cp in cp_by_n.items()}


def test_counts_at_the_ratchet_pass_and_one_above_fails(capsys):
    base, per_node = remote_ops.RATCHET["cp"]["fresh"]
    ok = _results(remote_ops.RATCHET["ops"]["fresh"], {1: base, 10: remote_ops.cp_ratchet("fresh", 10)})
    assert remote_ops.report(ok, 5) == []
    over = _results(remote_ops.RATCHET["ops"]["fresh"] + 1, {1: base, 10: remote_ops.cp_ratchet("fresh", 10) + 1})
    found = remote_ops.report(over, 5)
    assert len(found) == 3, found  # fresh ops at 1 and 10 nodes, control-plane calls at 10 nodes
    assert "10 nodes fresh scale-up: %d control-plane module calls" % (remote_ops.cp_ratchet("fresh", 10) + 1) \
        in "\n".join(found)
    out = capsys.readouterr().out
    assert "OVER RATCHET" in out and "<= %d" % remote_ops.TARGET["ops"]["fresh"] in out


def test_no_ratchet_is_below_the_issues_target():
    for kind in ("ops", "cp"):
        for run, target in remote_ops.TARGET[kind].items():
            value = remote_ops.RATCHET[kind][run]
            value = value if kind == "ops" else remote_ops.cp_ratchet(run, 1)
            assert target is None or value >= target, (kind, run)


def test_node_counts_are_checked(capsys):
    with pytest.raises(SystemExit):
        remote_ops.main(["--nodes", "0,1"])
