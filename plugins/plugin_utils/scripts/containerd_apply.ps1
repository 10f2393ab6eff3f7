# kubewin.nodes script: containerd_apply
# Contract: parameters Exe (containerd.exe), Files [{path, content (base64 UTF-8)}] (written, their directories
# made), Remove (files deleted), LogDir (made: containerd does not make its --log-file's directory and would not
# start), Register (run `containerd.exe` with RegisterArgs, --register-service and its --log-file: the service
# containerd, for this program with --run-service and those arguments, start type Automatic), ImagePath (the existing
# service's command line changed to it in place, Win32_Service.Change: an earlier registration without --log-file),
# Restart (stop, then start: the configuration or the ImagePath changed), Start (Start-Service), Service (its name),
# Crictl and Endpoint
# (after a restart or start, `crictl --runtime-endpoint <Endpoint> version` is run once a second until it exits 0 or
# WaitSeconds passed; 0: not run; -1 when Crictl does not exist). Result:
# {register_code, register_output: the registration's exit code (null when it did not run) and output lines;
# change_code: Win32_Service.Change's ReturnValue (null when it did not run); verify_code, verify_output: crictl's last
# exit code (null when not run) and output lines; restarted_dependents: the services a restart stopped with it and
# started again, also when a step failed; dependent_errors: "<name>: <error>" of those that did not start}. Whether that is a
# failure is decided on the controller. Stop (instead of all that: containerd stopped for its programs to be
# replaced): while the service runs, `crictl --runtime-endpoint <Endpoint> --timeout 120s rmp --all --force` (each
# pod sandbox stopped and removed, so no containerd-shim-runhcs-v1.exe keeps running), then Stop-Service; then, also
# when the service was stopped already, the processes named Shim (containerd-shim-runhcs-v1) listed once a second until
# there are none or ShimWaitSeconds passed; {rmp_code, rmp_output: crictl's exit code (null when it did not run) and
# output lines; status: the service's at the end; shims: the PIDs of Shim still running (not read when the service
# did not stop)}.
param(
    [string]$Exe = '',
    [object[]]$Files = @(),
    [string[]]$Remove = @(),
    [string]$LogDir = '',
    [bool]$Register = $false,
    [string[]]$RegisterArgs = @(),
    [string]$ImagePath = '',
    [bool]$Restart = $false,
    [bool]$Start = $false,
    [Parameter(Mandatory)][string]$Service,
    [string]$Crictl = '',
    [string]$Endpoint = '',
    [int]$WaitSeconds = 0,
    [bool]$Stop = $false,
    [string]$Shim = '',
    [int]$ShimWaitSeconds = 0
)
$ErrorActionPreference = 'Stop'

if ($Stop) {
    $result = @{ rmp_code = $null; rmp_output = @(); status = $null }
    if ([string](Get-Service -Name $Service).Status -ne 'Stopped') {
        $ErrorActionPreference = 'Continue'
        # crictl's --timeout (default 2 s, cri-tools cmd/crictl/main.go) bounds each CRI call: stopping a Windows pod
        # (HNS endpoint, HCS stop) takes longer, and rmp would fail after the drain (review-s9 W1)
        $rmp = @('--runtime-endpoint', $Endpoint, '--timeout', '120s', 'rmp', '--all', '--force')
        $result.rmp_output = @(& $Crictl @rmp 2>&1 | ForEach-Object { "$_" })
        $result.rmp_code = $LASTEXITCODE
        $ErrorActionPreference = 'Stop'
        if ($result.rmp_code -eq 0) { Stop-Service -Name $Service }
    }
    $result.status = [string](Get-Service -Name $Service).Status
    # a pod's shim exits on its own after its removal (containerd does not wait for it), and the shims of containers in
    # other containerd namespaces (nerdctl, buildkit) keep running: one left keeps bin\ in use (review-s9 W8)
    $result.shims = @()
    if ($result.status -eq 'Stopped') {
        $clock = [System.Diagnostics.Stopwatch]::StartNew()
        while ($true) {
            $result.shims = @(Get-Process -Name $Shim -ErrorAction SilentlyContinue | ForEach-Object { $_.Id })
            if ($result.shims.Count -eq 0 -or $clock.ElapsedMilliseconds -ge ($ShimWaitSeconds * 1000)) { break }
            Start-Sleep -Seconds 1
        }
    }
    $Ansible.Result = $result
    return
}

