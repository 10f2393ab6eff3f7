# kubewin.nodes script: image_pull
# Contract: parameters Crictl (crictl.exe), CrictlConfig (its crictl.yaml), Image (one image reference, checked on the
# controller), Pull (pull it when `crictl inspecti` does not find it; false in check mode), TimeoutSeconds (the pull is
# stopped after that long). Result: {present: `crictl inspecti` found the image before any pull; crictl: whether
# Crictl exists; code: the pull's exit code, null when none ran (1460, ERROR_TIMEOUT, when it was stopped); output:
# its output lines; seconds: how long it took}. Whether that is a failure is decided on the controller
# (plugin_utils/_host/images.py).
[CmdletBinding(SupportsShouldProcess)]
param(
    [Parameter(Mandatory)][string]$Crictl,
    [Parameter(Mandatory)][string]$CrictlConfig,
    [Parameter(Mandatory)][string]$Image,
    [bool]$Pull = $false,
    [int]$TimeoutSeconds = 600
)
$ErrorActionPreference = 'Stop'
$Ansible.Changed = $false

# crictl's exit code and output lines (standard output, then standard error), read at once (one stream after the other
# can deadlock on a full pipe: Microsoft Learn, ProcessStartInfo.RedirectStandardError); stopped after $Seconds with
# exit code 1460 (ERROR_TIMEOUT, Microsoft Learn, System Error Codes). The reference has no blank or quote (the
# controller checked it against the distribution reference grammar).
function Invoke-Crictl([string[]]$Arguments, [int]$Seconds) {
    $info = New-Object System.Diagnostics.ProcessStartInfo
    $info.FileName = $Crictl
    $info.Arguments = (@('--config', "`"$CrictlConfig`"") + $Arguments) -join ' '
    $info.UseShellExecute = $false
    $info.RedirectStandardOutput = $true
    $info.RedirectStandardError = $true
    $info.CreateNoWindow = $true
    $process = [System.Diagnostics.Process]::Start($info)
    $stdout = $process.StandardOutput.ReadToEndAsync()
    $stderr = $process.StandardError.ReadToEndAsync()
    if (-not $process.WaitForExit($Seconds * 1000)) {
        try { $process.Kill() } catch { Write-Verbose "crictl exited meanwhile: $_" }  # InvalidOperationException
        return @{ code = 1460; output = @("crictl $($Arguments -join ' ') did not finish within $Seconds s and was stopped") }
    }
    $process.WaitForExit()
    $lines = @(($stdout.Result + "`n" + $stderr.Result) -split "`r?`n" | Where-Object { $_ })
    @{ code = $process.ExitCode; output = $lines }
}

$result = @{ present = $false; crictl = $false; code = $null; output = @(); seconds = 0 }
if (Test-Path -LiteralPath $Crictl -PathType Leaf) {
    $result.crictl = $true
    $result.present = (Invoke-Crictl @('inspecti', '-q', $Image) 60).code -eq 0
    if ($Pull -and -not $result.present) {
        $watch = [System.Diagnostics.Stopwatch]::StartNew()
        $answer = Invoke-Crictl @('pull', $Image) $TimeoutSeconds
        $result.seconds = [int]$watch.Elapsed.TotalSeconds
        $result.code = $answer.code
        $result.output = $answer.output
        $Ansible.Changed = $answer.code -eq 0
    }
}
$Ansible.Result = $result
