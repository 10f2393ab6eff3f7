"""Issue 10 mutation check: bugs planted into a copy of the collection's PowerShell are caught when
the lab runs the real text (lab/winsim/ps). No control plane needed: each case runs the
script through the interpreter over a simulated host, as the win_powershell stand-in does."""

import json
import os

import pytest
from winsim import core  # noqa: E402
from winsim.ps import winhost  # noqa: E402
from winsim.testing import Lab  # noqa: E402

from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import facts as nf  # noqa: E402
from ansible_collections.kubewin.nodes.plugins.plugin_utils._win_scripts import load  # noqa: E402

LINE = "C:\\k\\kube-proxy.exe --windows-service --kubeconfig=C:\\etc\\kube-proxy\\kubeconfig --network-name=cbr0"


@pytest.fixture
def host(tmp_path):
    h = core.create_host(str(tmp_path), "w")
    core.write_binary(h.local_path("C:\\k\\kube-proxy.exe"), "kube-proxy", "v1.33.2")
    os.makedirs(h.local_path("C:\\etc\\kube-proxy"), exist_ok=True)
    with open(h.local_path("C:\\etc\\kube-proxy\\kubeconfig"), "w") as f:
        f.write("x")
    return h


def _run(host, sid, params, text=None, depth=8):
    with host.open():
        return winhost.execute(host, text or load(sid), sid, params, error_action="Stop", depth=depth)


def _mutate(sid, old, new):
    text = load(sid)
    assert old in text, "the mutation no longer applies to %s: %r" % (sid, old)
    return text.replace(old, new)


def _node_facts_params():
    return nf.script_parameters()


def test_unmutated_scripts_pass(host):
    answer = _run(host, "node_facts", _node_facts_params())
    assert not answer["failed"], answer["error"]
    assert isinstance(answer["result"]["adapters"], list) and answer["result"]["services"]["containerd"]["exists"]
    nf.node_facts(answer["result"])  # the controller side reads it


def test_typed_parameter_overwritten_fails(host):
    # F1/F2: a result hashtable named like the typed parameter [string[]]$Services
    text = _mutate("node_facts", "$serviceFacts", "$services")
    answer = _run(host, "node_facts", _node_facts_params(), text)
    assert answer["failed"] or answer["result"]["services"] != _run(host, "node_facts", _node_facts_params())[
        "result"]["services"]


def test_loop_variable_shadowing_a_parameter_fails(host):
    # F3: foreach ($name in $Parameters.Keys) overwrites $Name, the service name
    text = _mutate("service_apply", "foreach ($valueName in $Parameters.Keys)", "foreach ($name in $Parameters.Keys)")
    text = text.replace("$ParameterTypes[$valueName]", "$ParameterTypes[$name]").replace(
        "$Parameters[$valueName]", "$Parameters[$name]").replace("-Name $valueName", "-Name $name").replace(
        "parameter $valueName", "parameter $name")
    params = {"Name": "kube-proxy", "Action": "create", "CommandLine": LINE, "FailureActions": "restart/10000",
              "Parameters": {"AppStderr": "C:\\k\\x.log"}, "ParameterTypes": {"AppStderr": "String"}}
    answer = _run(host, "service_apply", params, text)
    assert answer["failed"] and "1060" in answer["error"][0]["exception"]["message"]
    good = _run(host, "service_apply", dict(params, Action="update"))
    assert not good["failed"], good["error"]


def test_misspelled_parameter_name_fails(host):
    answer = _run(host, "service_state", {"Nmae": "containerd"})
    assert answer["failed"]
    message = answer["error"][0]["exception"]["message"]
    assert "A parameter cannot be found that matches parameter name 'Nmae'" in message


def test_ps7_only_operator_fails(host):
    text = _mutate("service_state", "if (-not $result) { $result = @{ exists = $false } }",
                   "if (-not $result) { $result = @{ exists = $false ?? $true } }")
    answer = _run(host, "service_state", {"Name": "containerd"}, text)
    assert answer["failed"] and "ParserError" in answer["error"][0]["exception"]["message"]