$result = @{ register_code = $null; register_output = @(); change_code = $null; verify_code = $null
    verify_output = @() }
foreach ($file in $Files) {
    New-Item -ItemType Directory -Path (Split-Path -Parent $file.path) -Force | Out-Null
    [System.IO.File]::WriteAllBytes($file.path, [System.Convert]::FromBase64String($file.content))
}
foreach ($path in $Remove) {
    if (Test-Path -LiteralPath $path -PathType Leaf) { Remove-Item -LiteralPath $path -Force }
}
if ($LogDir) { New-Item -ItemType Directory -Path $LogDir -Force | Out-Null }
# Stop-Service -Force stops the dependent services first (the kubelet, and flanneld and kube-proxy after it) and
# leaves them stopped (ServiceController.Stop): those that were running are started again at the end, on every way
# out (finally), as service_apply's restart does, so a change does not leave the node without its kubelet.
$dependentsToStart = @()
if ($Restart) {
    $dependentsToStart = @((Get-Service -Name $Service).DependentServices | Where-Object Status -eq 'Running' |
        ForEach-Object Name)
}
try {
    if ($ImagePath) {
        # ChangeServiceConfig (Win32_Service.Change) in place: the recovery actions (ChangeServiceConfig2) stay, and
        # no DeleteService, which only marks the service while any handle is open (services.msc, an agent), so that
        # --register-service's CreateService would fail with 1072 and leave no containerd (review-s9 W4)
        $wmi = Get-CimInstance -ClassName Win32_Service | Where-Object { $_.Name -eq $Service }
        $result.change_code = (Invoke-CimMethod -InputObject $wmi -MethodName Change -Arguments @{
            PathName = $ImagePath }).ReturnValue
        if ($result.change_code -ne 0) { return }
    }
    if ($Register) {
        $ErrorActionPreference = 'Continue'
        $result.register_output = @(& $Exe @RegisterArgs 2>&1 | ForEach-Object { "$_" })
        $result.register_code = $LASTEXITCODE
        $ErrorActionPreference = 'Stop'
        if ($result.register_code -ne 0) { return }
    }
    if ($Restart) { Stop-Service -Name $Service -Force }
    if ($Restart -or $Start) { Start-Service -Name $Service }
    if (($Restart -or $Start) -and $WaitSeconds -gt 0 -and -not (Test-Path -LiteralPath $Crictl -PathType Leaf)) {
        $result.verify_code = -1
        $result.verify_output = @("$Crictl does not exist")
    } elseif (($Restart -or $Start) -and $WaitSeconds -gt 0) {
        $clock = [System.Diagnostics.Stopwatch]::StartNew()
        $ErrorActionPreference = 'Continue'
        while ($true) {
            $result.verify_output = @(& $Crictl --runtime-endpoint $Endpoint version 2>&1 | ForEach-Object { "$_" })
            $result.verify_code = $LASTEXITCODE
            if ($result.verify_code -eq 0 -or $clock.ElapsedMilliseconds -ge ($WaitSeconds * 1000)) { break }
            Start-Sleep -Seconds 1
        }
        $ErrorActionPreference = 'Stop'
    }
} finally {
    # each tried, none masking the error that ended the try (a failed start of containerd fails its dependents too)
    $result.dependent_errors = @()
    foreach ($dependent in $dependentsToStart) {
        try { Start-Service -Name $dependent } catch { $result.dependent_errors += "${dependent}: $_" }
    }
    $result.restarted_dependents = $dependentsToStart
    $Ansible.Result = $result
}
