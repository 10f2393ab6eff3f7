# kubewin.nodes script: node_sync
# Contract: parameters Dirs [{path, sddl}] (sddl: the owner and access rules 'O:BAD:P(...)', or empty for
# a plain directory), Discard (paths removed first: files another user owns, links), Downloads [{url, dest,
# sha512 or sha256, extract_dir, service}] (URL, UNC or local path; the checksum is checked before the file is put in
# place; with extract_dir the archive is unpacked there with tar.exe and dest is a stamp file holding the archive's
# checksum; service: the service that runs it, stopped just before the file is put in place if it runs, and left
# stopped), Files [{path, content (base64, or sealed: below), sddl}], Remove (paths, removed with everything in
# them), Prune (directories removed only when empty, in the order given), Proxy, ProxyBypass (list of regular
# expressions), RootSddl (what each directory Remove walks gets before it is listed), Owners (SDDL owners that
# are the collection's: Administrators, SYSTEM, TrustedInstaller; the connecting account is added),
# ForgetTransportKey (reset: delete this host's transport key, below, if there is one). Applied in that order.
# Result: {removed: [the paths of Remove and Prune that were there and are now gone, in that order], stopped: [the
# services of Downloads stopped before their program was replaced]}.
# Local users act between and during remote operations. A restricted directory is read back once secured or
# created (not a link, owner Administrators, protected access rules: Directory.CreateDirectory returns an
# existing directory as it is, Microsoft Learn), and one that was not protected before (Dirs' scan) is listed
# once nobody else can add to it: a link or what another owner has there stops the run. Remove makes each
# directory the collection's (RootSddl) before it lists it, so nobody else can put a junction in place of what
# was listed (Microsoft Learn, "Hard Links and Junctions": a junction is resolved each time a path is opened),
# and refuses a tree holding other owners' files before it deletes anything (a link is deleted itself). A protected
# subtree (the pods directory) keeps its own rules until the walk secures it, so what another user adds there after
# the check is deleted without being judged; it cannot redirect the walk. An existing directory another user owns
# is refused, never secured: security is set by name, which follows a junction its owner could swap in meanwhile.
# Temporary files get owner Administrators before they are put in place: without a security descriptor a file
# gets the token's default owner (Microsoft Learn, TOKEN_OWNER), the connecting account where "System objects:
# Default owner for objects created by members of the Administrators group" is "Object creator".
# A secret file's content arrives sealed to this host's transport key (plugin_utils/_host/sealed.py, made by
# node_facts): content 'sealed.<key>.<mac_key>.<iv>.<data>.<mac>', base64 each. key and mac_key are RSA-OAEP
# (SHA-1) ciphertexts of an AES-256 key and an HMAC-SHA256 key (RSACryptoServiceProvider.Decrypt(Byte[], $true));
# mac is HMAC-SHA256 over iv and data, checked first; data is AES-256-CBC with PKCS#7 padding
# (AesCryptoServiceProvider's default Mode and Padding). So module arguments, module logging and
# transcripts carry only ciphertext.
# Security: only the owner and access sections are written (never group or audit rules, which would need
# SeSecurityPrivilege), through .NET's SetAccessControl, which persists only the sections that were set
# (NativeObjectSecurity.Persist); not Set-Acl, which writes back the owner Get-Acl read and then fails with
# "The security identifier is not allowed to be the owner of this object" when that is another user.
# A missing directory is created with its final owner and access rules (Directory.CreateDirectory(path,
# DirectorySecurity): every directory it creates on the way gets them too), so nothing is ever written
# under inherited rules; an existing one gets them before anything is written into it, and a link there is
# refused. A file or download goes to a temporary file next to its destination first, which then replaces
# the destination in one step ([IO.File]::Replace, or a rename when there is none). A file with sddl is
# created with it (FileStream with FileSecurity), and an existing destination gets it before the new
# content replaces it (Replace keeps the destination's security). Remove and Discard never follow a
# junction or symbolic link: the link itself is deleted (RemoveDirectoryW / DeleteFileW on a reparse point
# remove the link, never its target: Microsoft Learn, RemoveDirectoryW remarks), while Windows PowerShell
# 5.1's Remove-Item -Recurse walks into a junction and deletes the target's content
# (PowerShell/PowerShell#621, scriptcs-contrib/svm#48).
param(
    [object[]]$Dirs = @(),
    [string[]]$Discard = @(),
    [object[]]$Downloads = @(),
    [object[]]$Files = @(),
    [string[]]$Remove = @(),
    [string[]]$Prune = @(),
    [string]$Proxy = '',
    [string[]]$ProxyBypass = @(),
    [string]$RootSddl = '',
    [string[]]$Owners = @(),
    [bool]$ForgetTransportKey = $false
)
$ErrorActionPreference = 'Stop'

