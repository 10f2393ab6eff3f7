# kubewin.nodes script: containerd_apply
# Contract: parameters Exe (containerd.exe), Files [{path, content (base64 UTF-8)}] (written, their directories
# made), Remove (files deleted), Register (run `containerd.exe --register-service`: the service containerd, for
# this program with --run-service, start type Automatic), Restart (stop, then start: the configuration changed),
# Start (Start-Service), Service (its name). Result: {register_code, register_output: the registration's exit code
# (null when it did not run) and output lines}. Whether that is a failure is decided on the controller.
param(
    [Parameter(Mandatory)][string]$Exe,
    [object[]]$Files = @(),
    [string[]]$Remove = @(),
    [bool]$Register = $false,
    [bool]$Restart = $false,
    [bool]$Start = $false,
    [Parameter(Mandatory)][string]$Service
)
$ErrorActionPreference = 'Stop'

$result = @{ register_code = $null; register_output = @() }
foreach ($file in $Files) {
    New-Item -ItemType Directory -Path (Split-Path -Parent $file.path) -Force | Out-Null
    [System.IO.File]::WriteAllBytes($file.path, [System.Convert]::FromBase64String($file.content))
}
foreach ($path in $Remove) {
    if (Test-Path -LiteralPath $path -PathType Leaf) { Remove-Item -LiteralPath $path -Force }
}
if ($Register) {
    $ErrorActionPreference = 'Continue'
    $result.register_output = @(& $Exe --register-service 2>&1 | ForEach-Object { "$_" })
    $result.register_code = $LASTEXITCODE
    $ErrorActionPreference = 'Stop'
    if ($result.register_code -ne 0) {
        $Ansible.Result = $result
        return
    }
}
if ($Restart) { Stop-Service -Name $Service -Force }
if ($Restart -or $Start) { Start-Service -Name $Service }
$Ansible.Result = $result
