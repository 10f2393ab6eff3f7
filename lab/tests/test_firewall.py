"""The simulated Windows Defender Firewall: the community.windows.win_firewall_rule stand-in (options from the real
module's documentation, check and diff mode) and what the host then lets in (winsim_firewall.inbound_allowed).
Driven by real ansible-playbook runs; no control plane needed."""

import pytest
from simhost import one
from winsim import core

# isort: split
from ansible_collections.ansible.windows.plugins.module_utils import winsim_firewall, winsim_host

KUBELET_RULE = """
    - name: kubelet
      community.windows.win_firewall_rule:
        name: kubewin-kubelet-10250-tcp
        direction: in
        action: allow
        protocol: tcp
        localport: 10250
        profiles: [domain, private, public]
        enabled: true
        state: present
"""


def _state(lab, host="win-1"):
    with core.Host(lab.root, host).open(save=False) as h:
        return h.state


def test_a_fresh_host_blocks_inbound_traffic(lab):
    st = _state(lab)
    assert st["firewall"] == {"default_inbound_action": "Block", "rules": []}
    assert not winsim_firewall.inbound_allowed(st, "tcp", 10250)
    assert not winsim_firewall.inbound_allowed(st, "udp", 4789)


def test_rule_opens_the_port_once_and_is_removed_again(lab):
    rc, _, res = lab.play(KUBELET_RULE)
    assert rc == 0 and one(res, "kubelet")["changed"]
    st = _state(lab)
    assert winsim_firewall.inbound_allowed(st, "tcp", 10250)
    assert not winsim_firewall.inbound_allowed(st, "udp", 10250)
    assert not winsim_firewall.inbound_allowed(st, "tcp", 10251)

    rc, _, res = lab.play(KUBELET_RULE)
    assert rc == 0 and not one(res, "kubelet")["changed"], "a second run changed the rule"
    assert len(_state(lab)["firewall"]["rules"]) == 1

    remove = "- name: remove\n  community.windows.win_firewall_rule: {name: KUBEWIN-kubelet-10250-tcp, state: absent}\n"
    rc, _, res = lab.play(remove)  # names compare case-insensitively, as PowerShell's -eq does
    assert rc == 0 and one(res, "remove")["changed"]
    assert _state(lab)["firewall"] == {"default_inbound_action": "Block", "rules": []}
    rc, _, res = lab.play(remove)
    assert rc == 0 and not one(res, "remove")["changed"]


def test_check_mode_changes_nothing_and_diff_shows_the_rule(lab):
    before = lab.dump()
    rc, _, res = lab.play(KUBELET_RULE, check=True, extra=["--diff"])
    r = one(res, "kubelet")
    assert rc == 0 and r["changed"]
    assert "+[kubewin-kubelet-10250-tcp]" in r["diff"]["prepared"] and "+LocalPorts='10250'" in r["diff"]["prepared"]
    assert lab.dump() == before


def test_a_changed_option_updates_the_rule_in_place(lab):
    lab.play(KUBELET_RULE)
    rc, _, res = lab.play(KUBELET_RULE.replace("localport: 10250", "localport: 10255"), extra=["--diff"])
    r = one(res, "kubelet")
    assert rc == 0 and r["changed"]
    assert "-LocalPorts='10250'\n+LocalPorts='10255'\n" in r["diff"]["prepared"]
    st = _state(lab)
    assert winsim_firewall.inbound_allowed(st, "tcp", 10255) and not winsim_firewall.inbound_allowed(st, "tcp", 10250)


@pytest.mark.parametrize("option, value, message", [
    ("protocol", "sctp", "Unknown protocol 'sctp'."),
    ("direction", "both", "value of direction must be one of: in, out"),
    ("profiles", "[home]", "Unknown profile 'home'."),
])
def test_values_the_real_module_refuses_fail(lab, option, value, message):
    line = [ln for ln in KUBELET_RULE.splitlines() if ln.strip().startswith(option + ":")][0]
    rc, _, res = lab.play(KUBELET_RULE.replace(line, "        %s: %s" % (option, value)))
    r = one(res, "kubelet")
    assert rc != 0 and r["failed"] and message in r["msg"], r
    assert _state(lab)["firewall"]["rules"] == []


