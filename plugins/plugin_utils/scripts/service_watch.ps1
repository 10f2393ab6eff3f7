# kubewin.nodes script: service_watch
# Contract: parameters Name (service name), Seconds (how long to watch), IntervalMs (time between
# two samples), Child (file name of the program a wrapper such as NSSM runs as a child of the service
# process, e.g. flanneld.exe; empty: none), LogFiles (paths) and TailLines. Samples the service's
# status and process id, and the id of that child, until Seconds have passed. Result: {samples: [{ms,
# status, pid, child (0: none running)}], exit_code (Win32ExitCode of the last exit),
# service_exit_code, log_tail: {path: the last TailLines lines, or null when missing}}.
# Read-only: whether the service stayed up is decided on the controller (service_logs.judge_watch).
[CmdletBinding(SupportsShouldProcess)]
param(
    [Parameter(Mandatory)][string]$Name,
    [int]$Seconds = 20,
    [int]$IntervalMs = 1000,
    [string]$Child = '',
    [string[]]$LogFiles = @(),
    [int]$TailLines = 20
)
$ErrorActionPreference = 'Stop'
$Ansible.Changed = $false
# WQL strings are single-quoted with backslash escapes (Microsoft Learn, "WHERE Clause (WMI)"). One service
# is queried, not all of them enumerated at every sample.
function ConvertTo-WqlString([string]$Text) { "'" + $Text.Replace('\', '\\').Replace("'", "\'") + "'" }
$serviceFilter = 'Name=' + (ConvertTo-WqlString $Name)
$clock = [System.Diagnostics.Stopwatch]::StartNew()
$samples = [System.Collections.Generic.List[object]]::new()
$wmi = $null
while ($true) {
    $wmi = Get-CimInstance -ClassName Win32_Service -Filter $serviceFilter
    $childId = 0
    if ($Child -and $wmi -and $wmi.ProcessId) {
        $childFilter = 'ParentProcessId=' + [int]$wmi.ProcessId + ' AND Name=' + (ConvertTo-WqlString $Child)
        $childProcess = @(Get-CimInstance -ClassName Win32_Process -Filter $childFilter)
        if ($childProcess.Count -gt 0) { $childId = [int]$childProcess[0].ProcessId }
    }
    $samples.Add(@{ ms = [int]$clock.ElapsedMilliseconds; status = [string]$wmi.State; pid = [int]$wmi.ProcessId
        child = $childId })
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
