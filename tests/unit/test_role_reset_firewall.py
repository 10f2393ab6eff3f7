"""Reset on a host whose Windows Defender Firewall service (MpsSvc) is stopped (issue 22): the facts read then knows
no firewall rules (plugin_utils/_host/firewall.py: firewall.state unknown, no firewall_rules), and
community.windows.win_firewall_rule would fail through the same API, stopping the reset half-way. The removal runs
only for rules the facts read found; otherwise the next task names the rules left and the fix. The tasks' `when`,
evaluated by Ansible's own templating as the role writes it."""

from pathlib import Path

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

try:  # ansible-core 2.19 templates only text marked trusted, as a role's own YAML is
    from ansible.template import trust_as_template
except ImportError:  # 2.18 templates any text
    def trust_as_template(text):
        return text

ROOT = Path(__file__).resolve().parents[2]
RULES = ["kubewin-kubelet-10250-tcp", "kubewin-flannel-vxlan-4789-udp"]
UNKNOWN = {"firewall": {"state": "unknown", "reason": "0x800706D9 (no more endpoints)"}}


def task(name_start):
    tasks = yaml.safe_load((ROOT / "roles" / "reset" / "tasks" / "main.yml").read_text())
    found = [t for t in tasks if t["name"].startswith(name_start)]
    assert len(found) == 1, name_start
    return found[0]


def runs(t, host, item=None):
    templar = Templar(loader=DataLoader(), variables={"kubewin_host": host, "item": item, "inventory_hostname": "w1",
                                                      "_kubewin_flannel": {"port": 4789}})
    return templar.template(trust_as_template("{{ (%s) | bool }}" % t["when"]))


@pytest.mark.parametrize("host, removed", [
    (UNKNOWN, []),
    ({"firewall": {"state": "read"}, "firewall_rules": {RULES[0]: {}}}, [RULES[0]]),
    ({"firewall": {"state": "read"}, "firewall_rules": {}}, []),
])
def test_only_rules_the_facts_read_found_are_removed(host, removed):
    remove = task("Remove the inbound rules")
    assert [r for r in RULES if runs(remove, host, r)] == removed


def test_an_unreadable_firewall_is_reported_with_the_fix_not_failed():
    say = task("Say which firewall rules were left")
    assert runs(say, UNKNOWN)
    assert not runs(say, {"firewall": {"state": "read"}, "firewall_rules": {}})
    templar = Templar(loader=DataLoader(), variables={"kubewin_host": UNKNOWN, "inventory_hostname": "w1",
                                                      "_kubewin_flannel": {"port": 4789}})
    msg = templar.template(trust_as_template(say["ansible.builtin.debug"]["msg"]))
    assert "w1:" in msg and RULES[1] in msg and "Start-Service MpsSvc" in msg and "0x800706D9" in msg
