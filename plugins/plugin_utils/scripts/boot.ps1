# kubewin.nodes script: boot
# Contract: no parameters, no result. Not run by a module: the scheduled task kubewin-boot (roles/network/tasks/
# boot.yml, on hosts whose container runtime is Docker) runs this file, C:\k\kubewin-boot.ps1, with powershell.exe
# -File at each boot, after its delay. It (1) creates Docker's NAT network "host" when HNS lost it (a reboot drops
# NAT networks: kubernetes-sigs/sig-windows-tools#52, #128; nothing else recreates it, and the pause container needs
# it), then (2) runs Start-Service kube-proxy, which starts the services it depends on that are stopped first (a
# dependency that failed at boot leaves its dependents stopped with error 1068, and their recovery actions do not
# apply; a service set to Disabled is refused and left so). Each step writes a line to
# C:\var\log\kubelet\kubewin-boot.log; a failure ends the script with exit code 1 (the task's last result). It
# reads no credential and no file.
param()
$ErrorActionPreference = 'Stop'

function Write-BootLog([string]$Message) {
    $line = '{0} {1}' -f [System.DateTime]::UtcNow.ToString('o'), $Message
    [System.IO.File]::AppendAllText('C:\var\log\kubelet\kubewin-boot.log', $line + "`r`n")
}

# Shared P/Invoke for the HNS v1 API, the same entry point hns.psm1 and hcsshim use. HNSCall returns
# an HRESULT (hcsshim: ``_hnsCall(...) (hr error) = vmcompute.HNSCall?``); a failure, or an empty
# answer, ends the script with that error instead of handing null to ConvertFrom-Json. The type name
# differs from the former void signature, which a long-lived runspace may still hold. hns_state,
# hns_calls, boot, node_health and node_bundle carry the same copy (tests/unit/psgate/test_win_scripts_text.py keeps them equal).
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

try {
    $networks = (Invoke-Hns 'GET' '/networks/' '' | ConvertFrom-Json).Output
    if ($networks | Where-Object { $_.Name -eq 'host' }) {
        Write-BootLog 'the NAT network host is there'
    } else {
        $answer = Invoke-Hns 'POST' '/networks/' '{"Name":"host","Type":"NAT"}' | ConvertFrom-Json
        if (-not $answer.Success) { throw "HNS refused to create the NAT network host: $($answer.Error)" }
        Write-BootLog "the NAT network host was missing and is made again (ID $($answer.Output.ID))"
    }
    Start-Service -Name kube-proxy
    Write-BootLog 'kube-proxy and the services it depends on are started'
} catch {
    Write-BootLog "failed: $($_.Exception.Message)"
    throw
}
