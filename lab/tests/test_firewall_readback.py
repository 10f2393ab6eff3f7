"""L2 (review-s4-windows): the simulated firewall keeps RemoteAddresses in the form Windows reads them back
(address/mask; the stricter choice where Microsoft Learn says nothing: host bits cleared, keywords in their documented
case), not as written, and the facts read compares that with the options the roles pass: a rule the stand-in
win_firewall_rule made from canonical subnets reads back equal (skipped on re-runs), one from an entry with host bits
does not (re-applied each run: the lab never skips what a host might re-write). No control plane needed."""

import pytest
from winsim import core  # noqa: E402
from winsim.ps.winhost import run_kubewin_script as run_ps  # noqa: E402

# isort: split
# winsim.core has put the stand-in ansible.windows collection on sys.path.
from ansible_collections.ansible.windows.plugins.module_utils import winsim_firewall as fw  # noqa: E402

from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import facts as nf  # noqa: E402


@pytest.mark.parametrize("written, read", [
    ("10.0.0.0/24", "10.0.0.0/255.255.255.0"),
    ("192.0.2.10", "192.0.2.10/255.255.255.255"),
    ("10.1.2.3/8", "10.0.0.0/255.0.0.0"),
    ("10.0.0.0/255.255.0.0", "10.0.0.0/255.255.0.0"),
    ("localsubnet,10.0.0.0/24", "LocalSubnet,10.0.0.0/255.255.255.0"),
    ("172.16.0.5-172.16.0.9", "172.16.0.5-172.16.0.9"),
    ("*", "*"),
])
def test_remote_addresses_read_back_in_windows_form(written, read):
    rule = dict(fw.new_rule("r"), Protocol=fw.PROTO_TCP)
    fw.set_addresses(rule, "RemoteAddresses", written)
    assert rule["RemoteAddresses"] == read


@pytest.mark.parametrize("remoteip, skipped", [
    ("10.0.0.0/24,192.0.2.10", True),
    ("10.0.0.0/24,LocalSubnet", True),  # read whole and raw before: re-applied every run
    ("10.1.2.3/8", False),  # host bits: a host may clear them, so the lab does and never skips it
])
def test_the_facts_skip_only_what_reads_back_as_the_option(tmp_path, remoteip, skipped):
    host = core.create_host(str(tmp_path), "w")
    with host.open():
        rule = dict(fw.new_rule("kubewin-kubelet-10250-tcp"), Enabled=True, Protocol=fw.PROTO_TCP)
        fw.set_ports(rule, "LocalPorts", "10250")
        fw.set_addresses(rule, "RemoteAddresses", remoteip)
        fw.rules(host.state).append(rule)
        answer = run_ps(host, "node_facts", nf.script_parameters(), False)["result"]
    got = nf.node_facts(answer)["firewall_rules"]["kubewin-kubelet-10250-tcp"]["remoteip"]
    assert (got == remoteip) is skipped, got
