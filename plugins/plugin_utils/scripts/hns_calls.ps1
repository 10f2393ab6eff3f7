# kubewin.nodes script: hns_calls
# Contract: parameter Calls = list of {method, path, request} run in order, stopping after the
# first answer whose Success is false. Result: {responses: [raw JSON text of each answer]}.
param(
    [Parameter(Mandatory)][object[]]$Calls
)
$ErrorActionPreference = 'Stop'

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

$responses = [System.Collections.Generic.List[string]]::new()
foreach ($call in $Calls) {
    $response = Invoke-Hns $call.method $call.path $call.request
    $responses.Add($response)
    if (-not ($response | ConvertFrom-Json).Success) { break }
}
$Ansible.Result = @{ responses = $responses.ToArray() }
