"""F2 (review-s4-windows): with the Windows Defender Firewall service (MpsSvc) stopped, the firewall API fails
(winsim_firewall.stop_service: at New-Object or at the Rules read, where it fails first on a host being unknown). The
facts read survives it: node_facts reports firewall_error instead of failing, the controller's facts say the firewall
is unknown and carry no firewall_rules (so every role runs win_firewall_rule, as before the facts read the rules), and
the stand-in win_firewall_rule fails as the real one does through the same API. No control plane needed."""

import subprocess
from pathlib import Path

import pytest
from winsim import core  # noqa: E402
from winsim.ps.winhost import execute  # noqa: E402

# isort: split
# winsim.core has put the stand-in ansible.windows collection on sys.path.
from ansible_collections.ansible.windows.plugins.module_utils import winsim_firewall as fw  # noqa: E402

from ansible_collections.kubewin.nodes.plugins.plugin_utils import _win_scripts as win_scripts  # noqa: E402
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import facts as nf  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BEFORE_F2 = "4d4dab4"  # node_facts as it was: the rules read unguarded


@pytest.fixture
def host(tmp_path):
    h = core.create_host(str(tmp_path), "w")
    with h.open():
        fw.rules(h.state).append(dict(fw.new_rule("kubewin-kubelet-10250-tcp"), Enabled=True))
    return h


def _node_facts(host, text=None):
    params = nf.script_parameters()
    if text is None:
        text = win_scripts.load("node_facts")
    else:  # an older script: only the parameters it declares (later ones would be refused by name)
        params = {k: v for k, v in params.items() if "$" + k in text.split("$ErrorActionPreference", 1)[0]}
    with host.open():
        return execute(host, text, "node_facts", params, error_action="Stop", depth=8)


@pytest.mark.parametrize("fails_at", fw.FAIL_POINTS)
def test_the_facts_read_survives_a_stopped_firewall_service_and_says_the_rules_are_unknown(host, fails_at):
    with host.open():
        fw.stop_service(host.state, fails_at)
    old = subprocess.run(["git", "show", "%s:plugins/plugin_utils/scripts/node_facts.ps1" % BEFORE_F2], cwd=ROOT,
                         check=True, capture_output=True, text=True).stdout
    before = _node_facts(host, old)
    assert before["failed"] and "0x800706D9" in before["error"][0]["exception"]["message"]  # preflight and reset stop
    answer = _node_facts(host)
    assert not answer["failed"], answer["error"]
    assert answer["result"]["firewall_rules"] == [] and "0x800706D9" in answer["result"]["firewall_error"]
    facts = nf.node_facts(answer["result"])
    assert "firewall_rules" not in facts  # unknown: no role skips its win_firewall_rule task
    assert facts["firewall"]["state"] == "unknown" and "Get-Service MpsSvc" in facts["firewall"]["reason"]
    assert facts["services"] and facts["paths"]  # the rest of the read is there


def test_the_interpreter_and_the_firewall_model_agree_on_the_failure():
    """The interpreter's COM stand-in keeps its own copy (winsim_firewall is not shipped with win_powershell)."""
    from winsim.ps import winfirewall

    assert winfirewall.FAIL_POINTS == fw.FAIL_POINTS and winfirewall.RPC_UNAVAILABLE == fw.RPC_UNAVAILABLE
    for fails_at in fw.FAIL_POINTS:
        state = {}
        fw.stop_service(state, fails_at)
        for point in fw.FAIL_POINTS:
            try:
                fw.require_service(state, point)
                refused = False
            except Exception:
                refused = True
            assert winfirewall.service_refuses(state, point) is refused


def test_a_running_service_reads_the_rules_and_the_module_stand_in_fails_while_it_is_stopped(host):
    facts = nf.node_facts(_node_facts(host)["result"])
    assert facts["firewall"] == {"state": "read"} and list(facts["firewall_rules"]) == ["kubewin-kubelet-10250-tcp"]
    with host.open():
        fw.stop_service(host.state)
        with pytest.raises(Exception, match="0x800706D9"):
            fw.find(host.state, "kubewin-kubelet-10250-tcp")  # win_firewall_rule's $fw.Rules | Where-Object
        fw.start_service(host.state)
        assert fw.find(host.state, "kubewin-kubelet-10250-tcp")
