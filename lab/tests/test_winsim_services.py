"""The simulated Service Control Manager, NSSM and the service cmdlets as Windows has them (issue 20, findings
N5 and N6 of shared/audits/powershell-2.md): Set-Service / New-Service parameter validation from PowerShell's
Service.cs, and NSSM's restart and throttle behaviour from its source (service.cpp), seen by the collection's own
service_apply and service_watch scripts run through the lab's interpreter. No control plane needed."""

import os
import subprocess

import pytest
from winsim import core  # noqa: E402
from winsim.ps.winhost import execute  # noqa: E402
from winsim.ps.winhost import run_kubewin_script as run_ps  # noqa: E402

# isort: split
# winsim.core has put the stand-in ansible.windows collection on sys.path.
from ansible_collections.ansible.windows.plugins.module_utils import winsim_scm  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "plugins", "plugin_utils", "scripts")
PROXY = "C:\\k\\kube-proxy.exe --windows-service --kubeconfig=C:\\etc\\kube-proxy\\kubeconfig --network-name=cbr0"


def _put(host, win_path, data=b"x"):
    local = host.local_path(win_path)
    os.makedirs(os.path.dirname(local), exist_ok=True)
    with open(local, "wb") as f:
        f.write(data)


def _script_at(rev, name):
    """A script as it was at git revision ``rev`` (to show the lab sees a defect of older text)."""
    return subprocess.run(["git", "show", "%s:plugins/plugin_utils/scripts/%s.ps1" % (rev, name)], cwd=ROOT,
                          check=True, capture_output=True, text=True).stdout


@pytest.fixture
def host(tmp_path):
    h = core.create_host(str(tmp_path), "w")
    core.write_binary(h.local_path("C:\\k\\kube-proxy.exe"), "kube-proxy", "v1.33.2")
    _put(h, "C:\\etc\\kube-proxy\\kubeconfig")
    return h


# --- N5: Set-Service / New-Service parameter validation ------------------------------------------------
def _ps(host, text, sid="t"):
    with host.open():
        return execute(host, text, sid, {}, error_action="Stop")


@pytest.mark.parametrize("call, message", [
    # Service.cs SetServiceCommand.Description / DisplayName: [ValidateNotNullOrEmpty]
    ("Set-Service -Name svc -Description ''", "Cannot validate argument on parameter 'Description'. The argument is "
                                             "null or empty."),
    ("Set-Service -Name svc -DisplayName ''", "Cannot validate argument on parameter 'DisplayName'."),
    # Mandatory string parameters refuse '' (no [AllowEmptyString])
    ("Set-Service -Name '' -Description x", "Cannot bind argument to parameter 'Name' because it is an empty string."),
    # NewServiceCommand: BinaryPathName Mandatory, Description and DisplayName [ValidateNotNullOrEmpty]
    ("New-Service -Name other -BinaryPathName ''", "Cannot bind argument to parameter 'BinaryPathName' because it is "
                                                   "an empty string."),
    ("New-Service -Name other -BinaryPathName 'C:\\k\\x.exe' -Description ''", "parameter 'Description'"),
    ("New-Service -Name other -BinaryPathName 'C:\\k\\x.exe' -DisplayName ''", "parameter 'DisplayName'"),
])
def test_service_cmdlets_refuse_what_their_parameter_validation_refuses(host, call, message):
    with host.open():
        winsim_scm.create(host.state, "svc", "C:\\k\\kube-proxy.exe", description="before")
    answer = _ps(host, call)
    assert answer["failed"] and message in answer["error"][0]["exception"]["message"], answer["error"]
    assert answer["error"][0]["exception"]["type"] == "System.Management.Automation.ParameterBindingValidationException"
    with host.open(save=False):
        assert winsim_scm.find(host.state, "svc")["description"] == "before"  # nothing was done
        assert winsim_scm.find(host.state, "other") is None


def test_an_empty_description_failed_service_apply_after_new_service_created_the_service(host):
    """N5 as the lab now sees it: service_apply before the fix (git 047494d) created the service, then
    Set-Service -Description '' threw, leaving no recovery actions; today's script sets no empty description."""
    params = {"Name": "kube-proxy", "Action": "create", "CommandLine": PROXY, "DisplayName": "kube-proxy",
              "Description": "", "FailureActions": "restart/10000/restart/10000/restart/10000", "Run": "none"}
    with host.open():
        old = execute(host, _script_at("047494d", "service_apply"), "service_apply", params, error_action="Stop")
    assert old["failed"] and "parameter 'Description'" in old["error"][0]["exception"]["message"]
    with host.open():
        svc = winsim_scm.find(host.state, "kube-proxy")
        assert svc is not None and svc["failure_actions"] is None  # created, half configured
        winsim_scm.delete(host.state, "kube-proxy")
        new = run_ps(host, "service_apply", params, False)
        svc = winsim_scm.find(host.state, "kube-proxy")
    assert not new["failed"], new["error"]
    assert svc["failure_actions"] and svc["failure_actions_on_non_crash"] == 1