def test_a_port_without_tcp_or_udp_is_refused_as_com_refuses_it(lab):
    rc, _, res = lab.play("- name: r\n  community.windows.win_firewall_rule: {name: x, localport: 80}\n")
    r = one(res, "r")
    assert rc != 0 and "needs protocol tcp or udp" in r["msg"]


def test_a_block_rule_wins_and_narrowed_rules_do_not_admit_everyone():
    allow = dict(winsim_firewall.new_rule("a"), Enabled=True, Protocol=17, LocalPorts="4780-4790")
    st = {"firewall": {"default_inbound_action": "Block", "rules": [allow]}}
    assert winsim_firewall.inbound_allowed(st, "udp", 4789)
    st["firewall"]["rules"].append(dict(winsim_firewall.new_rule("b"), Enabled=True, Action=0, Protocol=17,
                                        LocalPorts="4789"))
    assert not winsim_firewall.inbound_allowed(st, "udp", 4789)
    st["firewall"]["rules"] = [dict(allow, RemoteAddresses="10.0.0.5")]
    assert not winsim_firewall.inbound_allowed(st, "udp", 4789)
    st["firewall"]["rules"] = [dict(allow, Enabled=False)]
    assert not winsim_firewall.inbound_allowed(st, "udp", 4789)
    st["firewall"]["rules"] = [dict(allow, Profiles=1)]  # Domain only, the host's network is Public
    assert not winsim_firewall.inbound_allowed(st, "udp", 4789)
    assert winsim_firewall.inbound_allowed(st, "udp", 4789, profile="domain")


def test_remote_addresses_admit_only_their_sources_as_windows_firewall_matches_them():
    """INetFwRule::put_RemoteAddresses (Microsoft Learn): comma-delimited tokens, an address, a subnet by prefix length
    or mask, a range start-end, LocalSubnet; "*" only alone; others refused (security-2 N10)."""
    allow = dict(winsim_firewall.new_rule("a"), Enabled=True, Protocol=6, LocalPorts="10250")
    st = {"adapters": [{"name": "Ethernet", "ip": "10.0.0.10", "prefix": 24}],
          "firewall": {"default_inbound_action": "Block", "rules": []}}
    cases = {"192.168.5.7": ("192.168.5.7", "192.168.5.8"),
             "192.168.5.0/24": ("192.168.5.200", "192.168.6.1"),
             "192.168.5.0/255.255.255.0": ("192.168.5.1", "192.168.4.255"),
             "172.16.0.5-172.16.0.9": ("172.16.0.9", "172.16.0.10"),
             "LocalSubnet": ("10.0.0.99", "10.0.1.1"),
             "localsubnet4,192.168.5.7": ("192.168.5.7", "10.0.1.1")}
    for value, (inside, outside) in cases.items():
        rule = dict(allow)
        winsim_firewall.set_addresses(rule, "RemoteAddresses", value)
        st["firewall"]["rules"] = [rule]
        assert winsim_firewall.inbound_allowed(st, "tcp", 10250, remote=inside), value
        assert not winsim_firewall.inbound_allowed(st, "tcp", 10250, remote=outside), value
        # without a known source, a rule narrowed to remote addresses admits nobody (the stricter reading)
        assert not winsim_firewall.inbound_allowed(st, "tcp", 10250), value
    # a block rule narrowed to other sources does not block this one
    block = dict(winsim_firewall.new_rule("b"), Enabled=True, Action=0, Protocol=6, LocalPorts="10250",
                 RemoteAddresses="172.16.0.0/16")
    st["firewall"]["rules"] = [dict(allow), block]
    assert winsim_firewall.inbound_allowed(st, "tcp", 10250, remote="10.0.0.1")
    assert not winsim_firewall.inbound_allowed(st, "tcp", 10250, remote="172.16.3.3")
    for bad in ("10.0.0.300", "*,10.0.0.1", "10.0.0.9-10.0.0.1", "10.0.0.1 - 10.0.0.9", "", "DNS", "Intranet"):
        with pytest.raises(winsim_host.SimError):
            winsim_firewall.set_addresses(dict(allow), "RemoteAddresses", bad)
