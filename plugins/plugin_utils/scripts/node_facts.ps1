# kubewin.nodes script: node_facts
# Contract: parameters Paths (files whose existence matters) and Services (names).
# Result: {computer_name, hostname, version: {major, minor, build, ubr}, adapters: [{name, mac, ipv4: [..],
# ipv4_cidr: ['<address>/<PrefixLength>', ..]}],
# pipes: [names under \\.\pipe\ that matter], services: {name: {exists, status, image_path, version_output}},
# paths: {path: bool}}. version_output is what the service's program prints for --version (runtimes only).
# definition (services in DefinitionOf only): the service's registry definition as service_state returns it (less
# flags_file_content), or null: the roles' first look at a service nothing in the run has touched yet.
# flags_file_content: the text of FlagsFile (kubeadm-flags.env), null when there is no such file.
# config_dump (services in ConfigDumpOf only): what `<program> [--config <file>] config dump` printed, the
# --config value taken from the service's ImagePath with ConfigFlagPattern (group 1), or "error: ...".
# cni_conf_files: {directory: [file names]} of each directory in CniConfDirs and of the conf_dir ConfDirPattern
# finds in containerd's config dump (group 1 a TOML literal string, group 2 a basic one, whose \\ is one \) and
# DockerConfDirPattern in cri-dockerd's ImagePath (group 1, maybe quoted);
# a missing directory lists as empty. What a runtime would load besides 10-flannel.conf is judged on the controller.
# firewall_rules: [{name, description, direction, action, protocol, local_ports, remote_addresses, profiles, enabled}]
# of the rules whose names match FirewallRulePattern (none when it is empty), as INetFwRule holds them.
# firewall_error: null, or why the rules could not be read (firewall_rules is then empty and means nothing).
# images (only when Crictl is given): {code: the exit code of `<Crictl> --config <CrictlConfig> images -o json`, null
# when Crictl does not exist; output: its stdout} (kubewin_prepull_images: what the host has, judged on the controller).
# machine_path: the machine-scope Path, expanded (what a process started after a reboot or a new logon sees).
# transport_key: RSA.ToXmlString($false) of the key secrets are sealed to (plugin_utils/_host/sealed.py): RSA
# 2048 in the machine key store, container kubewin.nodes-transport, not exportable, owner Administrators and
# access SYSTEM and Administrators only (CspParameters.CryptoKeySecurity); null until a run that sends a secret made
# it (MakeTransportKey, asked for by that run's first secret write only: a read, a --check run or a run refused by
# preflight changes nothing on the host). A container of that name made by anyone else (another owner) or exportable
# is refused: its maker could open what is sealed to it.
[CmdletBinding(SupportsShouldProcess)]
param(
    [string[]]$Paths = @(),
    [string[]]$Services = @(),
    [string[]]$VersionOf = @(),
    [string[]]$DefinitionOf = @(),
    [string[]]$ConfigDumpOf = @(),
    [string]$ConfigFlagPattern = '',
    [string[]]$CniConfDirs = @(),
    [string]$ConfDirPattern = '',
    [string]$DockerConfDirPattern = '',
    [bool]$MakeTransportKey = $false,
    [string]$FirewallRulePattern = '',
    [string]$FlagsFile = '',
    [string]$Crictl = '',
    [string]$CrictlConfig = ''
)
$ErrorActionPreference = 'Stop'
$Ansible.Changed = $false

# service_state's function, the same text (tests/unit/psgate/test_win_scripts_text.py)
function Get-ServiceDefinition([string]$Name) {
    $service = Get-Service -Name $Name -ErrorAction SilentlyContinue
    if (-not $service) { return $null }
    $key = Get-Item -LiteralPath "HKLM:\SYSTEM\CurrentControlSet\Services\$($service.Name)"
    $failure = $key.GetValue('FailureActions', $null)
    $definition = @{ exists = $true; status = $service.Status.ToString() }
    $definition.image_path = $key.GetValue('ImagePath', '', 'DoNotExpandEnvironmentNames')
    $definition.start = $key.GetValue('Start', $null)
    $definition.delayed_autostart = $key.GetValue('DelayedAutostart', 0)
    $definition.dependencies = @($key.GetValue('DependOnService', @()))
    $definition.display_name = $key.GetValue('DisplayName', '')
    $definition.description = $key.GetValue('Description', '')
    $definition.object_name = $key.GetValue('ObjectName', '')
    $definition.environment = @($key.GetValue('Environment', @()))
    $definition.parameters = @{}
    $paramsKey = "HKLM:\SYSTEM\CurrentControlSet\Services\$($service.Name)\Parameters"
    $params = Get-Item -LiteralPath $paramsKey -ErrorAction SilentlyContinue
    if ($params) {
        foreach ($value in $params.GetValueNames()) { $definition.parameters[$value] = $params.GetValue($value) }
    }
    $definition.failure_actions = if ($failure) { [Convert]::ToBase64String($failure) } else { $null }
    $definition.failure_actions_on_non_crash = $key.GetValue('FailureActionsOnNonCrashFailures', $null)
    $definition
}

