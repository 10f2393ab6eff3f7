# -*- coding: utf-8 -*-
# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fixed PowerShell the collection runs on Windows hosts.

Every script is run through ``ansible.windows.win_powershell`` with user values passed only as
``parameters`` (never spliced into the text). Each one starts with a header line naming a stable
identifier (``# kubewin.nodes script: <id>``) that the test lab uses to name the script it runs as
written through its PowerShell interpreter. Scripts only fetch or apply; every decision is made on
the controller. Read-only scripts declare ``SupportsShouldProcess`` so win_powershell runs them in
check mode too. Each script sets ``$Ansible.Result``; the contract of each is documented next to it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

HEADER_PREFIX = "# kubewin.nodes script: "

# Shared P/Invoke for the HNS v1 API, the same entry point hns.psm1 and hcsshim use. HNSCall returns
# an HRESULT (hcsshim: ``_hnsCall(...) (hr error) = vmcompute.HNSCall?``); a failure, or an empty
# answer, ends the script with that error instead of handing null to ConvertFrom-Json. The type name
# differs from the former void signature, which a long-lived runspace may still hold.
_HNS_CALL = r"""
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
    [hashtable]$ParameterTypes = @{},
    [ValidateSet('none', 'start', 'restart', 'stop')][string]$Run = 'none'
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

if ($Action -eq 'remove') {
    $service = Get-Service -Name $Name -ErrorAction SilentlyContinue
    if ($service) {
        if ($service.Status -ne 'Stopped') { Stop-Service -Name $Name -Force }
        Invoke-Sc @('delete', $Name)
    }
    $Ansible.Result = @{ status = 'Absent' }
    return
}

# Stop-Service -Force stops the dependent services first (ServiceController.Stop); a restart starts
# again those that were running.
$dependentsToStart = @()
if ($Run -in @('stop', 'restart')) {
    $service = Get-Service -Name $Name -ErrorAction SilentlyContinue
    if ($service -and $service.Status -ne 'Stopped') {
        if ($Run -eq 'restart') {
            $dependentsToStart = @($service.DependentServices | Where-Object Status -eq 'Running' |
                ForEach-Object Name)
        }
        Stop-Service -Name $Name -Force
    }
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
$Ansible.Result = @{ status = (Get-Service -Name $Name).Status.ToString(); restarted_dependents = $dependentsToStart }
"""

# Contract: parameters Paths (files whose existence matters) and Services (names).
# Result: {computer_name, hostname, version: {major, minor, build, ubr}, adapters: [{name, mac, ipv4: [..]}],
# pipes: [names under \\.\pipe\ that matter], services: {name: {exists, status, image_path, version_output}},
# paths: {path: bool}}. version_output is what the service's program prints for --version (runtimes only).
# config_dump (services in ConfigDumpOf only): what `<program> [--config <file>] config dump` printed, the
# --config value taken from the service's ImagePath with ConfigFlagPattern (group 1), or "error: ...".
# machine_path: the machine-scope Path, expanded (what a process started after a reboot or a new logon sees).
NODE_FACTS = HEADER_PREFIX + "node_facts" + r"""
[CmdletBinding(SupportsShouldProcess)]
param(
    [string[]]$Paths = @(),
    [string[]]$Services = @(),
    [string[]]$VersionOf = @(),
    [string[]]$ConfigDumpOf = @(),
    [string]$ConfigFlagPattern = ''
)
$ErrorActionPreference = 'Stop'
$Ansible.Changed = $false
$nt = Get-ItemProperty -LiteralPath 'HKLM:\SOFTWARE\Microsoft\Windows NT\CurrentVersion'
$adapters = foreach ($nic in (Get-NetAdapter | Where-Object Status -eq 'Up')) {
    $ips = @(Get-NetIPAddress -InterfaceIndex $nic.ifIndex -AddressFamily IPv4 -ErrorAction SilentlyContinue |
        Where-Object { $_.IPAddress -notlike '169.254.*' } | ForEach-Object IPAddress)
    @{ name = $nic.Name; mac = $nic.MacAddress; ipv4 = $ips }
}
$serviceFacts = @{}
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
                $ErrorActionPreference = 'Continue'  # 5.1: a stderr line must not end the script
                $entry.version_output = (& $exe --version 2>&1 | ForEach-Object { "$_" }) -join "`n"
            } catch {
                $entry.version_output = "error: $_"  # a broken runtime is reported, not fatal
            } finally {
                $ErrorActionPreference = 'Stop'
            }
        }
    }
    if ($svc -and $name -in $ConfigDumpOf) {
        $image = [string]$entry.image_path
        $program = if ($image.StartsWith('"')) { $image.Split('"')[1] } else { $image.Split(' ')[0] }
        $dumpArgs = @()
        if ($ConfigFlagPattern -and $image -match $ConfigFlagPattern) {
            $dumpArgs = @('--config', $Matches[1].Trim('"'))
        }
        $entry.config_dump = & {
            # containerd logs warnings to stderr; under 'Stop' Windows PowerShell 5.1 would throw on them.
            $ErrorActionPreference = 'Continue'
            try {
                $text = & $program @dumpArgs config dump 2>&1 |
                    Where-Object { $_ -isnot [System.Management.Automation.ErrorRecord] } | Out-String
                if ($LASTEXITCODE -ne 0) { "error: exit code $LASTEXITCODE" } else { $text }
            } catch {
                "error: $_"
            }
        }
    }
    $serviceFacts[$name] = $entry
}
$pathFacts = @{}
foreach ($path in $Paths) { $pathFacts[$path] = Test-Path -LiteralPath $path }
$Ansible.Result = @{
    computer_name = $env:COMPUTERNAME
    hostname = [System.Net.Dns]::GetHostName()
    version = @{ major = $nt.CurrentMajorVersionNumber; minor = $nt.CurrentMinorVersionNumber
                 build = $nt.CurrentBuildNumber; ubr = $nt.UBR }
    adapters = @($adapters)
    # only the pipes that matter are probed: listing \\.\pipe\ throws on names .NET rejects
    pipes = @(@('containerd-containerd', 'docker_engine', 'cri-dockerd') |
        Where-Object { Test-Path -LiteralPath "\\.\pipe\$_" })
    services = $serviceFacts
    paths = $pathFacts
    machine_path = [Environment]::GetEnvironmentVariable('Path', 'Machine')
}
"""

# Contract: parameters Files (paths), Dirs (paths), Paths (paths), Acls (paths of files whose owner and
# access rules matter), Scan (directories to list) and Owners (SDDL owners Scan leaves out). Result:
# {files: {path: sha512 hex, "directory" (a directory is here), "unreadable" or null (absent, or a link:
# never read through)}, dirs: {path: SDDL of the owner and access rules ('O:BAD:P(...)'), "unreadable" or
# null}, paths: {path: "file", "dir", "empty-dir", "unreadable" or null}, acls: {path: SDDL of the file's
# owner and access rules, "unreadable" or null}, links: [paths of Files, Dirs, Paths and Acls that are
# reparse points], scan: {directory: [{path, owner, link}]}}: everything below a Scan directory that is a
# link (never followed) or whose owner is not in Owners ("unreadable" when its owner cannot be read), at
# most 20 each. "unreadable": Get-Item failed for another reason than ItemNotFoundException, or reading the
# security descriptor or the content failed (an owner who denies Administrators READ_CONTROL or read
# access); it is never taken for "absent". A reparse point is what FileAttributes.ReparsePoint marks:
# junctions, symbolic links and volume mount points (Microsoft Learn, System.IO.FileAttributes; "Determining
# Whether a Directory Is a Volume Mount Point": same IO_REPARSE_TAG_MOUNT_POINT tag as a junction).
FILES_STATE = HEADER_PREFIX + "files_state" + r"""
[CmdletBinding(SupportsShouldProcess)]
param(
    [string[]]$Files = @(),
    [string[]]$Dirs = @(),
    [string[]]$Paths = @(),
    [string[]]$Acls = @(),
    [string[]]$Scan = @(),
    [string[]]$Owners = @()
)
$ErrorActionPreference = 'Stop'
$Ansible.Changed = $false
$links = [System.Collections.Generic.List[string]]::new()
function Get-Entry([string]$Path) {
    # $null when absent; the string 'unreadable' when Get-Item fails otherwise (never taken for absent)
    try { $item = Get-Item -LiteralPath $Path -Force -ErrorAction Stop }
    catch [System.Management.Automation.ItemNotFoundException] { return $null }
    catch { return 'unreadable' }
    if (($item.Attributes -band [System.IO.FileAttributes]::ReparsePoint) -and -not $links.Contains($Path)) {
        $links.Add($Path)
    }
    $item
}
function Get-Security($Item) {
    try { $Item.GetAccessControl('Owner, Access').GetSecurityDescriptorSddlForm('Owner, Access') }
    catch { 'unreadable' }
}
$pathKinds = @{}
foreach ($path in $Paths) {
    $item = Get-Entry $path
    $pathKinds[$path] = if ($item -is [string]) { $item } elseif (-not $item) { $null }
        elseif (-not $item.PSIsContainer) { 'file' }
        elseif (Get-ChildItem -LiteralPath $path -Force | Select-Object -First 1) { 'dir' }
        else { 'empty-dir' }
}
$fileHashes = @{}
foreach ($path in $Files) {
    $item = Get-Entry $path
    # a link is never read through (a dangling one cannot be); Get-FileHash's errors are non-terminating
    $fileHashes[$path] = if ($item -is [string]) { $item }
        elseif (-not $item -or $links.Contains($path)) { $null }
        elseif ($item.PSIsContainer) { 'directory' }
        else {
            try { (Get-FileHash -LiteralPath $path -Algorithm SHA512 -ErrorAction Stop).Hash.ToLowerInvariant() }
            catch { 'unreadable' }
        }
}
$dirAccess = @{}
foreach ($path in $Dirs) {
    $item = Get-Entry $path
    $dirAccess[$path] = if ($item -is [string]) { $item }
        elseif ($item -and $item.PSIsContainer) { Get-Security $item } else { $null }
}
$fileAccess = @{}
foreach ($path in $Acls) {
    $item = Get-Entry $path
    $fileAccess[$path] = if ($item -is [string]) { $item }
        elseif ($item -and -not $item.PSIsContainer) { Get-Security $item } else { $null }
}
$found = @{}
foreach ($root in $Scan) {
    $hits = [System.Collections.Generic.List[object]]::new()
    $pending = [System.Collections.Generic.Stack[string]]::new()
    $pending.Push($root)
    while ($pending.Count -gt 0 -and $hits.Count -lt 20) {
        $dir = $pending.Pop()
        try { $children = @(Get-ChildItem -LiteralPath $dir -Force) } catch {
            $hits.Add(@{ path = $dir; owner = 'unreadable'; link = $false }); continue
        }
        foreach ($child in $children) {
            if ($hits.Count -ge 20) { break }
            $isLink = [bool]($child.Attributes -band [System.IO.FileAttributes]::ReparsePoint)
            $owner = try { $child.GetAccessControl('Owner').GetSecurityDescriptorSddlForm('Owner').Substring(2) }
                catch { 'unreadable' }
            if ($isLink -or $owner -notin $Owners) {
                $hits.Add(@{ path = $child.FullName; owner = $owner; link = $isLink })
            }
            if ($child.PSIsContainer -and -not $isLink) { $pending.Push($child.FullName) }
        }
    }
    $found[$root] = $hits.ToArray()
}
$Ansible.Result = @{ files = $fileHashes; dirs = $dirAccess; paths = $pathKinds; acls = $fileAccess
                     links = $links.ToArray(); scan = $found }
"""

# Contract: parameters Dirs [{path, sddl}] (sddl: the owner and access rules 'O:BAD:P(...)', or empty for
# a plain directory), Discard (paths removed first: files another user owns, links), Downloads [{url, dest,
# sha512, extract_dir}] (URL, UNC or local path; the SHA-512 is checked before the file is put in place; with
# extract_dir the archive is unpacked there with tar.exe and dest is a stamp file holding the archive's
# SHA-512), Files [{path, content (base64), sddl}], Remove (paths, removed with everything in them), Prune
# (directories removed only when empty, in the order given), Proxy, ProxyBypass (list of regular
# expressions). Applied in that order. Result: {}.
# Security: only the owner and access sections are written (never group or audit rules, which would need
# SeSecurityPrivilege), through .NET's SetAccessControl, which persists only the sections that were set
# (NativeObjectSecurity.Persist); not Set-Acl, which writes back the owner Get-Acl read and then fails with
# "The security identifier is not allowed to be the owner of this object" when that is another user.
# A missing directory is created with its final owner and access rules (Directory.CreateDirectory(path,
# DirectorySecurity): every directory it creates on the way gets them too), so nothing is ever written
# under inherited rules; an existing one gets them before anything is written into it, and a link there is
# refused. A file or download goes to a temporary file next to its destination first, which then replaces
# the destination in one step ([IO.File]::Replace, or a rename when there is none). A file with sddl is
# created with it (FileStream with FileSecurity), and an existing destination gets it before the new
# content replaces it (Replace keeps the destination's security). Remove and Discard never follow a
# junction or symbolic link: the link itself is deleted (RemoveDirectoryW / DeleteFileW on a reparse point
# remove the link, never its target: Microsoft Learn, RemoveDirectoryW remarks), while Windows PowerShell
# 5.1's Remove-Item -Recurse walks into a junction and deletes the target's content
# (PowerShell/PowerShell#621, scriptcs-contrib/svm#48).
NODE_SYNC = HEADER_PREFIX + "node_sync" + r"""
param(
    [object[]]$Dirs = @(),
    [string[]]$Discard = @(),
    [object[]]$Downloads = @(),
    [object[]]$Files = @(),
    [string[]]$Remove = @(),
    [string[]]$Prune = @(),
    [string]$Proxy = '',
    [string[]]$ProxyBypass = @()
)
$ErrorActionPreference = 'Stop'

function Set-Security([string]$Path, [string]$Sddl) {
    if (-not $Sddl) { return }
    $item = Get-Item -LiteralPath $Path -Force
    # a new descriptor, not the one on disk: reading that needs READ_CONTROL, which its owner may deny
    $security = if ($item.PSIsContainer) { New-Object System.Security.AccessControl.DirectorySecurity }
        else { New-Object System.Security.AccessControl.FileSecurity }
    $security.SetSecurityDescriptorSddlForm($Sddl, 'Owner, Access')
    try {
        $item.SetAccessControl($security)
    } catch [System.UnauthorizedAccessException] {
        # not /R: Administrators would own what others planted below, and the next check would accept it
        throw ("cannot make Administrators the owner of $Path (another user took away their access): run " +
            "takeown /F `"$Path`" /A as an administrator, then re-run")
    }
}

function Remove-Tree([string]$Path) {
    $item = Get-Item -LiteralPath $Path -Force
    if ($item.Attributes -band [System.IO.FileAttributes]::ReparsePoint) {
        # the link itself, never its target
        if ($item.PSIsContainer) { [System.IO.Directory]::Delete($Path, $false) } else {
            [System.IO.File]::Delete($Path)
        }
    } elseif ($item.PSIsContainer) {
        foreach ($child in @(Get-ChildItem -LiteralPath $Path -Force)) { Remove-Tree $child.FullName }
        Remove-Item -LiteralPath $Path -Force
    } else {
        Remove-Item -LiteralPath $Path -Force
    }
}

function Install-File([string]$Source, [string]$Destination) {
    if (Test-Path -LiteralPath $Destination -PathType Leaf) {
        [System.IO.File]::Replace($Source, $Destination, [NullString]::Value)
    } else {
        [System.IO.File]::Move($Source, $Destination)
    }
}

foreach ($dir in $Dirs) {
    if (-not $dir.sddl) {
        New-Item -ItemType Directory -Path $dir.path -Force | Out-Null
    } elseif (Test-Path -LiteralPath $dir.path) {
        $item = Get-Item -LiteralPath $dir.path -Force
        if ($item.Attributes -band [System.IO.FileAttributes]::ReparsePoint) {
            throw ("$($dir.path) is a junction, symbolic link or volume mount point (a reparse point): not " +
                "following it")
        }
        if (-not $item.PSIsContainer) { throw "$($dir.path) is a file, not a directory: move it away, then re-run" }
        Set-Security $dir.path $dir.sddl
    } else {
        $security = New-Object System.Security.AccessControl.DirectorySecurity
        $security.SetSecurityDescriptorSddlForm($dir.sddl, 'Owner, Access')
        [System.IO.Directory]::CreateDirectory($dir.path, $security) | Out-Null
    }
}
foreach ($path in $Discard) {
    # Get-Item, as files_state found it: a dangling link is there too
    if (Get-Item -LiteralPath $path -Force -ErrorAction SilentlyContinue) { Remove-Tree $path }
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
        # 5.1 makes each stderr line (a bsdtar warning too) an error record: decide on the exit code only
        $ErrorActionPreference = 'Continue'
        $tarOutput = (& tar.exe -xf $tmp -C $download.extract_dir 2>&1 | ForEach-Object { "$_" }) -join "`n"
        $tarExit = $LASTEXITCODE
        $ErrorActionPreference = 'Stop'
        if ($tarExit -ne 0) { throw "tar.exe could not unpack $($download.url) (exit code ${tarExit}): $tarOutput" }
        Remove-Item -LiteralPath $tmp -Force
        [System.IO.File]::WriteAllText($tmp, $download.sha512)
        Install-File $tmp $download.dest
    } else {
        Install-File $tmp $download.dest
    }
}
foreach ($file in $Files) {
    New-Item -ItemType Directory -Path (Split-Path -Parent $file.path) -Force | Out-Null
    $bytes = [Convert]::FromBase64String($file.content)
    $tmp = "$($file.path).kubewin-new"
    if (Test-Path -LiteralPath $tmp) { Remove-Item -LiteralPath $tmp -Force }
    if ($file.sddl) {
        $security = New-Object System.Security.AccessControl.FileSecurity
        $security.SetSecurityDescriptorSddlForm($file.sddl, 'Owner, Access')
        # created with its final owner and access rules: .NET Framework's FileStream(..., FileSecurity)
        $stream = New-Object System.IO.FileStream($tmp, [System.IO.FileMode]::CreateNew,
            [System.Security.AccessControl.FileSystemRights]::Write, [System.IO.FileShare]::None, 4096,
            [System.IO.FileOptions]::None, $security)
        try { $stream.Write($bytes, 0, $bytes.Length) } finally { $stream.Dispose() }
        if (Test-Path -LiteralPath $file.path -PathType Leaf) { Set-Security $file.path $file.sddl }
    } else {
        [System.IO.File]::WriteAllBytes($tmp, $bytes)
    }
    Install-File $tmp $file.path
}
foreach ($path in $Remove) {
    if (Test-Path -LiteralPath $path) { Remove-Tree $path }
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


# Contract: parameters Name (service name), Seconds (how long to watch), IntervalMs (time between
# two samples), LogFiles (paths) and TailLines. Samples the service's status and process id until
# Seconds have passed. Result: {samples: [{ms, status, pid}], exit_code (Win32ExitCode of the last
# exit), service_exit_code, log_tail: {path: the last TailLines lines, or null when missing}}.
# Read-only: whether the service stayed up is decided on the controller (service_logs.judge_watch).
SERVICE_WATCH = HEADER_PREFIX + "service_watch" + r"""
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
"""
SCRIPTS["service_watch"] = SERVICE_WATCH
