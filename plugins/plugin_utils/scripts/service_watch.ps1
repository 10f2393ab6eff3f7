# kubewin.nodes script: service_watch
# Contract: parameters Name (service name), Seconds (how long to watch), IntervalMs (time between
# two samples), LogFiles (paths) and TailLines. Samples the service's status and process id until
# Seconds have passed. Result: {samples: [{ms, status, pid}], exit_code (Win32ExitCode of the last
# exit), service_exit_code, log_tail: {path: the last TailLines lines, or null when missing}}.
# Read-only: whether the service stayed up is decided on the controller (service_logs.judge_watch).
[CmdletBinding(SupportsShouldProcess)]
param(
    [Parameter(Mandatory)][string]$Name,
    [int]$Seconds = 20,
    [int]$IntervalMs = 1000,
    [string[]]$LogFiles = @(),
    [int]$TailLines = 20
)
$ErrorActionPreference = 'Stop'
$Ansible.Changed = $false
$clock = [System.Diagnostics.Stopwatch]::StartNew()
$samples = [System.Collections.Generic.List[object]]::new()
$wmi = $null
while ($true) {
    $wmi = Get-CimInstance -ClassName Win32_Service | Where-Object { $_.Name -eq $Name }
    $samples.Add(@{ ms = [int]$clock.ElapsedMilliseconds; status = [string]$wmi.State; pid = [int]$wmi.ProcessId })
    if ($clock.ElapsedMilliseconds -ge ($Seconds * 1000)) { break }
    Start-Sleep -Milliseconds $IntervalMs
}
$tails = @{}
foreach ($log in $LogFiles) {
    $tails[$log] = if (Test-Path -LiteralPath $log -PathType Leaf) {
        (Get-Content -LiteralPath $log -Tail $TailLines) -join "`n"
    } else { $null }
}
$Ansible.Result = @{
    samples = $samples.ToArray()
    exit_code = $wmi.ExitCode
    service_exit_code = $wmi.ServiceSpecificExitCode
    log_tail = $tails
}
