# kubewin.nodes script: docker_state
# Contract: parameter Service (Docker's service name). Result: {cli: docker.exe beside the service's dockerd.exe
# (the Docker installer puts both in one folder), or null when the service does not exist; names: the networks in
# Docker's own store, one per line of `docker network ls --format {{.Name}}`, or null with error saying why they
# could not be read (docker.exe missing, or its exit code and output: dockerd not running)}. Read-only.
[CmdletBinding(SupportsShouldProcess)]
param(
    [Parameter(Mandatory)][string]$Service
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

$Ansible.Changed = $false
$cli = Get-DockerCli $Service
$names = $null
$err = $null
if (-not $cli) {
    $err = "the service $Service does not exist"
} elseif (-not (Test-Path -LiteralPath $cli)) {
    $err = "$cli does not exist"
} else {
    $answer = Invoke-Docker $cli @('network', 'ls', '--format', '{{.Name}}')
    if ($answer.code -eq 0) {
        $names = @($answer.output | Where-Object { $_ })
    } else {
        $err = "docker network ls exited with code $($answer.code): $($answer.output -join ' ')"
    }
}
$Ansible.Result = @{ cli = $cli; names = $names; error = $err }
