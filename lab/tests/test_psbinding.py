"""Issue 20 item 2: the parameter binding of the cmdlets the collection's scripts call, as Windows PowerShell
5.1 binds them (lab/winsim/ps/builtins.py PARAMETER_METADATA, each entry with its help page
learn.microsoft.com/.../<cmdlet>?view=powershell-5.1, "Parameters"): Mandatory string parameters refuse $null,
'' and an empty array (ParameterBinderBase, unless [AllowNull]/[AllowEmptyString]); ValidateSet,
ValidateRange; enum and number conversion; parameter sets. Each failure is a terminating error of that
command (ParameterBindingException / ParameterBindingValidationException) that -ErrorAction and -WhatIf
cannot soften. The service cmdlets bind in winhost.py (their own tests)."""

import pytest
from winsim import core  # noqa: E402
from winsim.ps import winhost  # noqa: E402
from winsim.ps.interp import PSError  # noqa: E402

from ansible_collections.kubewin.nodes.plugins.plugin_utils._win_scripts import load  # noqa: E402


@pytest.fixture
def host(tmp_path):
    h = core.create_host(str(tmp_path), "w")
    with open(h.local_path("C:\\f.txt"), "w") as f:
        f.write("x")
    return h


def _run(host, text, whatif=False, error_action="Stop"):
    with host.open():
        interp = winhost.new_interpreter(host, "t.ps1", error_action=error_action, whatif=whatif)
        return interp.run_script(text), interp


def _fails(host, text, message, exception="ParameterBindingValidationException", **kw):
    with pytest.raises(PSError) as e:
        _run(host, text, **kw)
    rec = e.value.record
    assert message in rec.message, rec.message
    assert rec.exception_type == "System.Management.Automation." + exception, rec.exception_type
    return rec


def test_mandatory_path_refuses_empty_and_null(host):
    rec = _fails(host, "Test-Path -LiteralPath ''",
                 "Cannot bind argument to parameter 'LiteralPath' because it is an empty string.")
    assert rec.fqid == ("ParameterArgumentValidationErrorEmptyStringNotAllowed,"
                        "Microsoft.PowerShell.Commands.TestPathCommand") and rec.category == "InvalidData"
    _fails(host, "Test-Path -LiteralPath $null", "Cannot bind argument to parameter 'LiteralPath' because it is null.")
    _fails(host, "Test-Path ''", "Cannot bind argument to parameter 'Path' because it is an empty string.")
    # each element of a string[] too, and an empty array
    _fails(host, "Get-Item -LiteralPath @('C:\\f.txt', '')", "because it is an empty string.")
    _fails(host, "Remove-Item -LiteralPath @()", "Cannot bind argument to parameter 'LiteralPath' because it is an "
           "empty array.")
    _fails(host, "Get-ChildItem -LiteralPath ''", "because it is an empty string.")
    _fails(host, "Split-Path -Path '' -Parent", "because it is an empty string.")
    _fails(host, "Set-ItemProperty -LiteralPath 'HKLM:\\SYSTEM\\CurrentControlSet\\Services\\x' -Name '' -Value 1",
           "Cannot bind argument to parameter 'Name' because it is an empty string.")


def test_binding_errors_ignore_erroraction_and_whatif(host):
    # a binding error is terminating for the command: -ErrorAction SilentlyContinue does not apply, and it
    # comes before ShouldProcess (-WhatIf)
    _fails(host, "Test-Path -LiteralPath '' -ErrorAction SilentlyContinue", "because it is an empty string.")
    _fails(host, "Remove-Item -LiteralPath '' -Force", "because it is an empty string.", whatif=True)
    # under 'Continue' it ends that statement only, and try/catch sees it
    out, interp = _run(host, "Test-Path -LiteralPath ''\n'next'", error_action="Continue")
    assert out == ["next"] and "empty string" in interp.errors[0].message
    out, _ = _run(host, "try { Test-Path -LiteralPath '' } catch { $_.FullyQualifiedErrorId }")
    assert out == ["ParameterArgumentValidationErrorEmptyStringNotAllowed,"
                   "Microsoft.PowerShell.Commands.TestPathCommand"]


