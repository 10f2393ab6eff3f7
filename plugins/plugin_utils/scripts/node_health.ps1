# kubewin.nodes script: node_health
# Contract: parameters Services (names) and DockerService (Docker's service name; empty: not a Docker host). Result:
# {services: {name: {exists, status, start, delayed_autostart}}, networks: the raw JSON text HNS answered for GET on
# /networks/ ({"Success":..,"Output":[..]}), or null with hns_error saying why HNS could not be read; with
# DockerService, docker_networks: the names in Docker's own store (`docker network ls`, as docker_state reads them),
# or null with docker_error saying why}. Read-only: the health check's one remote operation per host.
[CmdletBinding(SupportsShouldProcess)]
param(
    [string[]]$Services = @(),
    [string]$DockerService = ''
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

# Shared P/Invoke for the HNS v1 API, the same entry point hns.psm1 and hcsshim use. HNSCall returns
# an HRESULT (hcsshim: ``_hnsCall(...) (hr error) = vmcompute.HNSCall?``); a failure, or an empty
# answer, ends the script with that error instead of handing null to ConvertFrom-Json. The type name
# differs from the former void signature, which a long-lived runspace may still hold. hns_state,
# hns_calls, node_health and node_bundle carry the same copy (tests/unit/psgate/test_win_scripts_text.py keeps them equal).
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

$Ansible.Changed = $false
$serviceFacts = @{}
foreach ($name in $Services) {
    $svc = Get-Service -Name $name -ErrorAction SilentlyContinue
    $entry = @{ exists = [bool]$svc; status = $null; start = $null; delayed_autostart = $null }
    if ($svc) {
        $key = Get-Item -LiteralPath "HKLM:\SYSTEM\CurrentControlSet\Services\$($svc.Name)"
        $entry.status = $svc.Status.ToString()
        $entry.start = $key.GetValue('Start', $null)
        $entry.delayed_autostart = $key.GetValue('DelayedAutostart', 0)
    }
    $serviceFacts[$name] = $entry
}
$networks = $null
$hnsError = $null
try {
    $networks = Invoke-Hns 'GET' '/networks/' ''
} catch {
    $hnsError = "$_"  # HNS stopped or missing is a finding, not the end of the check
}
$dockerNetworks = $null
$dockerError = $null
if ($DockerService) {
    $cli = Get-DockerCli $DockerService
    if (-not $cli) {
        $dockerError = "the service $DockerService does not exist"
    } elseif (-not (Test-Path -LiteralPath $cli)) {
        $dockerError = "$cli does not exist"
    } else {
        $answer = Invoke-Docker $cli @('network', 'ls', '--format', '{{.Name}}')
        if ($answer.code -eq 0) {
            $dockerNetworks = @($answer.output | Where-Object { $_ })
        } else {
            $dockerError = "docker network ls exited with code $($answer.code): $($answer.output -join ' ')"
        }
    }
}
$Ansible.Result = @{ services = $serviceFacts; networks = $networks; hns_error = $hnsError
    docker_networks = $dockerNetworks; docker_error = $dockerError }
