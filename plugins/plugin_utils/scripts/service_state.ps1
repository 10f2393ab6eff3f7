# kubewin.nodes script: service_state
# Contract: parameters Name (service name) and FlagsFile (path, may be empty).
# Result: {exists, status, image_path, start, delayed_autostart, dependencies, display_name,
# description, object_name, environment (list of NAME=value), parameters (values under the service's
# Parameters key: text or list), failure_actions (base64 of the
# FailureActions registry value or null), failure_actions_on_non_crash (int or null),
# flags_file_content (text or null)}.
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
    $result.parameters = @{}
    $paramsPath = "HKLM:\SYSTEM\CurrentControlSet\Services\$($service.Name)\Parameters"
    $params = Get-Item -LiteralPath $paramsPath -ErrorAction SilentlyContinue
    if ($params) {
        foreach ($value in $params.GetValueNames()) { $result.parameters[$value] = $params.GetValue($value) }
    }
    $result.failure_actions = if ($failure) { [Convert]::ToBase64String($failure) } else { $null }
    $result.failure_actions_on_non_crash = $key.GetValue('FailureActionsOnNonCrashFailures', $null)
}
$Ansible.Result = $result