def test_missing_mandatory_and_parameter_sets(host):
    _fails(host, "Remove-ItemProperty -LiteralPath 'HKLM:\\SYSTEM\\CurrentControlSet\\Services\\x'",
           "Cannot process command because of one or more missing mandatory parameters: Name.",
           "ParameterBindingException")
    _fails(host, "New-Item -ItemType Directory -Force", "missing mandatory parameters: Path.",
           "ParameterBindingException")
    _fails(host, "Test-Path -Path C:\\f.txt -LiteralPath C:\\f.txt",
           "Parameter set cannot be resolved using the specified named parameters.", "ParameterBindingException")
    _fails(host, "Split-Path -Path C:\\f.txt -Parent -Leaf", "Parameter set cannot be resolved",
           "ParameterBindingException")


def test_validate_set_range_and_conversion(host):
    _fails(host, "Get-FileHash -LiteralPath C:\\f.txt -Algorithm SHA-512",
           "Cannot validate argument on parameter 'Algorithm'. The argument \"SHA-512\" does not belong to the set "
           "\"SHA1,SHA256,SHA384,SHA512,MACTripleDES,MD5,RIPEMD160\"")
    _fails(host, "Start-Sleep -Seconds -1", "The -1 argument is less than the minimum allowed range of 0.")
    _fails(host, "Start-Sleep -Seconds soon", "Cannot bind parameter 'Seconds'. Cannot convert value \"soon\" to "
           "type \"System.Int32\".", "ParameterBindingException")
    _fails(host, "Test-Path -LiteralPath C:\\f.txt -PathType File", "Cannot bind parameter 'PathType'. Cannot "
           "convert value \"File\" to type \"Microsoft.PowerShell.Commands.TestPathType\".",
           "ParameterBindingException")
    _fails(host, "Set-ItemProperty -LiteralPath 'HKLM:\\SYSTEM\\CurrentControlSet\\Services\\x' -Name a -Value 1 "
           "-Type Dword32", "Cannot convert value \"Dword32\" to type \"Microsoft.Win32.RegistryValueKind\"",
           "ParameterBindingException")
    _fails(host, "Get-NetIPAddress -InterfaceIndex -1 -AddressFamily IPv4 -ErrorAction SilentlyContinue",
           "Cannot bind parameter 'InterfaceIndex'", "ParameterBindingException")
    _fails(host, "Get-NetIPAddress -InterfaceIndex 1 -AddressFamily IP4", "Cannot bind parameter 'AddressFamily'",
           "ParameterBindingException")
    _fails(host, "@{a = 1} | ConvertTo-Json -Compress -Depth 0", "The 0 argument is less than the minimum allowed "
           "range of 1.")
    _fails(host, "@(1, 2) | Select-Object -First -1", "less than the minimum allowed range of 0.")
    # accepted values bind
    out, _ = _run(host, "Test-Path -LiteralPath C:\\f.txt -PathType Leaf; Start-Sleep -Milliseconds 0; 'ok'")
    assert out == [True, "ok"]


def test_mutation_files_state_hash_algorithm_outside_the_set_is_unreadable(host):
    # files_state: Get-FileHash -Algorithm outside [ValidateSet] fails binding; the script's catch turns that
    # into 'unreadable' (a path that is never taken for absent): the planted typo is visible in the result
    text = load("files_state")
    assert "-Algorithm SHA512" in text
    bad = text.replace("-Algorithm SHA512", "-Algorithm SHA-512")
    with host.open():
        good = winhost.execute(host, text, "files_state", {"Files": ["C:\\f.txt"]}, error_action="Stop", depth=8)
        answer = winhost.execute(host, bad, "files_state", {"Files": ["C:\\f.txt"]}, error_action="Stop", depth=8)
    assert len(good["result"]["files"]["C:\\f.txt"]) == 128
    assert answer["result"]["files"]["C:\\f.txt"] == "unreadable", answer
