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

# The service's definition as the registry holds it, $null when there is no such service. node_facts carries the
# same function (its read serves the roles' first look at each service: tests/unit/psgate/test_win_scripts_text.py).
function Get-ServiceDefinition([string]$Name) {
    $service = Get-Service -Name $Name -ErrorAction SilentlyContinue
    if (-not $service) { return $null }
    $key = Get-Item -LiteralPath "HKLM:\SYSTEM\CurrentControlSet\Services\$($service.Name)"
    $failure = $key.GetValue('FailureActions', $null)
    $definition = @{ exists = $true; status = $service.Status.ToString() }
    $definition.image_path = $key.GetValue('ImagePath', '', 'DoNotExpandEnvironmentNames')
    $definition.start = $key.GetValue('Start', $null)
    $definition.delayed_autostart = $key.GetValue('DelayedAutostart', 0)
    $definition.dependencies = @($key.GetValue('DependOnService', @()))
    $definition.display_name = $key.GetValue('DisplayName', '')
    $definition.description = $key.GetValue('Description', '')
    $definition.object_name = $key.GetValue('ObjectName', '')
    $definition.environment = @($key.GetValue('Environment', @()))
    $definition.parameters = @{}
    $paramsKey = "HKLM:\SYSTEM\CurrentControlSet\Services\$($service.Name)\Parameters"
    $params = Get-Item -LiteralPath $paramsKey -ErrorAction SilentlyContinue
    if ($params) {
        foreach ($value in $params.GetValueNames()) { $definition.parameters[$value] = $params.GetValue($value) }
    }
    $definition.failure_actions = if ($failure) { [Convert]::ToBase64String($failure) } else { $null }
    $definition.failure_actions_on_non_crash = $key.GetValue('FailureActionsOnNonCrashFailures', $null)
    $definition
}

$result = Get-ServiceDefinition $Name
if (-not $result) { $result = @{ exists = $false } }
$result.flags_file_content = $null
if ($FlagsFile -and (Test-Path -LiteralPath $FlagsFile -PathType Leaf)) {
    $result.flags_file_content = [System.IO.File]::ReadAllText($FlagsFile)
}
$Ansible.Result = $result
