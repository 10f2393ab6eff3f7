# kubewin.nodes script: containerd_state
# Contract: parameters Exe (containerd.exe), Files (paths whose text is read), HostsDir (registry hosts directory:
# the hosts.toml files below it are listed), Service (containerd's service name). Result: {exe_exists; default_code:
# the exit code of `containerd.exe config default`, null when it did not run; default_output: its stdout lines;
# default_errors: its stderr lines; files: {path: UTF-8 text, or null when absent}; hosts_files: the hosts.toml
# paths below HostsDir; service: {exists, image_path, status}}. Read-only; decided on the controller
# (plugin_utils/_host/containerd.py).
[CmdletBinding(SupportsShouldProcess)]
param(
    [Parameter(Mandatory)][string]$Exe,
    [string[]]$Files = @(),
    [Parameter(Mandatory)][string]$HostsDir,
    [Parameter(Mandatory)][string]$Service
)
$ErrorActionPreference = 'Stop'
$Ansible.Changed = $false

$result = @{ exe_exists = $false; default_code = $null; default_output = @(); default_errors = @(); files = @{}
             hosts_files = @(); service = @{ exists = $false; image_path = $null; status = $null } }
if (Test-Path -LiteralPath $Exe -PathType Leaf) {
    $result.exe_exists = $true
    # containerd logs to stderr; Windows PowerShell 5.1 makes each stderr line an error record, which 'Stop' would
    # make fatal before the exit code is read.
    $ErrorActionPreference = 'Continue'
    $all = @(& $Exe config default 2>&1)
    $result.default_code = $LASTEXITCODE
    $ErrorActionPreference = 'Stop'
    $result.default_output = @($all | Where-Object { $_ -isnot [System.Management.Automation.ErrorRecord] } |
        ForEach-Object { "$_" })
    $result.default_errors = @($all | Where-Object { $_ -is [System.Management.Automation.ErrorRecord] } |
        ForEach-Object { "$_" })
}
foreach ($path in $Files) {
    $result.files[$path] = if (Test-Path -LiteralPath $path -PathType Leaf) {
        [System.IO.File]::ReadAllText($path)
    } else { $null }
}
if (Test-Path -LiteralPath $HostsDir -PathType Container) {
    $result.hosts_files = @(Get-ChildItem -LiteralPath $HostsDir -Force | Where-Object { $_.PSIsContainer } |
        ForEach-Object { "$($_.FullName)\hosts.toml" } | Where-Object { Test-Path -LiteralPath $_ -PathType Leaf })
    foreach ($path in $result.hosts_files) { $result.files[$path] = [System.IO.File]::ReadAllText($path) }
}
$svc = Get-Service -Name $Service -ErrorAction SilentlyContinue
if ($svc) {
    $result.service = @{
        exists = $true
        image_path = (Get-ItemProperty -LiteralPath "HKLM:\SYSTEM\CurrentControlSet\Services\$($svc.Name)").ImagePath
        status = [string]$svc.Status
    }
}
$Ansible.Result = $result
