# kubewin.nodes script: boot
# Contract: no parameters, no result. Not run by a module: the scheduled task kubewin-boot (roles/network/tasks/
# boot.yml, on hosts whose container runtime is Docker) runs this file, C:\k\kubewin-boot.ps1, with powershell.exe
# -File at each boot, after its delay. It runs Start-Service kube-proxy, which starts the services it depends on that
# are stopped first (a dependency that failed at boot leaves its dependents stopped with error 1068, and their
# recovery actions do not apply; a service set to Disabled is refused and left so). Docker's NAT network "host"
# (hostNetwork pods' sandboxes) is not made here: the runtime role makes it through Docker, and dockerd re-creates a
# non-default NAT network of its own store that HNS lost at the reboot when it starts (moby daemon/daemon_windows.go
# initNetworkController). Then it checks that Docker's store has "host" again (docker network ls): a dockerd that did
# not make it again (review-s7 D3) leaves hostNetwork pods unable to start, which the log says, with the fix, and the
# script ends with exit code 1. It writes a line for each step to C:\var\log\kubelet\kubewin-boot.log; a failure ends
# the script with exit code 1 (the task's last result). It reads no credential and no file.
param()
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
function Write-BootLog([string]$Message) {
    $line = '{0} {1}' -f [System.DateTime]::UtcNow.ToString('o'), $Message
    [System.IO.File]::AppendAllText('C:\var\log\kubelet\kubewin-boot.log', $line + "`r`n")
}

try {
    Start-Service -Name kube-proxy
    Write-BootLog 'kube-proxy and the services it depends on are started'
} catch {
    Write-BootLog "failed: $($_.Exception.Message)"
    throw
}

# Docker's network host, which dockerd makes again at its start from its own store (above)
$cli = Get-DockerCli 'docker'
if ($cli) {
    $answer = Invoke-Docker $cli @('network', 'ls', '--format', '{{.Name}}')
    if ($answer.code -ne 0) {
        $problem = "Docker's networks could not be read: docker network ls exited with code $($answer.code): " +
            ($answer.output -join ' ')
    } elseif (@($answer.output) -notcontains 'host') {
        $problem = "Docker's network host is missing after dockerd's start, so hostNetwork pods cannot start: run " +
            "playbooks/repair.yml for this node (or docker network create -d nat host)"
    } else {
        $problem = $null
        Write-BootLog "Docker's network host is there"
    }
    if ($problem) {
        Write-BootLog "failed: $problem"
        throw $problem
    }
}
