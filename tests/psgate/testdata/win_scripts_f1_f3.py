# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""win_scripts.py as of 39e9136, before F1-F3 were fixed: the PowerShell gate must fail on it.

Every script is run through ``ansible.windows.win_powershell`` with user values passed only as
``parameters`` (never spliced into the text). Each one starts with a header line naming a stable
identifier (``# kubewin.nodes script: <id>``) that the test lab uses to dispatch the script to a
Python implementation of the same contract. Scripts only fetch or apply; every decision is made on
the controller. Read-only scripts declare ``SupportsShouldProcess`` so win_powershell runs them in
check mode too. Each script sets ``$Ansible.Result``; the contract of each is documented next to it.
"""

from __future__ import annotations

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
# description, object_name, environment (list of NAME=value), parameters (values under the service's
# Parameters key: text or list), failure_actions (base64 of the
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
"""

# Contract: parameters Name, Action (create|update|remove|none), CommandLine, DisplayName,
# Description, Dependencies (list), FailureResetSeconds, FailureActions (sc.exe form
# "restart/10000/..."), Environment (list of NAME=value: the service's own environment), Parameters
# (name -> text or list: values of the service's Parameters key, as NSSM reads them), Run
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
    [hashtable]$Parameters = @{},
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
    if ($Parameters.Count -gt 0) {
        # New-Item -Force would empty an existing registry key, so create it only when missing.
        if (-not (Test-Path -LiteralPath "$key\Parameters")) { New-Item -Path "$key\Parameters" | Out-Null }
        foreach ($name in $Parameters.Keys) {
            $value = $Parameters[$name]
            $type = if ($value -is [System.Collections.IList]) { 'MultiString' } else { 'String' }
            Set-ItemProperty -LiteralPath "$key\Parameters" -Name $name -Value $value -Type $type
        }
    }
}
if ($Action -ne 'none' -and $FailureActions) {
    Invoke-Sc @('failure', $Name, 'reset=', [string]$FailureResetSeconds, 'actions=', $FailureActions)
    Invoke-Sc @('failureflag', $Name, '1')
}
if ($Run -in @('start', 'restart')) { Start-Service -Name $Name }
$Ansible.Result = @{ status = (Get-Service -Name $Name).Status.ToString() }
"""

# Contract: parameters Paths (files whose existence matters) and Services (names).
# Result: {computer_name, hostname, version: {major, minor, build, ubr}, adapters: [{name, mac, ipv4: [..]}],
# pipes: [names under \\.\pipe\ that matter], services: {name: {exists, status, image_path, version_output}},
# paths: {path: bool}}. version_output is what the service's program prints for --version (runtimes only).
NODE_FACTS = HEADER_PREFIX + "node_facts" + r"""
[CmdletBinding(SupportsShouldProcess)]
param(
    [string[]]$Paths = @(),
    [string[]]$Services = @(),
    [string[]]$VersionOf = @()
)
$ErrorActionPreference = 'Stop'
$Ansible.Changed = $false
$nt = Get-ItemProperty -LiteralPath 'HKLM:\SOFTWARE\Microsoft\Windows NT\CurrentVersion'
$adapters = foreach ($nic in (Get-NetAdapter | Where-Object Status -eq 'Up')) {
    $ips = @(Get-NetIPAddress -InterfaceIndex $nic.ifIndex -AddressFamily IPv4 -ErrorAction SilentlyContinue |
        Where-Object { $_.IPAddress -notlike '169.254.*' } | ForEach-Object IPAddress)
    @{ name = $nic.Name; mac = $nic.MacAddress; ipv4 = $ips }
}
$services = @{}
foreach ($name in $Services) {
    $svc = Get-Service -Name $name -ErrorAction SilentlyContinue
    $entry = @{ exists = [bool]$svc; status = $null; image_path = $null; version_output = $null }
    if ($svc) {
        $entry.status = $svc.Status.ToString()
        $key = Get-ItemProperty -LiteralPath "HKLM:\SYSTEM\CurrentControlSet\Services\$($svc.Name)"
        $entry.image_path = $key.ImagePath
        if ($name -in $VersionOf) {
            $path = $entry.image_path
            $exe = if ($path.StartsWith('"')) { $path.Split('"')[1] } else { $path.Split(' ')[0] }
            try {
                $entry.version_output = (& $exe --version 2>&1 | Out-String)
            } catch {
                $entry.version_output = "error: $_"  # a broken runtime is reported, not fatal
            }
        }
    }
    $services[$name] = $entry
}
$paths = @{}
foreach ($path in $Paths) { $paths[$path] = Test-Path -LiteralPath $path }
$Ansible.Result = @{
    computer_name = $env:COMPUTERNAME
    hostname = [System.Net.Dns]::GetHostName()
    version = @{ major = $nt.CurrentMajorVersionNumber; minor = $nt.CurrentMinorVersionNumber
                 build = $nt.CurrentBuildNumber; ubr = $nt.UBR }
    adapters = @($adapters)
    pipes = @([System.IO.Directory]::GetFiles('\\.\pipe\') | ForEach-Object { $_.Substring(9) } |
        Where-Object { $_ -in @('containerd-containerd', 'docker_engine', 'cri-dockerd') })
    services = $services
    paths = $paths
}
"""

# Contract: parameters Files (paths), Dirs (paths) and Paths (paths). Result: {files: {path: sha512
# hex or null}, dirs: {path: SDDL of the access rules or null}, paths: {path: "file", "dir",
# "empty-dir" or null}}.
FILES_STATE = HEADER_PREFIX + "files_state" + r"""
[CmdletBinding(SupportsShouldProcess)]
param(
    [string[]]$Files = @(),
    [string[]]$Dirs = @(),
    [string[]]$Paths = @()
)
$ErrorActionPreference = 'Stop'
$Ansible.Changed = $false
$paths = @{}
foreach ($path in $Paths) {
    $item = Get-Item -LiteralPath $path -Force -ErrorAction SilentlyContinue
    $paths[$path] = if (-not $item) { $null }
        elseif (-not $item.PSIsContainer) { 'file' }
        elseif (Get-ChildItem -LiteralPath $path -Force | Select-Object -First 1) { 'dir' }
        else { 'empty-dir' }
}
$files = @{}
foreach ($path in $Files) {
    $files[$path] = if (Test-Path -LiteralPath $path -PathType Leaf) {
        (Get-FileHash -LiteralPath $path -Algorithm SHA512).Hash.ToLowerInvariant()
    } else { $null }
}
$dirs = @{}
foreach ($path in $Dirs) {
    $dirs[$path] = if (Test-Path -LiteralPath $path -PathType Container) {
        (Get-Acl -LiteralPath $path).GetSecurityDescriptorSddlForm('Access')
    } else { $null }
}
$Ansible.Result = @{ files = $files; dirs = $dirs; paths = $paths }
"""

# Contract: parameters Dirs [{path, sddl}] (create; set the access rules when sddl is not empty),
# Downloads [{url, dest, sha512, extract_dir}] (URL, UNC or local path; the SHA-512 is checked before
# the file is put in place; with extract_dir the archive is unpacked there with tar.exe and dest is a
# stamp file holding the archive's SHA-512), Files [{path, content (base64), sddl}], Remove (paths,
# removed with everything in them), Prune (directories removed only when empty, in the order given),
# Proxy, ProxyBypass (list of regular expressions). Applied in that order. Result: {}.
NODE_SYNC = HEADER_PREFIX + "node_sync" + r"""
param(
    [object[]]$Dirs = @(),
    [object[]]$Downloads = @(),
    [object[]]$Files = @(),
    [string[]]$Remove = @(),
    [string[]]$Prune = @(),
    [string]$Proxy = '',
    [string[]]$ProxyBypass = @()
)
$ErrorActionPreference = 'Stop'

function Set-AccessRules([string]$Path, [string]$Sddl) {
    if (-not $Sddl) { return }
    $acl = Get-Acl -LiteralPath $Path
    $acl.SetSecurityDescriptorSddlForm($Sddl, 'Access')
    Set-Acl -LiteralPath $Path -AclObject $acl
}

foreach ($dir in $Dirs) {
    New-Item -ItemType Directory -Path $dir.path -Force | Out-Null
    Set-AccessRules $dir.path $dir.sddl
}
foreach ($download in $Downloads) {
    $tmp = "$($download.dest).kubewin-download"
    New-Item -ItemType Directory -Path (Split-Path -Parent $download.dest) -Force | Out-Null
    if ($download.url -match '^(\\\\|[A-Za-z]:\\)') {
        Copy-Item -LiteralPath $download.url -Destination $tmp -Force
    } else {
        $client = New-Object System.Net.WebClient
        if ($Proxy) { $client.Proxy = New-Object System.Net.WebProxy($Proxy, $true, $ProxyBypass) }
        $client.DownloadFile($download.url, $tmp)
    }
    $hash = (Get-FileHash -LiteralPath $tmp -Algorithm SHA512).Hash.ToLowerInvariant()
    if ($hash -ne $download.sha512) {
        Remove-Item -LiteralPath $tmp -Force
        throw "checksum mismatch for $($download.url): expected sha512 $($download.sha512), got $hash"
    }
    if ($download.extract_dir) {
        New-Item -ItemType Directory -Path $download.extract_dir -Force | Out-Null
        & tar.exe -xf $tmp -C $download.extract_dir
        if ($LASTEXITCODE -ne 0) { throw "tar.exe could not unpack $($download.url) (exit code $LASTEXITCODE)" }
        Remove-Item -LiteralPath $tmp -Force
        [System.IO.File]::WriteAllText($download.dest, $download.sha512)
    } else {
        Move-Item -LiteralPath $tmp -Destination $download.dest -Force
    }
}
foreach ($file in $Files) {
    New-Item -ItemType Directory -Path (Split-Path -Parent $file.path) -Force | Out-Null
    [System.IO.File]::WriteAllBytes($file.path, [Convert]::FromBase64String($file.content))
    Set-AccessRules $file.path $file.sddl
}
foreach ($path in $Remove) {
    if (Test-Path -LiteralPath $path) { Remove-Item -LiteralPath $path -Recurse -Force }
}
foreach ($path in $Prune) {
    if ((Test-Path -LiteralPath $path -PathType Container) -and
        -not (Get-ChildItem -LiteralPath $path -Force | Select-Object -First 1)) {
        Remove-Item -LiteralPath $path -Force
    }
}
$Ansible.Result = @{}
"""

SCRIPTS = {
    "hns_state": HNS_STATE,
    "hns_calls": HNS_CALLS,
    "service_state": SERVICE_STATE,
    "service_apply": SERVICE_APPLY,
    "node_facts": NODE_FACTS,
    "files_state": FILES_STATE,
    "node_sync": NODE_SYNC,
}


def script_id(text):
    """Return the stable identifier a script declares in its first line, or None."""
    first = text.lstrip().splitlines()[0] if text.strip() else ""
    if first.startswith(HEADER_PREFIX):
        return first[len(HEADER_PREFIX):].strip()
    return None
