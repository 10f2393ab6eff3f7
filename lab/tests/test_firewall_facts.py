"""The node_facts script reads the collection's inbound firewall rules through HNetCfg.FwPolicy2 (the lab's
interpreter models its Rules over the simulated firewall, read only), and the controller turns them into
win_firewall_rule's option terms: what win_firewall_rule itself made reads back equal to the options it was given,
so the roles skip it for a rule already as wanted (issue 22). No control plane needed."""

import pytest
from winsim import core  # noqa: E402
from winsim.ps.winhost import execute  # noqa: E402
from winsim.ps.winhost import run_kubewin_script as run_ps  # noqa: E402

# isort: split
# winsim.core has put the stand-in ansible.windows collection on sys.path.
from ansible_collections.ansible.windows.plugins.module_utils import winsim_firewall as fw  # noqa: E402

from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import facts as nf  # noqa: E402

WANTED = {"description": "kubewin.nodes - the API server reaches the kubelet (kubectl logs/exec)", "direction": "in",
          "action": "allow", "protocol": "tcp", "localport": "10250", "remoteip": "10.0.0.0/24,192.0.2.10",
          "profiles": ["domain", "private", "public"], "enabled": True}


def _as_win_firewall_rule_makes_it(name, options):
    """A rule as the lab's win_firewall_rule stand-in builds it from these options (its _wanted)."""
    rule = fw.new_rule(name)
    rule.update(Description=options["description"], Direction=fw.DIR_IN, Action=fw.ACTION_ALLOW,
                Protocol=fw.protocol_number(options["protocol"]), Enabled=options["enabled"],
                Profiles=fw.profiles_mask(options["profiles"]))
    fw.set_ports(rule, "LocalPorts", options["localport"])
    fw.set_addresses(rule, "RemoteAddresses", options["remoteip"])
    return rule


@pytest.fixture
def host(tmp_path):
    return core.create_host(str(tmp_path), "w")


def _facts(host):
    with host.open():
        answer = run_ps(host, "node_facts", nf.script_parameters(), False)
    assert not answer["failed"], answer["error"]
    return nf.node_facts(answer["result"])["firewall_rules"]


def test_a_rule_win_firewall_rule_made_reads_back_as_its_options(host):
    with host.open():
        fw.rules(host.state).extend([_as_win_firewall_rule_makes_it("kubewin-kubelet-10250-tcp", WANTED),
                                     fw.new_rule("Core Networking - DNS (UDP-Out)")])
    assert _facts(host) == {"kubewin-kubelet-10250-tcp": WANTED}  # only the collection's rules are read


def test_a_rule_that_differs_or_is_doubled_does_not_read_as_wanted(host):
    with host.open():
        fw.rules(host.state).append(_as_win_firewall_rule_makes_it("kubewin-kubelet-10250-tcp",
                                                                   dict(WANTED, remoteip="10.0.0.0/24")))
    assert _facts(host)["kubewin-kubelet-10250-tcp"] != WANTED
    with host.open():
        fw.rules(host.state).append(_as_win_firewall_rule_makes_it("KUBEWIN-kubelet-10250-tcp", WANTED))
    assert _facts(host)["kubewin-kubelet-10250-tcp"] is None  # win_firewall_rule would change both


def test_no_rule_and_no_pattern(host):
    assert _facts(host) == {}
    with host.open():
        answer = run_ps(host, "node_facts", {}, False)
    assert answer["result"]["firewall_rules"] == []


def test_the_com_object_is_read_only_and_only_fwpolicy2(host):
    with host.open():
        fw.rules(host.state).append(fw.new_rule("kubewin-x"))
        text = "$p = New-Object -ComObject HNetCfg.FwPolicy2\nforeach ($r in $p.Rules) { $r.Enabled = $true }\n"
        with pytest.raises(Exception, match="not supported by the lab interpreter"):
            execute(host, text, "t", {}, error_action="Stop")
        with pytest.raises(Exception, match="not supported by the lab interpreter"):
            execute(host, "$s = New-Object -ComObject Shell.Application\n", "t", {}, error_action="Stop")
