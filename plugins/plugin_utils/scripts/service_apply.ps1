# kubewin.nodes script: service_apply
# Contract: parameters Name, Action (create|update|remove|none), CommandLine, DisplayName,
# Description, Dependencies (list), FailureResetSeconds, FailureActions (sc.exe form
# "restart/10000/..."), Environment (list of NAME=value: the service's own environment), Parameters
# (name -> text or list: values of the service's Parameters key, as NSSM reads them), Run
# (none|start|restart|stop). create/update set start mode automatic, then recovery actions (also on
# non-crash failures); remove stops and deletes the service, if there is one. Result: {status, restarted_dependents,
# removed (remove: whether there was a service to remove, so a removal needs no read first) and watch (below).
# With WatchSeconds > 0, a service this call started (Run start|restart) is then watched in the same call (issue 22:
# the start and its watch are one remote operation; this was the script service_watch): its status and process id,
# and the id of WatchChild (file name of the program a wrapper such as NSSM runs as a child of the service process,
# e.g. flanneld.exe; empty: none), every WatchIntervalMs until WatchSeconds have passed. watch = {samples: [{ms,
# status, pid, child (0: none running)}], exit_code (Win32ExitCode of the last exit), service_exit_code, log_tail:
# {path: the last WatchTailLines lines of each of WatchLogFiles, or null when missing}, error}. Whether the service
# stayed up is decided on the controller (service_logs.judge_watch). An error of the watch itself (a WMI query, a log
# read) ends the watch, not the call: the service was started, so the result keeps status and what was read so far,
# with the error's text in watch.error (null when the watch finished).
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
    [hashtable]$Parameters = @{},
    [hashtable]$ParameterTypes = @{},
    [ValidateSet('none', 'start', 'restart', 'stop')][string]$Run = 'none',
    [int]$WatchSeconds = 0,
    [int]$WatchIntervalMs = 1000,
    [string]$WatchChild = '',
    [string[]]$WatchLogFiles = @(),
    [int]$WatchTailLines = 20
)
$ErrorActionPreference = 'Stop'

function Invoke-Sc([string[]]$Arguments) {
    # Windows PowerShell 5.1 turns each stderr line of a native program into an error record, which
    # 'Stop' would make fatal before the exit code is read: decide on the exit code only.
    $ErrorActionPreference = 'Continue'
    $out = (& sc.exe @Arguments 2>&1 | ForEach-Object { "$_" }) -join ' '
    $code = $LASTEXITCODE
    $ErrorActionPreference = 'Stop'
    if ($code -ne 0) { throw "sc.exe $($Arguments[0]) failed with exit code ${code}: $out" }
}

