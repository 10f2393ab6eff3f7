"""The facts read's firewall rules in win_firewall_rule's option terms (plugin_utils/_host/firewall.py): equal to the
options a role passes only when win_firewall_rule would change nothing (issue 22)."""

from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import facts as nf
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import firewall as fwf

WANTED = {"description": "d", "direction": "in", "action": "allow", "protocol": "tcp", "localport": "10250",
          "remoteip": "10.0.0.0/24,192.0.2.10", "profiles": ["domain", "private", "public"], "enabled": True}


def raw(**over):
    rule = {"name": "kubewin-kubelet-10250-tcp", "description": "d", "direction": 1, "action": 1, "protocol": 6,
            "local_ports": "10250", "remote_addresses": "10.0.0.0/255.255.255.0,192.0.2.10/255.255.255.255",
            "profiles": 0x7FFFFFFF, "enabled": True}
    rule.update(over)
    return rule


def test_what_windows_reads_back_for_win_firewall_rules_options_equals_them():
    # INetFwRule gives a subnet back as address/mask and a host with its /255.255.255.255 mask
    assert fwf.rule_facts([raw()]) == {"kubewin-kubelet-10250-tcp": WANTED}
    assert fwf.rule_facts([raw(remote_addresses="10.0.0.0/24,192.0.2.10")])["kubewin-kubelet-10250-tcp"] == WANTED
    assert fwf.rule_facts([raw(remote_addresses="*")])["kubewin-kubelet-10250-tcp"]["remoteip"] == "any"


def test_anything_win_firewall_rule_would_change_reads_as_different():
    for over in ({"description": "other"}, {"direction": 2}, {"action": 0}, {"protocol": 17},
                 {"local_ports": "10250,10255"}, {"remote_addresses": "10.0.0.0/255.255.0.0,192.0.2.10"},
                 {"remote_addresses": "LocalSubnet"}, {"remote_addresses": "10.0.0.1-10.0.0.9"},
                 {"profiles": 7},  # ConvertTo-Profile never makes 7: the module sets 0x7FFFFFFF
                 {"profiles": 3}, {"enabled": False}):
        assert fwf.rule_facts([raw(**over)])["kubewin-kubelet-10250-tcp"] != WANTED, over


def test_names_match_case_insensitively_and_a_shared_name_is_ambiguous():
    got = fwf.rule_facts([raw(name="KUBEWIN-Kubelet-10250-tcp")])
    assert got == {"kubewin-kubelet-10250-tcp": WANTED}
    assert fwf.rule_facts([raw(), raw(name="kubewin-KUBELET-10250-tcp")]) == {"kubewin-kubelet-10250-tcp": None}


def test_the_facts_read_asks_for_the_collections_rules_and_reports_them():
    assert nf.script_parameters()["FirewallRulePattern"] == "kubewin-*"
    assert nf.node_facts({"firewall_rules": [raw()]})["firewall_rules"] == {"kubewin-kubelet-10250-tcp": WANTED}
    assert nf.node_facts({})["firewall_rules"] == {}


def test_each_firewall_task_compares_the_facts_with_the_options_it_passes():
    """The roles skip win_firewall_rule when the facts equal _kubewin_rule: it must repeat the task's options."""
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parents[5]
    tasks = []

    def walk(items):
        for t in items or []:
            walk(t.get("block"))
            if t.get("community.windows.win_firewall_rule", {}).get("state") == "present":
                tasks.append(t)

    for role in ("node", "network"):
        walk(yaml.safe_load((root / "roles" / role / "tasks" / "main.yml").read_text()))
    assert len(tasks) == 2
    for task in tasks:
        args = {k: v for k, v in task["community.windows.win_firewall_rule"].items() if k not in ("name", "state")}
        wanted = {k: str(v).replace(" | string", "") if k == "localport" else v
                  for k, v in task["vars"]["_kubewin_rule"].items()}
        assert {k: str(v) if k == "localport" else v for k, v in args.items()} == wanted, task["name"]
        assert "_kubewin_facts_current" in task["when"] and "!= _kubewin_rule" in task["when"]