def test_missing_array_subexpression_changes_the_answer(host):
    # one up adapter: without @() the Python side gets an object where it indexes a list
    text = _mutate("node_facts", "adapters = @($adapters)", "adapters = $adapters")
    answer = _run(host, "node_facts", _node_facts_params(), text)
    assert isinstance(answer["result"]["adapters"], dict)
    with pytest.raises(AttributeError):  # iterating the dict gives its keys, not adapters
        nf.node_facts(answer["result"])


def test_wrong_hns_field_name_changes_the_answer(host):
    calls = [{"method": "GET", "path": "/networks/", "request": ""}, {"method": "GET", "path": "/endpoints/",
                                                                      "request": ""}]
    assert len(_run(host, "hns_calls", {"Calls": calls})["result"]["responses"]) == 2
    text = _mutate("hns_calls", ").Success)", ").Sucess)")
    assert len(_run(host, "hns_calls", {"Calls": calls}, text)["result"]["responses"]) == 1


def test_result_depth_too_small_changes_the_answer(host):
    # win_powershell's depth (Convert-OutputObject): the collection asks for 8; below the result's own depth
    # the innermost values become their [string] form
    answer = _run(host, "node_facts", _node_facts_params(), depth=2)
    assert answer["result"]["adapters"][0]["ipv4"] == "10.0.0.10"  # a list flattened to text
    answer = _run(host, "node_facts", _node_facts_params(), depth=1)
    assert answer["result"]["services"]["containerd"] == "System.Collections.Hashtable"


def test_win_powershell_runs_the_real_script_text(tmp_path):
    """Through ansible-playbook: the win_powershell stand-in interprets the script as written, in check
    mode too (service_state declares SupportsShouldProcess), and a misspelt parameter is PowerShell's
    binding error, not a Python KeyError."""
    lab = Lab(tmp_path / "winsim", nodes=1)
    script = json.dumps(load("service_state"))
    tasks = """
        - name: state
          ansible.windows.win_powershell:
            script: %s
            parameters: {Name: containerd}
            error_action: stop
            depth: 8
        - name: typo
          ansible.windows.win_powershell:
            script: %s
            parameters: {Nmae: containerd}
            error_action: stop
          ignore_errors: true
    """ % (script, script)
    for check in (False, True):
        rc, _, res = lab.play(tasks, check=check)
        state, typo = res["state"]["win-1"], res["typo"]["win-1"]
        assert not state.get("failed") and not state["changed"], state
        assert state["result"]["exists"] and state["result"]["status"] == "Running"
        assert state["result"]["image_path"] == '"C:\\Program Files\\containerd\\containerd.exe" --run-service'
        assert typo["failed"] and "matches parameter name 'Nmae'" in typo["error"][0]["exception"]["message"]


def test_files_state_and_node_sync_run_as_written_and_a_wrong_catch_type_is_caught(host):
    # files_state tells "absent" (ItemNotFoundException) from "could not read": catching another type
    # makes a missing path 'unreadable', which the controller refuses
    sd = "O:BAD:P(A;OICI;FA;;;BA)(A;OICI;FA;;;SY)"
    params = {"Dirs": [{"path": "C:\\etc\\kubernetes\\pki", "sddl": sd}],
              "Files": [{"path": "C:\\etc\\kubernetes\\pki\\ca.crt", "content": "aGk=", "sddl": sd}]}
    assert not _run(host, "node_sync", params)["failed"]
    state = {"Dirs": ["C:\\etc\\kubernetes\\pki", "C:\\nope"], "Acls": ["C:\\etc\\kubernetes\\pki\\ca.crt"]}
    good = _run(host, "files_state", state)
    assert not good["failed"], good["error"]
    assert good["result"]["dirs"] == {"C:\\etc\\kubernetes\\pki": sd, "C:\\nope": None}
    assert good["result"]["acls"] == {"C:\\etc\\kubernetes\\pki\\ca.crt": sd}
    text = _mutate("files_state", "catch [System.Management.Automation.ItemNotFoundException]",
                   "catch [System.IO.FileNotFoundException]")
    assert _run(host, "files_state", state, text)["result"]["dirs"]["C:\\nope"] == "unreadable"