# WQL strings are single-quoted with backslash escapes (Microsoft Learn, "WHERE Clause (WMI)"): the watch below.
function ConvertTo-WqlString([string]$Text) { "'" + $Text.Replace('\', '\\').Replace("'", "\'") + "'" }

# The last $Lines lines of the last $Bytes bytes of a log file: {text, lines, truncated}. Read through a handle that
# shares Delete too: kube-log-runner rotates its log by closing and renaming it (k8s.io/component-base logrotation.go
# rotate), a rename fails while any other handle lacks FILE_SHARE_DELETE (Microsoft Learn, CreateFileW), and after a
# failed rename every later write fails until the service restarts. Get-Content opens with FileShare.ReadWrite only
# (PowerShell's FileSystemProvider.cs GetContentReader). service_apply and node_bundle carry the same copy
# (tests/unit/psgate/test_win_scripts_text.py keeps them equal).
function Read-LogTail([string]$Path, [int]$Lines, [int]$Bytes) {
    $stream = New-Object System.IO.FileStream($Path, [System.IO.FileMode]::Open, [System.IO.FileAccess]::Read,
        ([System.IO.FileShare]::ReadWrite -bor [System.IO.FileShare]::Delete))
    try {
        $cut = $stream.Length -gt $Bytes
        if ($cut) { $stream.Position = $stream.Length - $Bytes }
        $text = (New-Object System.IO.StreamReader($stream)).ReadToEnd()
    } finally { $stream.Dispose() }
    $all = $text -split "`r?`n"
    $end = $all.Count - 1
    if ($all[$end] -eq '') { $end-- }  # the line break that ends the last line
    $start = $end - $Lines + 1
    $first = if ($cut) { 1 } else { 0 }  # after the cut the first line is a part of one
    if ($start -lt $first) { $start = $first }
    $kept = if ($end -ge $start) { @($all[$start..$end]) } else { @() }
    @{ text = $kept -join "`n"; lines = $kept.Count; truncated = $cut }
}

if ($Action -eq 'remove') {
    $service = Get-Service -Name $Name -ErrorAction SilentlyContinue | Select-Object -First 1
    if ($service) {
        if ($service.Status -ne 'Stopped') { Stop-Service -Name $Name -Force }
        Invoke-Sc @('delete', $Name)
    }
    $Ansible.Result = @{ status = 'Absent'; removed = [bool]$service; restarted_dependents = @(); watch = @{} }
    return
}

# Stop-Service -Force stops the dependent services first (ServiceController.Stop); a restart starts
# again those that were running. A start with a new definition stops the service first too: the
# controller read it Stopped, but the SCM's recovery actions may have restarted a crashing service
# since, with its old definition, and Start-Service does nothing to a running service.
$dependentsToStart = @()
if ($Run -in @('stop', 'restart') -or ($Run -eq 'start' -and $Action -ne 'none')) {
    $service = Get-Service -Name $Name -ErrorAction SilentlyContinue | Select-Object -First 1
    if ($service -and $service.Status -ne 'Stopped') {
        if ($Run -ne 'stop') {
            $dependentsToStart = @($service.DependentServices | Where-Object Status -eq 'Running' |
                ForEach-Object Name)
        }
        Stop-Service -Name $Name -Force
    }
}
if ($Action -eq 'none') {
    # only the run state changes
} elseif ($Action -eq 'create') {
    # New-Service's DisplayName is [ValidateNotNullOrEmpty] (Service.cs): without one, the SCM shows the name
    $new = @{ Name = $Name; BinaryPathName = $CommandLine; StartupType = 'Automatic' }
    if ($DisplayName) { $new.DisplayName = $DisplayName }
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
    # Set-Service's Description is [ValidateNotNullOrEmpty]: the controller refuses an empty one
    # (service.check_description); never call it with one.
    if ($Description) { Set-Service -Name $Name -Description $Description }
    $key = "HKLM:\SYSTEM\CurrentControlSet\Services\$Name"
    if ($Environment.Count -gt 0) {
        Set-ItemProperty -LiteralPath $key -Name Environment -Value $Environment -Type MultiString
    } else {
        Remove-ItemProperty -LiteralPath $key -Name Environment -ErrorAction SilentlyContinue
    }
    if ($Parameters.Count -gt 0) {
        # New-Item -Force would empty an existing registry key, so create it only when missing.
        if (-not (Test-Path -LiteralPath "$key\Parameters")) { New-Item -Path "$key\Parameters" | Out-Null }
        foreach ($valueName in $Parameters.Keys) {
            # the registry type is decided on the controller: DWord, MultiString or String
            $type = $ParameterTypes[$valueName]
            if (-not $type) { throw "no registry type given for the parameter $valueName" }
            $value = $Parameters[$valueName]
            if ($type -eq 'DWord') { $value = [BitConverter]::ToInt32([BitConverter]::GetBytes([uint32]$value), 0) }
            Set-ItemProperty -LiteralPath "$key\Parameters" -Name $valueName -Value $value -Type $type
        }
    }
}
if ($Action -ne 'none' -and $FailureActions) {
    Invoke-Sc @('failure', $Name, 'reset=', [string]$FailureResetSeconds, 'actions=', $FailureActions)
    Invoke-Sc @('failureflag', $Name, '1')
}
if ($Run -in @('start', 'restart')) {
    Start-Service -Name $Name
    foreach ($dependent in $dependentsToStart) { Start-Service -Name $dependent }
}
$result = @{ status = (Get-Service -Name $Name).Status.ToString(); restarted_dependents = $dependentsToStart
    removed = $false; watch = @{} }
if ($Run -in @('start', 'restart') -and $WatchSeconds -gt 0) {
    # One service is queried, not all of them enumerated at every sample.
    $serviceFilter = 'Name=' + (ConvertTo-WqlString $Name)
    $clock = [System.Diagnostics.Stopwatch]::StartNew()
    $samples = [System.Collections.Generic.List[object]]::new()
    $wmi = $null
    $tails = @{}
    $watchErrors = @()
    try {
        while ($true) {
            $wmi = Get-CimInstance -ClassName Win32_Service -Filter $serviceFilter
            $childId = 0
            if ($WatchChild -and $wmi -and $wmi.ProcessId) {
                $childFilter = 'ParentProcessId=' + [int]$wmi.ProcessId + ' AND Name=' + (ConvertTo-WqlString $WatchChild)
                $childProcess = @(Get-CimInstance -ClassName Win32_Process -Filter $childFilter)
                if ($childProcess.Count -gt 0) { $childId = [int]$childProcess[0].ProcessId }
            }
            $samples.Add(@{ ms = [int]$clock.ElapsedMilliseconds; status = [string]$wmi.State; pid = [int]$wmi.ProcessId
                child = $childId })
            if ($clock.ElapsedMilliseconds -ge ($WatchSeconds * 1000)) { break }
            Start-Sleep -Milliseconds $WatchIntervalMs
        }
    } catch {
        # the service is started: a failed read (a WMI error) ends the sampling, not the call
        $watchErrors += "sampling the service after $([int]$clock.ElapsedMilliseconds) ms: $_"
    }
    foreach ($log in $WatchLogFiles) {
        try {
            $tails[$log] = if (Test-Path -LiteralPath $log -PathType Leaf) {
                (Read-LogTail $log $WatchTailLines 65536).text  # the last 64 KiB at most
            } else { $null }
        } catch {
            # e.g. the log rotated away between Test-Path and the read
            $tails[$log] = $null
            $watchErrors += "reading ${log}: $_"
        }
    }
    $result.watch = @{
        samples = $samples.ToArray()
        exit_code = $wmi.ExitCode
        service_exit_code = $wmi.ServiceSpecificExitCode
        log_tail = $tails
        error = if ($watchErrors.Count -gt 0) { $watchErrors -join '; ' } else { $null }
    }
}
$Ansible.Result = $result
