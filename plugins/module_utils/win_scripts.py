# -*- coding: utf-8 -*-
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fixed PowerShell the collection runs on Windows hosts.

Every script is run through ``ansible.windows.win_powershell`` with user values passed only as
``parameters`` (never spliced into the text). Each one starts with a header line naming a stable
identifier (``# kubewin.nodes script: <id>``) that the test lab uses to dispatch the script to a
Python implementation of the same contract. Scripts only fetch or apply; every decision is made on
the controller. Read-only scripts declare ``SupportsShouldProcess`` so win_powershell runs them in
check mode too. Each script sets ``$Ansible.Result``; the contract of each is documented next to it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

HEADER_PREFIX = "# kubewin.nodes script: "

# Shared P/Invoke for the HNS v1 API, the same entry point hns.psm1 and hcsshim use.
_HNS_CALL = r"""
Add-Type -Namespace KubewinNodes -Name Hns -MemberDefinition @'
[DllImport("vmcompute.dll")]
public static extern void HNSCall(
    [MarshalAs(UnmanagedType.LPWStr)] string method,
    [MarshalAs(UnmanagedType.LPWStr)] string path,
    [MarshalAs(UnmanagedType.LPWStr)] string request,
    [MarshalAs(UnmanagedType.LPWStr)] out string response);
'@

function Invoke-Hns([string]$Method, [string]$Path, [string]$Request) {
    $response = ''
    [KubewinNodes.Hns]::HNSCall($Method, $Path, $Request, [ref]$response)
    $response
}
"""

# Contract: no parameters. Result: {networks, endpoints, policylists}, each the raw JSON text HNS
# answered for GET on /networks/, /endpoints/ and /policylists/ ({"Success":..,"Output":[..]}).
HNS_STATE = HEADER_PREFIX + "hns_state" + r"""
[CmdletBinding(SupportsShouldProcess)]
param()
$ErrorActionPreference = 'Stop'
""" + _HNS_CALL + r"""
$Ansible.Changed = $false
$Ansible.Result = @{
    networks = Invoke-Hns 'GET' '/networks/' ''
    endpoints = Invoke-Hns 'GET' '/endpoints/' ''
    policylists = Invoke-Hns 'GET' '/policylists/' ''
}
"""

# Contract: parameter Calls = list of {method, path, request} run in order, stopping after the
# first answer whose Success is false. Result: {responses: [raw JSON text of each answer]}.
HNS_CALLS = HEADER_PREFIX + "hns_calls" + r"""
param(
    [Parameter(Mandatory)][object[]]$Calls
)
$ErrorActionPreference = 'Stop'
""" + _HNS_CALL + r"""
$responses = [System.Collections.Generic.List[string]]::new()
foreach ($call in $Calls) {
    $response = Invoke-Hns $call.method $call.path $call.request
    $responses.Add($response)
    if (-not ($response | ConvertFrom-Json).Success) { break }
}
$Ansible.Result = @{ responses = $responses.ToArray() }
"""

# Contract: parameters Name (service name) and FlagsFile (path, may be empty).
# Result: {exists, status, image_path, start, delayed_autostart, dependencies, display_name,
# description, object_name, environment (list of NAME=value), failure_actions (base64 of the
# FailureActions registry value or null), failure_actions_on_non_crash (int or null),
# flags_file_content (text or null)}.
SERVICE_STATE = HEADER_PREFIX + "service_state" + r"""
[CmdletBinding(SupportsShouldProcess)]
param(
    [Parameter(Mandatory)][string]$Name,
    [string]$FlagsFile = ''
)
$ErrorActionPreference = 'Stop'
$Ansible.Changed = $false
$result = @{ exists = $false; flags_file_content = $null }
if ($FlagsFile -and (Test-Path -LiteralPath $FlagsFile -PathType Leaf)) {
    $result.flags_file_content = [System.IO.File]::ReadAllText($FlagsFile)
}
$service = Get-Service -Name $Name -ErrorAction SilentlyContinue
if ($service) {
    $key = Get-Item -LiteralPath "HKLM:\SYSTEM\CurrentControlSet\Services\$($service.Name)"
    $failure = $key.GetValue('FailureActions', $null)
    $result.exists = $true
    $result.status = $service.Status.ToString()
    $result.image_path = $key.GetValue('ImagePath', '', 'DoNotExpandEnvironmentNames')
    $result.start = $key.GetValue('Start', $null)
    $result.delayed_autostart = $key.GetValue('DelayedAutostart', 0)
    $result.dependencies = @($key.GetValue('DependOnService', @()))
    $result.display_name = $key.GetValue('DisplayName', '')
    $result.description = $key.GetValue('Description', '')
    $result.object_name = $key.GetValue('ObjectName', '')
    $result.environment = @($key.GetValue('Environment', @()))
    $result.failure_actions = if ($failure) { [Convert]::ToBase64String($failure) } else { $null }
    $result.failure_actions_on_non_crash = $key.GetValue('FailureActionsOnNonCrashFailures', $null)
}
$Ansible.Result = $result
"""

# Contract: parameters Name, Action (create|update|remove|none), CommandLine, DisplayName,
# Description, Dependencies (list), FailureResetSeconds, FailureActions (sc.exe form
# "restart/10000/..."), Environment (list of NAME=value: the service's own environment), Run
# (none|start|restart|stop). create/update set start mode automatic, then recovery actions (also on
# non-crash failures); remove stops and deletes the service. Result: {status}.
SERVICE_APPLY = HEADER_PREFIX + "service_apply" + r"""
param(
    [Parameter(Mandatory)][string]$Name,
    [Parameter(Mandatory)][ValidateSet('create', 'update', 'remove', 'none')][string]$Action,
    [string]$CommandLine = '',
    [string]$DisplayName = '',
    [string]$Description = '',
    [string[]]$Dependencies = @(),
    [int]$FailureResetSeconds = 86400,
    [string]$FailureActions = '',
    [string[]]$Environment = @(),
    [ValidateSet('none', 'start', 'restart', 'stop')][string]$Run = 'none'
)
$ErrorActionPreference = 'Stop'

function Invoke-Sc([string[]]$Arguments) {
    $out = & sc.exe @Arguments 2>&1
    if ($LASTEXITCODE -ne 0) { throw "sc.exe $($Arguments[0]) failed with exit code ${LASTEXITCODE}: $out" }
}

if ($Action -eq 'remove') {
    $service = Get-Service -Name $Name -ErrorAction SilentlyContinue
    if ($service) {
        if ($service.Status -ne 'Stopped') { Stop-Service -Name $Name -Force }
        Invoke-Sc @('delete', $Name)
    }
    $Ansible.Result = @{ status = 'Absent' }
    return
}

if ($Run -in @('stop', 'restart')) {
    $service = Get-Service -Name $Name -ErrorAction SilentlyContinue
    if ($service -and $service.Status -ne 'Stopped') { Stop-Service -Name $Name -Force }
}
if ($Action -eq 'none') {
    # only the run state changes
} elseif ($Action -eq 'create') {
    $new = @{ Name = $Name; BinaryPathName = $CommandLine; DisplayName = $DisplayName; StartupType = 'Automatic' }
    if ($Dependencies.Count -gt 0) { $new.DependsOn = $Dependencies }
    New-Service @new | Out-Null
} else {
    $wmi = Get-CimInstance -ClassName Win32_Service | Where-Object { $_.Name -eq $Name }
    $change = Invoke-CimMethod -InputObject $wmi -MethodName Change -Arguments @{
        PathName = $CommandLine; DisplayName = $DisplayName; StartMode = 'Automatic'
        ServiceDependencies = [string[]]$Dependencies
    }
    if ($change.ReturnValue -ne 0) { throw "Win32_Service.Change failed with code $($change.ReturnValue)" }
    Set-ItemProperty -LiteralPath "HKLM:\SYSTEM\CurrentControlSet\Services\$Name" -Name DelayedAutostart -Value 0
}
if ($Action -ne 'none') {
    Set-Service -Name $Name -Description $Description
    $key = "HKLM:\SYSTEM\CurrentControlSet\Services\$Name"
    if ($Environment.Count -gt 0) {
        Set-ItemProperty -LiteralPath $key -Name Environment -Value $Environment -Type MultiString
    } else {
        Remove-ItemProperty -LiteralPath $key -Name Environment -ErrorAction SilentlyContinue
    }
}
if ($Action -ne 'none' -and $FailureActions) {
    Invoke-Sc @('failure', $Name, 'reset=', [string]$FailureResetSeconds, 'actions=', $FailureActions)
    Invoke-Sc @('failureflag', $Name, '1')
}
if ($Run -in @('start', 'restart')) { Start-Service -Name $Name }
$Ansible.Result = @{ status = (Get-Service -Name $Name).Status.ToString() }
"""

SCRIPTS = {
    "hns_state": HNS_STATE,
    "hns_calls": HNS_CALLS,
    "service_state": SERVICE_STATE,
    "service_apply": SERVICE_APPLY,
}


def script_id(text):
    """Return the stable identifier a script declares in its first line, or None."""
    first = text.lstrip().splitlines()[0] if text.strip() else ""
    if first.startswith(HEADER_PREFIX):
        return first[len(HEADER_PREFIX):].strip()
    return None