$nt = Get-ItemProperty -LiteralPath 'HKLM:\SOFTWARE\Microsoft\Windows NT\CurrentVersion'
$adapters = foreach ($nic in (Get-NetAdapter | Where-Object Status -eq 'Up')) {
    $addresses = @(Get-NetIPAddress -InterfaceIndex $nic.ifIndex -AddressFamily IPv4 -ErrorAction SilentlyContinue |
        Where-Object { $_.IPAddress -notlike '169.254.*' })
    $ips = @($addresses | ForEach-Object IPAddress)
    $cidrs = @($addresses | ForEach-Object { "$($_.IPAddress)/$($_.PrefixLength)" })
    @{ name = $nic.Name; mac = $nic.MacAddress; ipv4 = $ips; ipv4_cidr = $cidrs }
}
$serviceFacts = @{}
foreach ($name in $Services) {
    $svc = Get-Service -Name $name -ErrorAction SilentlyContinue
    $entry = @{ exists = [bool]$svc; status = $null; image_path = $null; version_output = $null; definition = $null }
    if ($svc) {
        if ($name -in $DefinitionOf) { $entry.definition = Get-ServiceDefinition $name }
        $entry.status = $svc.Status.ToString()
        $key = Get-ItemProperty -LiteralPath "HKLM:\SYSTEM\CurrentControlSet\Services\$($svc.Name)"
        $entry.image_path = $key.ImagePath
        if ($name -in $VersionOf) {
            $path = $entry.image_path
            $exe = if ($path.StartsWith('"')) { $path.Split('"')[1] } else { $path.Split(' ')[0] }
            try {
                $ErrorActionPreference = 'Continue'  # 5.1: a stderr line must not end the script
                $entry.version_output = (& $exe --version 2>&1 | ForEach-Object { "$_" }) -join "`n"
            } catch {
                $entry.version_output = "error: $_"  # a broken runtime is reported, not fatal
            } finally {
                $ErrorActionPreference = 'Stop'
            }
        }
    }
    if ($svc -and $name -in $ConfigDumpOf) {
        $image = [string]$entry.image_path
        $program = if ($image.StartsWith('"')) { $image.Split('"')[1] } else { $image.Split(' ')[0] }
        $dumpArgs = @()
        if ($ConfigFlagPattern -and $image -match $ConfigFlagPattern) {
            $dumpArgs = @('--config', $Matches[1].Trim('"'))
        }
        $entry.config_dump = & {
            # containerd logs warnings to stderr; under 'Stop' Windows PowerShell 5.1 would throw on them.
            $ErrorActionPreference = 'Continue'
            try {
                $text = & $program @dumpArgs config dump 2>&1 |
                    Where-Object { $_ -isnot [System.Management.Automation.ErrorRecord] } | Out-String
                if ($LASTEXITCODE -ne 0) { "error: exit code $LASTEXITCODE" } else { $text }
            } catch {
                "error: $_"
            }
        }
    }
    $serviceFacts[$name] = $entry
}
$confDirs = @($CniConfDirs)
$containerdFacts = $serviceFacts['containerd']
if ($containerdFacts -and $ConfDirPattern -and ([string]$containerdFacts.config_dump) -match $ConfDirPattern) {
    $confDirs += if ($Matches[1]) { $Matches[1] } else { $Matches[2].Replace('\\', '\') }
}
$dockerdFacts = $serviceFacts['cri-dockerd']
if ($dockerdFacts -and $DockerConfDirPattern -and ([string]$dockerdFacts.image_path) -match $DockerConfDirPattern) {
    $confDirs += $Matches[1].Trim('"')
}
$confFiles = @{}
foreach ($dir in $confDirs) {
    $confFiles[$dir] = @()
    if ($dir -and (Test-Path -LiteralPath $dir -PathType Container)) {
        $confFiles[$dir] = @(Get-ChildItem -LiteralPath $dir -Force | Where-Object { -not $_.PSIsContainer } |
            ForEach-Object Name)
    }
}
# The firewall rules whose names match FirewallRulePattern (-like): INetFwPolicy2's Rules, each with the INetFwRule
# properties community.windows' win_firewall_rule compares (Microsoft Learn, "INetFwPolicy2 interface", "INetFwRule
# interface"); what they mean is decided on the controller (plugin_utils/_host/firewall.py).
# The API needs the Windows Defender Firewall service (MpsSvc): stopped or unavailable, creating the policy, reading
# Rules or enumerating them fails (RPC 0x800706D9, "no more endpoints available from the endpoint mapper"). That is
# reported, not fatal: the rules are then unknown and the roles run win_firewall_rule (reset goes on without them).
$firewallRules = @()
$firewallError = $null
if ($FirewallRulePattern) {
    try {
        $policy = New-Object -ComObject HNetCfg.FwPolicy2
        foreach ($rule in $policy.Rules) {
            if ($rule.Name -like $FirewallRulePattern) {
                $firewallRules += @{ name = $rule.Name; description = $rule.Description
                    direction = [int]$rule.Direction; action = [int]$rule.Action; protocol = [int]$rule.Protocol
                    local_ports = $rule.LocalPorts; remote_addresses = $rule.RemoteAddresses
                    profiles = [int]$rule.Profiles; enabled = [bool]$rule.Enabled }
            }
        }
    } catch {
        $firewallRules = @()
        $firewallError = "$_"
    }
}
$flagsFileContent = $null
if ($FlagsFile -and (Test-Path -LiteralPath $FlagsFile -PathType Leaf)) {
    $flagsFileContent = [System.IO.File]::ReadAllText($FlagsFile)
}
$pathFacts = @{}
foreach ($path in $Paths) { $pathFacts[$path] = Test-Path -LiteralPath $path }
# An existing container is opened first without CryptoKeySecurity: .NET Framework applies the parameters'
# CryptoKeySecurity to a container it opens too, which would make one another user planted look like ours.
$cspParams = New-Object System.Security.Cryptography.CspParameters
$cspParams.KeyContainerName = 'kubewin.nodes-transport'
$cspParams.Flags = [System.Security.Cryptography.CspProviderFlags]'UseMachineKeyStore, UseExistingKey'
try {
    $transport = New-Object System.Security.Cryptography.RSACryptoServiceProvider($cspParams)
} catch {
    # none yet ("Keyset does not exist"): made below. Not only that failure lands here: the second attempt then
    # applies its CryptoKeySecurity to whatever container it opens and makes a key where there is none
    # (referencesource cryptography/utils.cs GetKeyPairHelper); the owner check below still refuses a planted one
    $transport = $null
}
if (-not $transport -and $MakeTransportKey) {
    # owner and access only: the one-argument form marks every section changed, and writing the audit section
    # (SACL) needs SeSecurityPrivilege (referencesource objectsecurity.cs, cryptography/utils.cs SetKeySetSecurityInfo)
    $keySecurity = New-Object System.Security.AccessControl.CryptoKeySecurity
    $keySecurity.SetSecurityDescriptorSddlForm('O:BAD:P(A;;GA;;;SY)(A;;GA;;;BA)', 'Owner, Access')
    $cspParams.Flags = [System.Security.Cryptography.CspProviderFlags]'UseMachineKeyStore, UseNonExportableKey'
    $cspParams.CryptoKeySecurity = $keySecurity
    $transport = New-Object System.Security.Cryptography.RSACryptoServiceProvider(2048, $cspParams)
}
$keyInfo = if ($transport) { $transport.CspKeyContainerInfo } else { $null }
# the owner of the container's file, not CspKeyContainerInfo.CryptoKeySecurity: that getter reads every section,
# the SACL too, which needs SeSecurityPrivilege (icspasymmetricalgorithm.cs, utils.cs GetKeySetSecurityInfo)
$keyOwner = if ($keyInfo) {
    $keyFile = 'C:\ProgramData\Microsoft\Crypto\RSA\MachineKeys\' + $keyInfo.UniqueKeyContainerName
    try {
        (Get-Item -LiteralPath $keyFile -Force).GetAccessControl('Owner').GetSecurityDescriptorSddlForm('Owner')
    } catch { 'unreadable' }
}
if ($keyInfo -and ($keyInfo.Exportable -or $keyOwner -notin @('O:BA', 'O:SY'))) {
    throw ("the machine key container kubewin.nodes-transport was not made by kubewin.nodes (owner " +
        "$keyOwner, exportable $($keyInfo.Exportable)): whoever made it could read the secrets sent to this " +
        "host; delete it (its file is in C:\ProgramData\Microsoft\Crypto\RSA\MachineKeys), then re-run")
}
$images = $null
if ($Crictl) {
    $images = @{ code = $null; output = '' }
    if (Test-Path -LiteralPath $Crictl -PathType Leaf) {
        $ErrorActionPreference = 'Continue'  # 5.1: crictl's stderr lines must not end the script
        $images.output = (& $Crictl --config $CrictlConfig images -o json 2>&1 |
            ForEach-Object { "$_" }) -join "`n"
        $images.code = $LASTEXITCODE
        $ErrorActionPreference = 'Stop'
    }
}
$Ansible.Result = @{
    images = $images
    computer_name = $env:COMPUTERNAME
    hostname = [System.Net.Dns]::GetHostName()
    version = @{ major = $nt.CurrentMajorVersionNumber; minor = $nt.CurrentMinorVersionNumber
                 build = $nt.CurrentBuildNumber; ubr = $nt.UBR }
    adapters = @($adapters)
    # only the pipes that matter are probed: listing \\.\pipe\ throws on names .NET rejects
    pipes = @(@('containerd-containerd', 'docker_engine', 'cri-dockerd') |
        Where-Object { Test-Path -LiteralPath "\\.\pipe\$_" })
    services = $serviceFacts
    paths = $pathFacts
    cni_conf_files = $confFiles
    machine_path = [Environment]::GetEnvironmentVariable('Path', 'Machine')
    transport_key = if ($transport) { $transport.ToXmlString($false) } else { $null }
    firewall_rules = @($firewallRules)
    firewall_error = $firewallError
    flags_file_content = $flagsFileContent
}
