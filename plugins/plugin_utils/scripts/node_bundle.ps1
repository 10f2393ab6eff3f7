# kubewin.nodes script: node_bundle
# Contract: parameters Files (paths read as text: the last MaxLines lines of the last MaxChars bytes),
# Dirs (directories whose files are read the same way), Listings (directories whose entry names are listed),
# Services (names), EventLogs (log names, the newest MaxEvents records each), RuntimeService (the container runtime's
# service, whose --log-file is read when its command line has one), RuntimeEventSource (its event source in the
# Application log, or empty). Result:
# {files: {path: {text, lines, truncated, error}}, dirs: {path: {entries: {name: {text, lines, truncated, error}},
# error}}, listings: {path: {names, error}}, services: {name: {exists, status, image_path, start, dependencies,
# environment, parameters (values under the service's Parameters key), object_name}}, hns: {networks, endpoints,
# policylists: the raw JSON text HNS answered, or null}, hns_error, events: {log: {records: [{time, id, level,
# provider, message}], error, note}}, runtime: {events: like one log's, or null; log_file: the --log-file path or
# null; log: like one file's, or null; config_file: the --config (-c, --config-file) path or null; config: like one
# file's, or null}}. A log without records has no records and no error. A path that is absent, a
# link (never read through) or unreadable has error set and no text; one that fails does not stop the others.
# Read-only: the support bundle's one remote operation per host.
[CmdletBinding(SupportsShouldProcess)]
param(
    [string[]]$Files = @(),
    [string[]]$Dirs = @(),
    [string[]]$Listings = @(),
    [string[]]$Services = @(),
    [string[]]$EventLogs = @(),
    [int]$MaxLines = 2000,
    [int]$MaxChars = 1048576,
    [int]$MaxEvents = 200,
    [string]$RuntimeService = '',
    [string]$RuntimeEventSource = ''
)
$ErrorActionPreference = 'Stop'

# Shared P/Invoke for the HNS v1 API, the same entry point hns.psm1 and hcsshim use. HNSCall returns
# an HRESULT (hcsshim: ``_hnsCall(...) (hr error) = vmcompute.HNSCall?``); a failure, or an empty
# answer, ends the script with that error instead of handing null to ConvertFrom-Json. The type name
# differs from the former void signature, which a long-lived runspace may still hold. hns_state,
# hns_calls, node_health and node_bundle carry the same copy (tests/unit/psgate/test_win_scripts_text.py keeps them equal).
Add-Type -Namespace KubewinNodes -Name HnsApi -MemberDefinition @'
[DllImport("vmcompute.dll")]
public static extern int HNSCall(
    [MarshalAs(UnmanagedType.LPWStr)] string method,
    [MarshalAs(UnmanagedType.LPWStr)] string path,
    [MarshalAs(UnmanagedType.LPWStr)] string request,
    [MarshalAs(UnmanagedType.LPWStr)] out string response);
'@

function Invoke-Hns([string]$Method, [string]$Path, [string]$Request) {
    $response = ''
    $hr = [KubewinNodes.HnsApi]::HNSCall($Method, $Path, $Request, [ref]$response)
    if ($hr -lt 0) {
        $reason = [System.Runtime.InteropServices.Marshal]::GetExceptionForHR($hr).Message
        throw ("HNS call {0} {1} failed with HRESULT 0x{2:X8}: {3} (is the Host Network Service running and the " +
            "Containers feature installed?)") -f $Method, $Path, $hr, $reason
    }
    if (-not $response) { throw "HNS call $Method $Path returned no answer (HRESULT 0)" }
    $response
}

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

function Read-Tail([string]$Path) {
    # the bundle's answer for one file: Read-LogTail's, or why not; a link is never read through
    $entry = @{ text = $null; lines = 0; truncated = $false; error = $null }
    try {
        $item = Get-Item -LiteralPath $Path -Force -ErrorAction Stop
        if ($item.Attributes -band [System.IO.FileAttributes]::ReparsePoint) {
            $entry.error = 'not read: a link (junction or symbolic link)'
        } elseif ($item.PSIsContainer) {
            $entry.error = 'not read: a directory'
        } else {
            $tail = Read-LogTail $Path $MaxLines $MaxChars
            $entry.text = $tail.text
            $entry.lines = $tail.lines
            $entry.truncated = $tail.truncated
        }
    } catch {
        $entry.error = "$_"
    }
    $entry
}

# The newest MaxEvents records a Get-WinEvent query gives: {records, error, note}. Get-WinEvent (Microsoft Learn,
# Get-WinEvent; PowerShell's GetEventCommand.cs ReadEvents) writes a record whose message cannot be formatted with the
# message "Cannot retrieve event message text." after a non-terminating error, which -ErrorAction Stop makes the end
# of the whole read; a query without records is the error NoMatchingEventsFound ("No events were found that match
# the specified selection criteria."), and a provider not registered on the host NoMatchingProvidersFound. So one
# read with Stop, and on any other error a second read with SilentlyContinue that keeps every record it gives.
function Read-Events([hashtable]$Query) {
    $answer = @{ records = @(); error = $null; note = $null }
    try {
        $events = @(Get-WinEvent @Query -MaxEvents $MaxEvents -ErrorAction Stop)
    } catch {
        $id = $_.FullyQualifiedErrorId
        if ($id -like 'NoMatchingEventsFound*') { return $answer }
        if ($id -like 'NoMatchingProvidersFound*') {
            $answer.note = "$_"
            return $answer
        }
        $first = "$_"
        $events = @(Get-WinEvent @Query -MaxEvents $MaxEvents -ErrorAction SilentlyContinue)
        if ($events.Count -eq 0) {
            $answer.error = $first
            return $answer
        }
        $answer.note = "read with errors, the first: $first"
    }
    $answer.records = @($events | ForEach-Object {
        @{ time = $_.TimeCreated.ToUniversalTime().ToString('o'); id = $_.Id; level = $_.LevelDisplayName
           provider = $_.ProviderName; message = $_.Message }
    })
    $answer
}

