# kubewin.nodes script: docker_apply
# Contract: parameters Service (Docker's service name), Name (a network), Action: create runs `docker network create
# -d nat <Name>` (Docker's store and HNS), remove runs `docker network rm <Name>` (both). Result: {cli: docker.exe
# beside the service's dockerd.exe, or null when the service does not exist; code: docker.exe's exit code, null when
# it did not run; output: its output lines}. Whether that is a failure is decided on the controller.
param(
    [Parameter(Mandatory)][string]$Service,
    [Parameter(Mandatory)][string]$Name,
    [Parameter(Mandatory)][ValidateSet('create', 'remove')][string]$Action
)
$ErrorActionPreference = 'Stop'

# docker.exe beside the service's program (null: no such service). docker_state, docker_apply and node_health carry
# the same copy (tests/unit/psgate/test_win_scripts_text.py keeps them equal).
function Get-DockerCli([string]$Name) {
    $svc = Get-Service -Name $Name -ErrorAction SilentlyContinue
    if (-not $svc) { return $null }
    $path = (Get-ItemProperty -LiteralPath "HKLM:\SYSTEM\CurrentControlSet\Services\$($svc.Name)").ImagePath
    $exe = if ($path.StartsWith('"')) { $path.Split('"')[1] } else { $path.Split(' ')[0] }
    (Split-Path -Parent $exe) + '\docker.exe'
}

# docker.exe's exit code and output lines. Windows PowerShell 5.1 turns each stderr line of a native program into an
# error record, which 'Stop' would make fatal before the exit code is read.
function Invoke-Docker([string]$Cli, [string[]]$Arguments) {
    $ErrorActionPreference = 'Continue'
    $out = @(& $Cli @Arguments 2>&1 | ForEach-Object { "$_" })
    $code = $LASTEXITCODE
    $ErrorActionPreference = 'Stop'
    @{ code = $code; output = $out }
}

$cli = Get-DockerCli $Service
$result = @{ cli = $cli; code = $null; output = @() }
if ($cli -and (Test-Path -LiteralPath $cli)) {
    $arguments = if ($Action -eq 'create') { @('network', 'create', '-d', 'nat', $Name) } else { @('network', 'rm', $Name) }
    $answer = Invoke-Docker $cli $arguments
    $result.code = $answer.code
    $result.output = $answer.output
}
$Ansible.Changed = $result.code -eq 0
$Ansible.Result = $result