def test_rules_that_could_not_be_read_are_unknown_and_no_role_skips_its_firewall_task():
    """F2 (review-s4-windows): node_facts reports firewall_error when the firewall API fails (MpsSvc stopped); the
    facts then carry no firewall_rules, and the scale-up's firewall tasks (node, network: present) run
    win_firewall_rule, as before the facts read the rules. Before, the error was not part of the answer (the script
    failed) and an answer without rules read as 'no rule exists'. Reset, whose win_firewall_rule would fail through
    the same API, skips its removals and says so (tests/unit/test_role_reset_firewall.py), never silently."""
    from pathlib import Path

    import jinja2
    import yaml

    answer = {"firewall_rules": [], "firewall_error": "Exception getting \"Rules\": \"... 0x800706D9)\""}
    facts = nf.node_facts(answer)
    assert "firewall_rules" not in facts
    assert facts["firewall"]["state"] == "unknown" and "0x800706D9" in facts["firewall"]["reason"]
    assert "Get-Service MpsSvc" in facts["firewall"]["reason"]
    assert nf.node_facts({"firewall_rules": [raw()]})["firewall"] == {"state": "read"}

    root = Path(__file__).resolve().parents[5]
    env = jinja2.Environment()
    ran = []

    def walk(items, role):
        for t in items or []:
            walk(t.get("block"), role)
            if "community.windows.win_firewall_rule" in t:
                whens = t.get("when") or []
                whens = whens if isinstance(whens, list) else [whens]
                rule = t.get("vars", {}).get("_kubewin_rule", {})
                for item in t.get("loop") or [t["community.windows.win_firewall_rule"]["name"]]:
                    variables = {"kubewin_host": facts, "item": item, "_kubewin_rule": rule,
                                 "_kubewin_flannel": {"firewall_port": 4789, "port": 4789}}
                    ran.append((role, all(env.compile_expression(w)(**variables) for w in whens)))

    for role in ("node", "network"):
        walk(yaml.safe_load((root / "roles" / role / "tasks" / "main.yml").read_text()), role)
    assert {role for role, dummy in ran} == {"node", "network"} and all(r for dummy, r in ran), ran


def test_remote_addresses_compare_token_by_token_in_the_form_windows_reads_back():
    """L2 (review-s4-windows): Windows reads a subnet back as address/mask. A list mixing a subnet and a keyword read as
    its whole raw text, so it never equalled the option and the rule was re-applied on every run; a token with host
    bits was kept raw too. Each token is now mapped on its own (the address as read)."""
    def remoteip(value):
        return fwf.rule_facts([raw(remote_addresses=value)])["kubewin-kubelet-10250-tcp"]["remoteip"]

    assert remoteip("10.0.0.0/255.255.255.0,LocalSubnet") == "10.0.0.0/24,LocalSubnet"
    assert remoteip("10.1.2.3/255.0.0.0") == "10.1.2.3/8"  # a host that keeps host bits: skipped as the module would
    assert remoteip("10.0.0.0/255.0.0.0") == "10.0.0.0/8" != "10.1.2.3/8"  # one that clears them: the module runs
    assert remoteip("10.0.0.1-10.0.0.9,192.0.2.10/255.255.255.255") == "10.0.0.1-10.0.0.9,192.0.2.10"
    assert remoteip("10.0.0.0/255.0.255.0") == "10.0.0.0/255.0.255.0"  # not a mask: as read, never equal


def test_remote_addresses_compare_as_a_set_like_win_firewall_rule():
    """F1 (review-s6): the module compares remoteip as a set, so the same addresses in another order or repeated must
    read back equal to the desired value, else the role runs the module on every run for nothing."""
    def remoteip(value):
        return fwf.rule_facts([raw(remote_addresses=value)])["kubewin-kubelet-10250-tcp"]["remoteip"]

    windows_order = remoteip("192.0.2.10/255.255.255.255,10.0.0.0/255.0.0.0,LocalSubnet")
    assert windows_order == fwf.remote_addresses("LocalSubnet,10.0.0.0/8,192.0.2.10/32,10.0.0.0/8")
    assert windows_order == "10.0.0.0/8,192.0.2.10,LocalSubnet"
