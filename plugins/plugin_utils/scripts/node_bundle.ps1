# kubewin.nodes script: node_bundle
# Contract: parameters Files (paths read as text: the last MaxLines lines of the last MaxChars bytes),
# Dirs (directories whose files are read the same way), Listings (directories whose entry names are listed),
# Services (names), EventLogs (log names, the newest MaxEvents records each). Result:
# {files: {path: {text, lines, truncated, error}}, dirs: {path: {entries: {name: {text, lines, truncated, error}},
# error}}, listings: {path: {names, error}}, services: {name: {exists, status, image_path, start, dependencies,
# environment, parameters (values under the service's Parameters key), object_name}}, hns: {networks, endpoints,
# policylists: the raw JSON text HNS answered, or null}, hns_error, events: {log: {records: [{time, id, level,
# provider, message}], error}}}. A path that is absent, a link (never read through) or unreadable has error set and
# no text; one that fails does not stop the others. Read-only: the support bundle's one remote operation per host.
[CmdletBinding(SupportsShouldProcess)]
param(
    [string[]]$Files = @(),
    [string[]]$Dirs = @(),
    [string[]]$Listings = @(),
    [string[]]$Services = @(),
    [string[]]$EventLogs = @(),
    [int]$MaxLines = 2000,
    [int]$MaxChars = 1048576,
    [int]$MaxEvents = 200
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

function Read-Tail([string]$Path) {
    # the last MaxLines lines of the last MaxChars bytes; a link is never read through
    $entry = @{ text = $null; lines = 0; truncated = $false; error = $null }
    try {
        $item = Get-Item -LiteralPath $Path -Force -ErrorAction Stop
        if ($item.Attributes -band [System.IO.FileAttributes]::ReparsePoint) {
            $entry.error = 'not read: a link (junction or symbolic link)'
        } elseif ($item.PSIsContainer) {
            $entry.error = 'not read: a directory'
        } else {
            # Delete shared too: kube-log-runner renames a log it rotates, which fails while another handle lacks
            # FILE_SHARE_DELETE, and Get-Content opens with ReadWrite only (PowerShell FileSystemProvider.cs
            # GetContentReader), as service_apply's Read-LogTail says. Only the last MaxChars bytes are read.
            $stream = New-Object System.IO.FileStream($Path, [System.IO.FileMode]::Open, [System.IO.FileAccess]::Read,
                ([System.IO.FileShare]::ReadWrite -bor [System.IO.FileShare]::Delete))
            try {
                $cut = $stream.Length -gt $MaxChars
                if ($cut) { $stream.Position = $stream.Length - $MaxChars }
                $all = (New-Object System.IO.StreamReader($stream)).ReadToEnd() -split "`r?`n"
            } finally { $stream.Dispose() }
            $end = $all.Count - 1
            if ($all[$end] -eq '') { $end-- }  # the line break that ends the last line
            $start = $end - $MaxLines + 1
            $first = if ($cut) { 1 } else { 0 }  # after the cut the first line is a part of one
            if ($start -lt $first) { $start = $first }
            $lines = if ($end -ge $start) { @($all[$start..$end]) } else { @() }
            $entry.text = $lines -join "`n"
            $entry.truncated = $cut
            $entry.lines = $lines.Count
        }
    } catch {
        $entry.error = "$_"
    }
    $entry
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
foreach ($log in $EventLogs) {
    # Get-WinEvent -LogName -MaxEvents: the newest records first (Microsoft Learn, Get-WinEvent); a log without
    # records is the error NoMatchingEventsFound
    $answer = @{ records = @(); error = $null }
    try {
        $answer.records = @(Get-WinEvent -LogName $log -MaxEvents $MaxEvents -ErrorAction Stop | ForEach-Object {
            @{ time = $_.TimeCreated.ToString('o'); id = $_.Id; level = $_.LevelDisplayName
               provider = $_.ProviderName; message = $_.Message }
        })
    } catch {
        $answer.error = "$_"
    }
    $eventAnswers[$log] = $answer
}

$Ansible.Result = @{ files = $fileAnswers; dirs = $dirAnswers; listings = $listingAnswers
                     services = $serviceAnswers; hns = $hnsAnswer; hns_error = $hnsError; events = $eventAnswers }
