# kubewin.nodes script: files_state
# Contract: parameters Files (paths), Dirs (paths), Paths (paths), Acls (paths of files whose owner and
# access rules matter), Scan (directories to list) and Owners (SDDL owners Scan leaves out). Result:
# {files: {path: sha512 hex, "directory" (a directory is here), "unreadable" or null (absent, or a link:
# never read through)}, dirs: {path: SDDL of the owner and access rules ('O:BAD:P(...)'), "unreadable" or
# null}, paths: {path: "file", "dir", "empty-dir", "unreadable" or null}, acls: {path: SDDL of the file's
# owner and access rules, "unreadable" or null}, links: [paths of Files, Dirs, Paths and Acls that are
# reparse points], scan: {directory: [{path, owner, link}]}}: everything below a Scan directory that is a
# link (never followed) or whose owner is not in Owners ("unreadable" when its owner cannot be read), at
# most 20 each. "unreadable": Get-Item failed for another reason than ItemNotFoundException, or reading the
# security descriptor or the content failed (an owner who denies Administrators READ_CONTROL or read
# access); it is never taken for "absent". A reparse point is what FileAttributes.ReparsePoint marks:
# junctions, symbolic links and volume mount points (Microsoft Learn, System.IO.FileAttributes; "Determining
# Whether a Directory Is a Volume Mount Point": same IO_REPARSE_TAG_MOUNT_POINT tag as a junction).
[CmdletBinding(SupportsShouldProcess)]
param(
    [string[]]$Files = @(),
    [string[]]$Dirs = @(),
    [string[]]$Paths = @(),
    [string[]]$Acls = @(),
    [string[]]$Scan = @(),
    [string[]]$Owners = @()
)
$ErrorActionPreference = 'Stop'
$Ansible.Changed = $false
$links = [System.Collections.Generic.List[string]]::new()
function Get-Entry([string]$Path) {
    # $null when absent; the string 'unreadable' when Get-Item fails otherwise (never taken for absent)
    try { $item = Get-Item -LiteralPath $Path -Force -ErrorAction Stop }
    catch [System.Management.Automation.ItemNotFoundException] { return $null }
    catch { return 'unreadable' }
    if (($item.Attributes -band [System.IO.FileAttributes]::ReparsePoint) -and -not $links.Contains($Path)) {
        $links.Add($Path)
    }
    $item
}
function Get-Security($Item) {
    try { $Item.GetAccessControl('Owner, Access').GetSecurityDescriptorSddlForm('Owner, Access') }
    catch { 'unreadable' }
}
$pathKinds = @{}
foreach ($path in $Paths) {
    $item = Get-Entry $path
    $pathKinds[$path] = if ($item -is [string]) { $item } elseif (-not $item) { $null }
        elseif (-not $item.PSIsContainer) { 'file' }
        elseif (Get-ChildItem -LiteralPath $path -Force | Select-Object -First 1) { 'dir' }
        else { 'empty-dir' }
}
$fileHashes = @{}
foreach ($path in $Files) {
    $item = Get-Entry $path
    # a link is never read through (a dangling one cannot be); Get-FileHash's errors are non-terminating
    $fileHashes[$path] = if ($item -is [string]) { $item }
        elseif (-not $item -or $links.Contains($path)) { $null }
        elseif ($item.PSIsContainer) { 'directory' }
        else {
            try { (Get-FileHash -LiteralPath $path -Algorithm SHA512 -ErrorAction Stop).Hash.ToLowerInvariant() }
            catch { 'unreadable' }
        }
}
$dirAccess = @{}
foreach ($path in $Dirs) {
    $item = Get-Entry $path
    $dirAccess[$path] = if ($item -is [string]) { $item }
        elseif ($item -and $item.PSIsContainer) { Get-Security $item } else { $null }
}
$fileAccess = @{}
foreach ($path in $Acls) {
    $item = Get-Entry $path
    $fileAccess[$path] = if ($item -is [string]) { $item }
        elseif ($item -and -not $item.PSIsContainer) { Get-Security $item } else { $null }
}
$found = @{}
foreach ($root in $Scan) {
    $hits = [System.Collections.Generic.List[object]]::new()
    $pending = [System.Collections.Generic.Stack[string]]::new()
    $pending.Push($root)
    while ($pending.Count -gt 0 -and $hits.Count -lt 20) {
        $dir = $pending.Pop()
        try { $children = @(Get-ChildItem -LiteralPath $dir -Force) } catch {
            $hits.Add(@{ path = $dir; owner = 'unreadable'; link = $false }); continue
        }
        foreach ($child in $children) {
            if ($hits.Count -ge 20) { break }
            $isLink = [bool]($child.Attributes -band [System.IO.FileAttributes]::ReparsePoint)
            $owner = try { $child.GetAccessControl('Owner').GetSecurityDescriptorSddlForm('Owner').Substring(2) }
                catch { 'unreadable' }
            if ($isLink -or $owner -notin $Owners) {
                $hits.Add(@{ path = $child.FullName; owner = $owner; link = $isLink })
            }
            if ($child.PSIsContainer -and -not $isLink) { $pending.Push($child.FullName) }
        }
    }
    $found[$root] = $hits.ToArray()
}
$Ansible.Result = @{ files = $fileHashes; dirs = $dirAccess; paths = $pathKinds; acls = $fileAccess
                     links = $links.ToArray(); scan = $found }
