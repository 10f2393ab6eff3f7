"""Helpers for tests that drive real ansible-playbook runs against simulated hosts."""

import json
import os
import subprocess
import sys
import textwrap

from winsim import core, make_inventory


class Lab(object):
    def __init__(self, root, nodes=1, profile="ws2022-containerd"):
        self.root = make_inventory.build(str(root), nodes=nodes, profile=profile, python=sys.executable)
        self.cfg = os.path.join(self.root, "ansible.cfg")

    def play(self, tasks, hosts="kube_windows_nodes", check=False, extra=(), plays=None):
        """Run a playbook of ``tasks`` (YAML text); returns (rc, output, results per task name)."""
        text = plays or "- hosts: %s\n  gather_facts: false\n  tasks:\n%s" % (hosts, textwrap.indent(
            textwrap.dedent(tasks), "    "))
        path = os.path.join(self.root, "play.yml")
        with open(path, "w") as f:
            f.write(text)
        env = dict(os.environ, ANSIBLE_CONFIG=self.cfg, ANSIBLE_STDOUT_CALLBACK="ansible.builtin.json",
                   ANSIBLE_NOCOLOR="1", ANSIBLE_DEPRECATION_WARNINGS="0")
        cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), path] + list(extra)
        if check:
            cmd.append("--check")
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        try:
            doc = json.loads(p.stdout[p.stdout.index("{"):])
        except ValueError:
            raise AssertionError("no JSON from ansible-playbook (rc %d):\n%s\n%s"
                                 % (p.returncode, p.stdout, p.stderr)) from None
        results = {}
        for play in doc["plays"]:
            for t in play["tasks"]:
                results[t["task"]["name"]] = t["hosts"]
        return p.returncode, doc, results

    def dump(self, host="win-1"):
        return core.dump(self.root, host)

    def ops(self, host="win-1"):
        return core.ops(self.root, host)

    def ops_detailed(self, host="win-1"):
        return core.ops_detailed(self.root, host)

    def reset_ops(self, host="win-1"):
        core.reset_ops(self.root, host)
