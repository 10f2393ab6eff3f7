# kubewin.nodes script: boot
# Contract: no parameters, no result. Not run by a module: the scheduled task kubewin-boot (roles/network/tasks/
# boot.yml, on hosts whose container runtime is Docker) runs this file, C:\k\kubewin-boot.ps1, with powershell.exe
# -File at each boot, after its delay. It runs Start-Service kube-proxy, which starts the services it depends on that
# are stopped first (a dependency that failed at boot leaves its dependents stopped with error 1068, and their
# recovery actions do not apply; a service set to Disabled is refused and left so). Docker's NAT network "host"
# (hostNetwork pods' sandboxes) is not made here: the runtime role makes it through Docker, and dockerd re-creates a
# non-default NAT network of its own store that HNS lost at the reboot when it starts (moby daemon/daemon_windows.go
# initNetworkController). It writes a line to C:\var\log\kubelet\kubewin-boot.log; a failure ends the script with
# exit code 1 (the task's last result). It reads no credential and no file.
param()
$ErrorActionPreference = 'Stop'

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