$Ansible.Changed = $false
$fileAnswers = @{}
foreach ($path in $Files) { $fileAnswers[$path] = Read-Tail $path }

$dirAnswers = @{}
foreach ($dir in $Dirs) {
    $answer = @{ entries = @{}; error = $null }
    try {
        foreach ($child in @(Get-ChildItem -LiteralPath $dir -Force -ErrorAction Stop)) {
            if (-not $child.PSIsContainer) { $answer.entries[$child.Name] = Read-Tail $child.FullName }
        }
    } catch {
        $answer.error = "$_"
    }
    $dirAnswers[$dir] = $answer
}

$listingAnswers = @{}
foreach ($dir in $Listings) {
    $answer = @{ names = @(); error = $null }
    try {
        $answer.names = @(Get-ChildItem -LiteralPath $dir -Force -ErrorAction Stop | ForEach-Object { $_.Name })
    } catch {
        $answer.error = "$_"
    }
    $listingAnswers[$dir] = $answer
}

$serviceAnswers = @{}
foreach ($name in $Services) {
    $svc = Get-Service -Name $name -ErrorAction SilentlyContinue
    $entry = @{ exists = [bool]$svc }
    if ($svc) {
        $key = Get-Item -LiteralPath "HKLM:\SYSTEM\CurrentControlSet\Services\$($svc.Name)"
        $entry.status = $svc.Status.ToString()
        $entry.image_path = $key.GetValue('ImagePath', '', 'DoNotExpandEnvironmentNames')
        $entry.start = $key.GetValue('Start', $null)
        $entry.delayed_autostart = $key.GetValue('DelayedAutostart', 0)
        $entry.dependencies = @($key.GetValue('DependOnService', @()))
        $entry.object_name = $key.GetValue('ObjectName', '')
        $entry.environment = @($key.GetValue('Environment', @()))
        $entry.parameters = @{}
        $params = Get-Item -LiteralPath "HKLM:\SYSTEM\CurrentControlSet\Services\$($svc.Name)\Parameters" `
            -ErrorAction SilentlyContinue
        if ($params) {
            foreach ($value in $params.GetValueNames()) { $entry.parameters[$value] = $params.GetValue($value) }
        }
    }
    $serviceAnswers[$name] = $entry
}

$hnsAnswer = @{ networks = $null; endpoints = $null; policylists = $null }
$hnsError = $null
try {
    foreach ($kind in @('networks', 'endpoints', 'policylists')) { $hnsAnswer[$kind] = Invoke-Hns 'GET' "/$kind/" '' }
} catch {
    $hnsError = "$_"  # HNS stopped or missing is something to report, not the end of the bundle
}

$eventAnswers = @{}
foreach ($log in $EventLogs) { $eventAnswers[$log] = Read-Events @{ LogName = $log } }

# The runtime's own log: the records its service writes to the Application log under its event source (dockerd:
# moby cmd/dockerd/service_windows.go), and the file a service registered with --log-file writes (containerd, which
# otherwise discards its log and registers no event source: cmd/containerd/command/service_windows.go, "--log-file is
# *not* specified ... will go to NUL", in 1.5 to 2.x; review-s8 W3).
$runtimeAnswer = @{ events = $null; log_file = $null; log = $null; config_file = $null; config = $null }
if ($RuntimeEventSource) {
    $query = @{ LogName = 'Application'; ProviderName = $RuntimeEventSource }
    $runtimeAnswer.events = Read-Events @{ FilterHashtable = $query }
}
if ($serviceAnswers[$RuntimeService] -and $serviceAnswers[$RuntimeService].exists) {
    $commandLine = $serviceAnswers[$RuntimeService].image_path
    if ($commandLine -match '(?:^|\s)--log-file(?:=|\s+)(?:"([^"]+)"|(\S+))') {
        $runtimeAnswer.log_file = if ($Matches[1]) { $Matches[1] } else { $Matches[2] }
        $runtimeAnswer.log = Read-Tail $runtimeAnswer.log_file
    }
    # the configuration file the service runs with when it names one (containerd's global --config/-c: cmd/containerd/
    # command/main.go; dockerd's --config-file), which may not be the default file the Files read
    if ($commandLine -match '(?:^|\s)(?:--config|-c|--config-file)(?:=|\s+)(?:"([^"]+)"|(\S+))') {
        $runtimeAnswer.config_file = if ($Matches[1]) { $Matches[1] } else { $Matches[2] }
        $runtimeAnswer.config = Read-Tail $runtimeAnswer.config_file
    }
}

$Ansible.Result = @{ files = $fileAnswers; dirs = $dirAnswers; listings = $listingAnswers
                     services = $serviceAnswers; hns = $hnsAnswer; hns_error = $hnsError; events = $eventAnswers
                     runtime = $runtimeAnswer }
