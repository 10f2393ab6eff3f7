# kubewin.nodes script: files_state
# Contract: parameters Files (paths), Dirs (paths), Paths (paths), Acls (paths of files whose owner and
# access rules matter). Result:
# {files: {path: sha512 hex, "directory" (a directory is here), "unreadable" or null (absent, or a link:
# never read through)}, dirs: {path: SDDL of the owner and access rules ('O:BAD:P(...)'), "unreadable" or
# null}, paths: {path: "file", "dir", "empty-dir", "unreadable" or null}, acls: {path: SDDL of the file's
# owner and access rules, "unreadable" or null}, links: [paths of Files, Dirs, Paths and Acls that are
# reparse points]}. (What a directory that was not protected holds is listed by node_sync once it has
# secured it: listed here, what a user adds before node_sync would be adopted.) "unreadable": Get-Item failed for another reason than ItemNotFoundException, or reading the
# security descriptor or the content failed (an owner who denies Administrators READ_CONTROL or read
# access); it is never taken for "absent". A reparse point is what FileAttributes.ReparsePoint marks:
# junctions, symbolic links and volume mount points (Microsoft Learn, System.IO.FileAttributes; "Determining
# Whether a Directory Is a Volume Mount Point": same IO_REPARSE_TAG_MOUNT_POINT tag as a junction).
[CmdletBinding(SupportsShouldProcess)]
param(
    [string[]]$Files = @(),
    [string[]]$Dirs = @(),
    [string[]]$Paths = @(),
    [string[]]$Acls = @()
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
$Ansible.Result = @{ files = $fileHashes; dirs = $dirAccess; paths = $pathKinds; acls = $fileAccess
                     links = $links.ToArray() }
