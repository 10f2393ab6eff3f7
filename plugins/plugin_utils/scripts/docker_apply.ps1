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

# docker.exe beside the service's program (null: no such service). docker_state, docker_apply, node_health and
# boot carry the same copy (tests/unit/psgate/test_win_scripts_text.py keeps them equal).
function Get-DockerCli([string]$Name) {
    $svc = Get-Service -Name $Name -ErrorAction SilentlyContinue
    if (-not $svc) { return $null }
    $path = (Get-ItemProperty -LiteralPath "HKLM:\SYSTEM\CurrentControlSet\Services\$($svc.Name)").ImagePath
    $exe = if ($path.StartsWith('"')) { $path.Split('"')[1] } else { $path.Split(' ')[0] }
    (Split-Path -Parent $exe) + '\docker.exe'
}

# docker.exe's exit code and output lines (its standard output, then its standard error). Against Docker's own
# engine pipe, named with -H (docker CLI reference, "docker": -H, --host; Windows' default daemon
# npipe:////./pipe/docker_engine), whatever DOCKER_HOST or docker context the WinRM user has (review-s7 D2).
# Bounded (D1): a dockerd that does not answer makes docker.exe wait forever, so after 60 s it is killed and the
# answer is exit code 1460 (ERROR_TIMEOUT, Microsoft Learn, System Error Codes) with a line that says so. Run as a
# Process with both streams read at once (one read after the other can deadlock on a full pipe: Microsoft Learn,
# ProcessStartInfo.RedirectStandardError); WaitForExit() again after WaitForExit(ms) returned true, so the redirected
# output is complete (Process.WaitForExit).
# Its arguments are fixed words and Docker network names, without blanks or quotes (one with either is refused).
function Invoke-Docker([string]$Cli, [string[]]$Arguments) {
    $words = @('-H', 'npipe:////./pipe/docker_engine') + $Arguments
    foreach ($word in $words) {
        if (-not $word -or $word -match '[\s"]') {
            throw "docker.exe argument '$word' is empty or has a blank or a quote"
        }
    }
    $info = New-Object System.Diagnostics.ProcessStartInfo
    $info.FileName = $Cli
    $info.Arguments = $words -join ' '
    $info.UseShellExecute = $false
    $info.RedirectStandardOutput = $true
    $info.RedirectStandardError = $true
    $info.CreateNoWindow = $true
    $process = [System.Diagnostics.Process]::Start($info)
    $stdout = $process.StandardOutput.ReadToEndAsync()
    $stderr = $process.StandardError.ReadToEndAsync()
    if (-not $process.WaitForExit(60000)) {
        try { $process.Kill() } catch { Write-Verbose "docker.exe exited meanwhile: $_" }  # InvalidOperationException
        return @{ code = 1460; output = @("$Cli $($info.Arguments) did not finish within 60 s and was stopped: " +
            "dockerd does not answer on \\.\pipe\docker_engine (Restart-Service docker; its log is in the Application " +
            "event log, source docker)") }
    }
    $process.WaitForExit()
    $lines = @(($stdout.Result + "`n" + $stderr.Result) -split "`r?`n" | Where-Object { $_ })
    @{ code = $process.ExitCode; output = $lines }
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