function Set-Security([string]$Path, [string]$Sddl) {
    if (-not $Sddl) { return }
    $item = Get-Item -LiteralPath $Path -Force
    # a new descriptor, not the one on disk: reading that needs READ_CONTROL, which its owner may deny
    $security = if ($item.PSIsContainer) { New-Object System.Security.AccessControl.DirectorySecurity }
        else { New-Object System.Security.AccessControl.FileSecurity }
    $security.SetSecurityDescriptorSddlForm($Sddl, 'Owner, Access')
    try {
        $item.SetAccessControl($security)
    } catch [System.UnauthorizedAccessException] {
        # not /R: Administrators would own what others planted below, and the next check would accept it
        throw ("cannot make Administrators the owner of $Path (another user took away their access): run " +
            "takeown /F `"$Path`" /A as an administrator, then re-run")
    }
}

$self = [System.Security.Principal.WindowsIdentity]::GetCurrent().User.Value
$trusted = @($Owners) + @($self)
# the built-in Administrator account's SID is written 'LA' in SDDL
if ($self -match '-500$') { $trusted += 'LA' }

function Assert-Ours([string]$Path) {
    # Security is set by name (SetNamedSecurityInfo through SetAccessControl), which follows a junction put in
    # place meanwhile: whoever owns the directory may rename it away and put one there (Microsoft Learn, "Hard Links
    # and Junctions"), so a directory another user owns is refused, never secured (review R2).
    $owner = try { (Get-Item -LiteralPath $Path -Force).GetAccessControl('Owner').GetSecurityDescriptorSddlForm(
        'Owner').Substring(2) } catch { 'unreadable' }
    if ($owner -notin $trusted) {
        throw ("$Path belongs to $owner, not to Administrators or SYSTEM: kubewin.nodes does not secure or delete " +
            "a directory another user owns (they could put a junction in its place meanwhile). Run takeown /F " +
            "`"$Path`" /A as an administrator, check what it holds, then re-run")
    }
}

function Set-Owner([string]$Path) {
    # the owner only: .NET persists only the sections that were set, the access rules stay inherited
    $security = New-Object System.Security.AccessControl.FileSecurity
    $security.SetSecurityDescriptorSddlForm('O:BA', 'Owner')
    (Get-Item -LiteralPath $Path -Force).SetAccessControl($security)
}

function Set-OwnerBelow([string]$Root) {
    # what tar.exe made has the token's default owner (the connecting account under "Object creator": Microsoft
    # Learn, TOKEN_OWNER), which a reset run by another administrator takes for another user's (review R9): each
    # entry the connecting account owns gets owner Administrators; links are neither followed nor changed
    $pending = [System.Collections.Generic.Stack[string]]::new()
    $pending.Push($Root)
    while ($pending.Count -gt 0) {
        $below = $pending.Pop()
        foreach ($child in @(Get-ChildItem -LiteralPath $below -Force)) {
            if ($child.Attributes -band [System.IO.FileAttributes]::ReparsePoint) { continue }
            $owner = try { $child.GetAccessControl('Owner').GetSecurityDescriptorSddlForm('Owner').Substring(2) }
                catch { '' }
            if ($owner -eq $self -or ($owner -eq 'LA' -and $self -match '-500$')) { Set-Owner $child.FullName }
            if ($child.PSIsContainer) { $pending.Push($child.FullName) }
        }
    }
}

function Assert-Secured([string]$Path) {
    # read back (Get-Item does not follow a link): what another user put there meanwhile is not written into
    $item = Get-Item -LiteralPath $Path -Force
    if ($item.Attributes -band [System.IO.FileAttributes]::ReparsePoint) {
        throw "$Path became a junction or symbolic link while kubewin.nodes secured it: remove the link, then re-run"
    }
    $security = $item.GetAccessControl('Owner, Access')
    $owner = $security.GetSecurityDescriptorSddlForm('Owner')
    if ($owner -ne 'O:BA' -or -not $security.AreAccessRulesProtected) {
        throw ("$Path is not owned by Administrators with protected access rules after kubewin.nodes secured it " +
            "(another user made it meanwhile: $owner): check and delete it, then re-run")
    }
}

function Find-Foreign([string]$Root, [bool]$Links, [string[]]$Skip = @()) {
    # what owners outside $trusted have, and with $Links the links (never followed), at most 20. (A link's owner
    # is read through the link: Remove deletes a link itself, so there only what is not a link is judged.) $Skip:
    # directories not entered (the pods directory holds the kubelet's ..data links and containers' files).
    $hits = [System.Collections.Generic.List[string]]::new()
    $pending = [System.Collections.Generic.Stack[string]]::new()
    $pending.Push($Root)
    while ($pending.Count -gt 0 -and $hits.Count -lt 20) {
        $dir = $pending.Pop()
        try {
            $listed = @(Get-ChildItem -LiteralPath $dir -Force)
        } catch {
            $hits.Add("$dir (unreadable: run takeown /F `"$dir`" /A as an administrator and check it)")
            continue
        }
        foreach ($child in $listed) {
            if ($hits.Count -ge 20) { break }
            if ($child.FullName -in $Skip) { continue }
            $isLink = [bool]($child.Attributes -band [System.IO.FileAttributes]::ReparsePoint)
            $owner = try { $child.GetAccessControl('Owner').GetSecurityDescriptorSddlForm('Owner').Substring(2) }
                catch { 'unreadable' }
            if ($isLink) { if ($Links) { $hits.Add("$($child.FullName) (link)") } }
            elseif ($owner -notin $trusted) { $hits.Add("$($child.FullName) (owner $owner)") }
            if ($child.PSIsContainer -and -not $isLink) { $pending.Push($child.FullName) }
        }
    }
    , $hits.ToArray()
}

function Remove-Tree([string]$Path) {
    $item = Get-Item -LiteralPath $Path -Force
    if ($item.Attributes -band [System.IO.FileAttributes]::ReparsePoint) {
        # the link itself, never its target
        if ($item.PSIsContainer) { [System.IO.Directory]::Delete($Path, $false) } else {
            [System.IO.File]::Delete($Path)
        }
    } elseif ($item.PSIsContainer) {
        # the collection's before it is listed: nobody else can then put a link in place of what is listed
        Set-Security $Path $RootSddl
        foreach ($child in @(Get-ChildItem -LiteralPath $Path -Force)) { Remove-Tree $child.FullName }
        Remove-Item -LiteralPath $Path -Force
    } else {
        Remove-Item -LiteralPath $Path -Force
    }
}

function Install-File([string]$Source, [string]$Destination) {
    if (Test-Path -LiteralPath $Destination -PathType Leaf) {
        [System.IO.File]::Replace($Source, $Destination, [NullString]::Value)
    } else {
        [System.IO.File]::Move($Source, $Destination)
    }
}

# before any change: an existing restricted directory another user owns is refused (Assert-Ours), not adopted
foreach ($wanted in $Dirs) {
    if ($wanted.sddl -and (Test-Path -LiteralPath $wanted.path -PathType Container)) { Assert-Ours $wanted.path }
}
foreach ($dir in $Dirs) {
    if (-not $dir.sddl) {
        New-Item -ItemType Directory -Path $dir.path -Force | Out-Null
    } elseif (Test-Path -LiteralPath $dir.path) {
        $item = Get-Item -LiteralPath $dir.path -Force
        if ($item.Attributes -band [System.IO.FileAttributes]::ReparsePoint) {
            throw ("$($dir.path) is a junction, symbolic link or volume mount point (a reparse point): not " +
                "following it")
        }
        if (-not $item.PSIsContainer) { throw "$($dir.path) is a file, not a directory: move it away, then re-run" }
        Assert-Ours $dir.path
        Set-Security $dir.path $dir.sddl
    } else {
        $security = New-Object System.Security.AccessControl.DirectorySecurity
        $security.SetSecurityDescriptorSddlForm($dir.sddl, 'Owner, Access')
        [System.IO.Directory]::CreateDirectory($dir.path, $security) | Out-Null
    }
    if ($dir.sddl) {
        Assert-Secured $dir.path
        if ($dir.scan) {
            $found = Find-Foreign $dir.path $true @($dir.skip)
            if ($found.Count -gt 0) {
                throw ("$($dir.path) was not protected (another owner or loose access rules) and holds what another " +
                    "user made or linked: $($found -join ', '). Programs there run as SYSTEM, so kubewin.nodes does " +
                    "not adopt them: delete them (links with cmd /c rmdir or del, which leave their targets alone), " +
                    "then re-run")
            }
        }
    }
}
foreach ($path in $Discard) {
    # Get-Item, as files_state found it: a dangling link is there too
    if (Get-Item -LiteralPath $path -Force -ErrorAction SilentlyContinue) { Remove-Tree $path }
}
$stopped = [System.Collections.Generic.List[string]]::new()
foreach ($download in $Downloads) {
    $tmp = "$($download.dest).kubewin-download"
    New-Item -ItemType Directory -Path (Split-Path -Parent $download.dest) -Force | Out-Null
    if ($download.url -match '^(\\\\|[A-Za-z]:\\)') {
        Copy-Item -LiteralPath $download.url -Destination $tmp -Force
    } else {
        $client = New-Object System.Net.WebClient
        if ($Proxy) { $client.Proxy = New-Object System.Net.WebProxy($Proxy, $true, $ProxyBypass) }
        $client.DownloadFile($download.url, $tmp)
    }
    Set-Owner $tmp
    $algorithm = 'SHA512'
    $want = $download.sha512
    if ($download.sha256) {
        $algorithm = 'SHA256'
        $want = $download.sha256
    }
    $hash = (Get-FileHash -LiteralPath $tmp -Algorithm $algorithm).Hash.ToLowerInvariant()
    if ($hash -ne $want) {
        Remove-Item -LiteralPath $tmp -Force
        throw "checksum mismatch for $($download.url): expected $($algorithm.ToLowerInvariant()) $want, got $hash"
    }
    if ($download.service) {
        # Windows maps a running program's file without FILE_SHARE_WRITE, so it cannot be replaced while it runs.
        # Without -Force, Stop-Service refuses while a dependent service runs.
        $service = Get-Service -Name $download.service -ErrorAction SilentlyContinue | Select-Object -First 1
        if ($service -and $service.Status -ne 'Stopped') {
            Stop-Service -Name $download.service
            $stopped.Add($download.service)
        }
    }
    if ($download.extract_dir) {
        New-Item -ItemType Directory -Path $download.extract_dir -Force | Out-Null
        # 5.1 makes each stderr line (a bsdtar warning too) an error record: decide on the exit code only
        $ErrorActionPreference = 'Continue'
        $tarOutput = (& tar.exe -xf $tmp -C $download.extract_dir 2>&1 | ForEach-Object { "$_" }) -join "`n"
        $tarExit = $LASTEXITCODE
        $ErrorActionPreference = 'Stop'
        if ($tarExit -ne 0) { throw "tar.exe could not unpack $($download.url) (exit code ${tarExit}): $tarOutput" }
        Set-OwnerBelow $download.extract_dir
        Remove-Item -LiteralPath $tmp -Force
        [System.IO.File]::WriteAllText($tmp, $want)
        Set-Owner $tmp
        Install-File $tmp $download.dest
    } else {
        Install-File $tmp $download.dest
    }
}
$transport = $null
foreach ($file in $Files) {
    New-Item -ItemType Directory -Path (Split-Path -Parent $file.path) -Force | Out-Null
    $sealed = $file.content.Split('.')
    if ($sealed.Count -eq 6 -and $sealed[0] -eq 'sealed') {
        if (-not $transport) {
            $cspParams = New-Object System.Security.Cryptography.CspParameters
            $cspParams.KeyContainerName = 'kubewin.nodes-transport'
            $cspParams.Flags = [System.Security.Cryptography.CspProviderFlags]'UseMachineKeyStore, UseExistingKey'
            $transport = New-Object System.Security.Cryptography.RSACryptoServiceProvider($cspParams)
        }
        $sealedIv = [Convert]::FromBase64String($sealed[3])
        $sealedData = [Convert]::FromBase64String($sealed[4])
        $hmac = New-Object System.Security.Cryptography.HMACSHA256
        $hmac.Key = $transport.Decrypt([Convert]::FromBase64String($sealed[2]), $true)
        $mac = $hmac.ComputeHash([byte[]]($sealedIv + $sealedData))
        $hmac.Dispose()
        # bytes, every one of them compared (base64 is case-sensitive; -ne on strings is not)
        $expected = [Convert]::FromBase64String($sealed[5])
        $same = $mac.Length -eq $expected.Length
        $at = 0
        foreach ($macByte in $mac) {
            if ($at -ge $expected.Length -or $macByte -ne $expected[$at]) { $same = $false }
            $at++
        }
        if (-not $same) { throw "the sealed content for $($file.path) does not verify (damaged in transit): re-run" }
        $aes = New-Object System.Security.Cryptography.AesCryptoServiceProvider
        $aes.Key = $transport.Decrypt([Convert]::FromBase64String($sealed[1]), $true)
        $aes.IV = $sealedIv
        $decryptor = $aes.CreateDecryptor()
        $bytes = $decryptor.TransformFinalBlock($sealedData, 0, $sealedData.Length)
        $decryptor.Dispose()
        $aes.Dispose()
    } else {
        $bytes = [Convert]::FromBase64String($file.content)
    }
    $tmp = "$($file.path).kubewin-new"
    if (Test-Path -LiteralPath $tmp) { Remove-Item -LiteralPath $tmp -Force }
    if ($file.sddl) {
        $security = New-Object System.Security.AccessControl.FileSecurity
        $security.SetSecurityDescriptorSddlForm($file.sddl, 'Owner, Access')
        # created with its final owner and access rules: .NET Framework's FileStream(..., FileSecurity)
        $stream = New-Object System.IO.FileStream($tmp, [System.IO.FileMode]::CreateNew,
            [System.Security.AccessControl.FileSystemRights]::Write, [System.IO.FileShare]::None, 4096,
            [System.IO.FileOptions]::None, $security)
        try { $stream.Write($bytes, 0, $bytes.Length) } finally { $stream.Dispose() }
        if (Test-Path -LiteralPath $file.path -PathType Leaf) { Set-Security $file.path $file.sddl }
    } else {
        [System.IO.File]::WriteAllBytes($tmp, $bytes)
        Set-Owner $tmp
    }
    Install-File $tmp $file.path
}
$removed = [System.Collections.Generic.List[string]]::new()
foreach ($path in $Remove) {
    $item = Get-Item -LiteralPath $path -Force -ErrorAction SilentlyContinue
    if (-not $item) { continue }
    if ($item.PSIsContainer -and -not ($item.Attributes -band [System.IO.FileAttributes]::ReparsePoint)) {
        # the root first (then nobody else can add to it, except in a protected subtree such as the pods
        # directory, whose rules it keeps until the walk secures it: what is added there meanwhile is deleted
        # unjudged, but cannot redirect, since each directory is secured before it is listed), then the walk
        Assert-Ours $path
        Set-Security $path $RootSddl
        $found = Find-Foreign $path $false
        if ($found.Count -gt 0) {
            throw ("$path holds what another user made: $($found -join ', '). kubewin.nodes deletes only what is " +
                "its own: delete or move them yourself, then re-run")
        }
    }
    Remove-Tree $path
    $removed.Add($path)
}
foreach ($path in $Prune) {
    if ((Test-Path -LiteralPath $path -PathType Container) -and
        -not (Get-ChildItem -LiteralPath $path -Force | Select-Object -First 1)) {
        Remove-Item -LiteralPath $path -Force
        $removed.Add($path)
    }
}
# Reset leaves no key behind: the container is opened only if it exists (UseExistingKey), and a key that is not
# persisted is deleted with its container when the object is cleared (Microsoft Learn,
# RSACryptoServiceProvider.PersistKeyInCsp, example RSADeleteKeyInCSP: PersistKeyInCsp = false, then Clear()).
if ($ForgetTransportKey) {
    $forgetParams = New-Object System.Security.Cryptography.CspParameters
    $forgetParams.KeyContainerName = 'kubewin.nodes-transport'
    $forgetParams.Flags = [System.Security.Cryptography.CspProviderFlags]'UseMachineKeyStore, UseExistingKey'
    try {
        $forget = New-Object System.Security.Cryptography.RSACryptoServiceProvider($forgetParams)
    } catch {
        $forget = $null  # none ("Keyset does not exist"): nothing to delete
    }
    if ($forget) {
        $forget.PersistKeyInCsp = $false
        $forget.Clear()
    }
}
$Ansible.Result = @{ removed = $removed.ToArray(); stopped = $stopped.ToArray() }
