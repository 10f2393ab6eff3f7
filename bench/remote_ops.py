# -*- coding: utf-8 -*-
"""Benchmark: remote operations (module executions on a Windows host) per node for a fresh scale-up,
a no-op re-run and a reset, counted by the lab's simulated hosts. Run with `make bench` (the lab
must be up). These are counts, not timings, so they are the same on any machine.

Comparison: the seed playbooks of kubernetes-for-windows define about 120 Windows tasks across their
roles (shared/reference/facts.md); each is at least one remote operation on a fresh run, and most
run again on a re-run.
"""

import collections
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lab"))

import scenario  # noqa: E402

SEED_TASKS = 120
# as test_scale_up.py: the External network and its wait; the two firewall rules add 1 each to both
BUDGET = {"fresh scale-up": 29, "no-op re-run": 11}


def main():
    sc = scenario.Scenario(tempfile.mkdtemp(prefix="kubewin-bench-"), nodes=2,
                           kubewin_node_name="bench-{{ inventory_hostname }}")
    rows = []
    for label, playbook, args in (("fresh scale-up", "scale_up.yml", ()), ("no-op re-run", "scale_up.yml", ()),
                                  ("reset", "reset.yml", ("-e", "skip_confirmation=true"))):
        for h in sc.hosts:
            sc.reset_ops(h)
        rc, doc, text = sc.run(playbook, *args)
        if rc != 0:
            sys.exit("%s failed:\n%s" % (label, "\n".join(scenario.failures(doc)) or text[-3000:]))
        for h in sc.hosts:
            ops = sc.ops(h)
            rows.append((label, h, len(ops), collections.Counter(ops)))
    print("Remote operations per Windows node (lab, flannel vxlan, services mode, containerd)")
    print("%-16s %-6s %5s  %-8s %s" % ("run", "node", "ops", "budget", "by module"))
    for label, host, count, by_module in rows:
        budget = BUDGET.get(label)
        print("%-16s %-6s %5d  %-8s %s" % (label, host, count, "<= %d" % budget if budget else "-",
                                           ", ".join("%s %d" % kv for kv in sorted(by_module.items()))))
    fresh = max(c for label, h, c, m in rows if label == "fresh scale-up")
    print("\nSeed playbooks (kubernetes-for-windows): about %d Windows task definitions; "
          "fresh scale-up here: %d operations per node (%.0fx fewer)." % (SEED_TASKS, fresh, SEED_TASKS / fresh))
    over = [(label, h, c) for label, h, c, m in rows if label in BUDGET and c > BUDGET[label]]
    if over:
        sys.exit("over budget: %s" % over)


if __name__ == "__main__":
    main()
