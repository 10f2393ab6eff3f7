# Test-lab only: the file system cmdlets and .NET file and security members of a simulated host.
"""Get-Item / Get-ChildItem of a file system path, Get-FileHash, FileSystemInfo.GetAccessControl,
FileSystemSecurity's SDDL form, over winsim_files' state (owners, DACLs as SDDL, reparse points as
POSIX links). Each check is winsim_files' own (its docstrings cite the sources); what is not modelled
fails as "not supported by the lab interpreter"."""

from __future__ import annotations

import os
import re
import shutil

from ansible_collections.ansible.windows.plugins.module_utils import winsim_binaries, winsim_files
from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError

from .builtins import NULLSTRING, VOID, Cmdlet, TypeInfo, _bytes, to_number
from .values import ErrorRecord, NetObject, PSEnum, PSObject, to_str

# System.IO.FileAttributes (Microsoft Learn): Directory 16, Archive 32, ReparsePoint 1024.
_ATTR = {"Directory": 16, "Archive": 32, "ReparsePoint": 1024}


def file_attributes(value):
    names = [n for n, v in _ATTR.items() if value & v]
    return PSEnum("System.IO.FileAttributes", ", ".join(names) or "0", value)


def _sections(interp, value, node):
    """AccessControlSections as the scripts pass them: 'Owner' or 'Owner, Access'."""
    parts = sorted(p.strip().lower() for p in to_str(value).split(","))
    if parts not in (["owner"], ["access", "owner"]):
        interp.unsupported("AccessControlSections %r" % to_str(value), node)
    return tuple(parts)


class FileSystemSecurity(NetObject):
    """DirectorySecurity / FileSecurity: only the sections read or set are held."""

    def __init__(self, is_dir, owner=None, dacl=None):
        self.is_dir, self.owner, self.dacl = is_dir, owner, dacl
        self.type_name = "System.Security.AccessControl.%s" % ("DirectorySecurity" if is_dir else "FileSecurity")

    def sddl(self):
        return "O:%s%s" % (self.owner, self.dacl)

    def m_getsecuritydescriptorsddlform(self, interp, node, sections):
        which = _sections(interp, sections, node)
        if self.owner is None:
            interp.unsupported("GetSecurityDescriptorSddlForm of a descriptor without an owner", node)
        if which == ("owner",):
            return "O:%s" % self.owner
        if self.dacl is None:
            interp.unsupported("GetSecurityDescriptorSddlForm of a descriptor without access rules", node)
        return self.sddl()

    def prop_areaccessrulesprotected(self):
        """ObjectSecurity.AreAccessRulesProtected: the DACL's P flag (SE_DACL_PROTECTED)."""
        if self.dacl is None:
            return False
        return "P" in re.match(r"^D:([A-Z_]*)", self.dacl).group(1).replace("NO_ACCESS_CONTROL", "")

    def m_setsecuritydescriptorsddlform(self, interp, node, sddl, sections):
        """'Owner, Access' or 'Owner' alone: winsim_files' parser of the 'O:..D:..' form (an invalid one is the
        ArgumentException .NET raises)."""
        which = _sections(interp, sections, node)
        if which == ("owner",):
            m = re.match(r"^O:([A-Z]{2}|S-1-[0-9-]+)$", to_str(sddl))
            if not m:
                raise interp.error('Exception calling "SetSecurityDescriptorSddlForm" with "2" argument(s): "The SDDL '
                                   'form of a security descriptor object is invalid."', node,
                                   "System.Management.Automation.MethodInvocationException", "ArgumentException")
            self.owner, self.dacl = m.group(1), None
            return VOID
        try:
            owner, dacl = winsim_files.split_security_sddl(to_str(sddl))
        except SimError as e:
            raise interp.error(str(e), node, "System.Management.Automation.MethodInvocationException",
                               "ArgumentException") from None
        self.owner, self.dacl = owner, dacl
        return VOID


def _method_error(interp, node, method, nargs, message, inner):
    err = interp.error('Exception calling "%s" with "%d" argument(s): "%s"' % (method, nargs, message), node,
                       "System.Management.Automation.MethodInvocationException", inner.rsplit(".", 1)[-1])
    err.record.inner_type = inner
    return err


class FileSystemItem(NetObject):
    """A FileInfo / DirectoryInfo as Get-Item -Force gives it. A link is described by itself (Get-Item
    reads it with GetFileAttributesEx, which does not follow it): a junction or directory link to a
    directory is a container; a dangling link cannot say which kind it was and is taken for a file link."""

    ps_props = ("FullName", "Name")

    def __init__(self, host, win_path, local):
        self.host, self.FullName, self.local = host, win_path, local
        self.Name = win_path.rstrip("\\").rsplit("\\", 1)[-1]
        self.is_link = os.path.islink(local)
        self.is_dir = os.path.isdir(local)
        self.type_name = "System.IO.%s" % ("DirectoryInfo" if self.is_dir else "FileInfo")

    def prop_pscontainer(self):
        return self.is_dir

    def prop_psiscontainer(self):
        return self.is_dir

    def prop_attributes(self):
        value = _ATTR["Directory"] if self.is_dir else _ATTR["Archive"]
        return file_attributes(value | (_ATTR["ReparsePoint"] if self.is_link else 0))

    def m_getaccesscontrol(self, interp, node, sections):
        """FileSystemInfo.GetAccessControl opens the object (through a link: its target) for READ_CONTROL:
        winsim_files.readable_security decides; a dangling link cannot be opened."""
        which = _sections(interp, sections, node)
        if not os.path.exists(self.local):
            raise _method_error(interp, node, "GetAccessControl", 1, "Could not find file '%s'." % self.FullName,
                                "System.IO.FileNotFoundException")
        if not winsim_files.readable_security(self.host, self.FullName):
            raise _method_error(interp, node, "GetAccessControl", 1,
                                "Attempted to perform an unauthorized operation.", "System.UnauthorizedAccessException")
        owner = winsim_files.owner_of(self.host, self.FullName)
        dacl = winsim_files.effective_sddl(self.host, self.FullName) if "access" in which else None
        return FileSystemSecurity(self.is_dir, owner, dacl)


    def m_setaccesscontrol(self, interp, node, security):
        """FileSystemInfo.SetAccessControl persists the sections set (NativeObjectSecurity.Persist):
        winsim_files.set_security's checks; a new owner without WRITE_OWNER is UnauthorizedAccessException."""
        if not isinstance(security, FileSystemSecurity) or security.owner is None:
            interp.unsupported("SetAccessControl other than with an owner (and access rules)", node)
        winsim_files.local_user_acts(self.host, self.FullName, "when_securing")  # a local user racing the set
        try:
            # by name: through a junction put there meanwhile, its target gets the descriptor
            target = winsim_files.named_security_target(self.host, self.FullName)
            if security.dacl is None:  # only the Owner section was set: only it is persisted
                winsim_files.set_owner_only(self.host, target, security.owner)
            else:
                winsim_files.set_security(self.host, target, security.sddl())
        except winsim_files.AccessDenied:
            raise _method_error(interp, node, "SetAccessControl", 1, "Attempted to perform an unauthorized "
                                "operation.", "System.UnauthorizedAccessException") from None
        except SimError as e:
            raise _method_error(interp, node, "SetAccessControl", 1, str(e), "System.ArgumentException") from None
        return VOID


def _sim(interp, node, fn, *args, **kw):
    """A winsim_files call whose SimError is a terminating error of a .NET method (its message kept)."""
    try:
        return fn(*args, **kw)
    except SimError as e:
        raise interp.error(str(e), node, "System.Management.Automation.MethodInvocationException",
                           "MethodInvocationException") from None


def _cmdlet_error(interp, node, cmd, e, exception_type="System.IO.IOException"):
    """A winsim_files SimError of a cmdlet: a non-terminating error (Stop makes it terminating)."""
    interp.write_error(ErrorRecord(str(e), exception_type, "%s,Microsoft.PowerShell.Commands.%sCommand"
                                   % (exception_type.rsplit(".", 1)[-1], cmd.replace("-", "")), "WriteError",
                                   None, interp.where(node)))


def _local(interp, path, node, cmd):
    """The local path of a C: or UNC path; another drive does not exist on a simulated host (only C: is
    mapped): DriveNotFoundException, as Windows PowerShell reports a missing drive."""
    p = to_str(path)
    local = winsim_files.resolve(interp.host.host, p)
    if local is None:
        drive = p.split(":", 1)[0] if ":" in p else p
        interp.write_error(ErrorRecord("Cannot find drive. A drive with the name '%s' does not exist." % drive,
                                       "System.Management.Automation.DriveNotFoundException",
                                       "DriveNotFound,Microsoft.PowerShell.Commands.%sCommand" % cmd.replace("-", ""),
                                       "ObjectNotFound", p, interp.where(node)))
    return local


def not_found(interp, path, node, cmd):
    interp.write_error(ErrorRecord("Cannot find path '%s' because it does not exist." % to_str(path),
                                   "System.Management.Automation.ItemNotFoundException",
                                   "PathNotFound,Microsoft.PowerShell.Commands.%sCommand" % cmd.replace("-", ""),
                                   "ObjectNotFound", to_str(path), interp.where(node)))


def get_item(interp, b, items, node):
    """Get-Item -LiteralPath -Force of a file system path; a dangling link is found too (os.path.lexists)."""
    path = to_str(b["LiteralPath"])
    local = _local(interp, path, node, "Get-Item")
    if local is None:
        return []
    if not os.path.lexists(local):
        not_found(interp, path, node, "Get-Item")
        return []
    return [FileSystemItem(interp.host.host, path, local)]


def children(host, path, local):
    """Get-ChildItem -Force: Windows PowerShell 5.1's FileSystem provider lists the subdirectories, then the
    files, each in NTFS order (names compared upper-case), as winsim_files.remove_item walks them."""
    names = sorted(os.listdir(local), key=lambda n: n.upper())
    ordered = sorted(names, key=lambda n: not os.path.isdir(os.path.join(local, n)))
    return [FileSystemItem(host, path.rstrip("\\") + "\\" + n, os.path.join(local, n)) for n in ordered]


def _get_child_item(interp, b, items, node):
    if set(b) - {"LiteralPath", "Force"} or "LiteralPath" not in b or "Force" not in b:
        interp.unsupported("Get-ChildItem other than -LiteralPath -Force", node)
    path = to_str(b["LiteralPath"])
    local = _local(interp, path, node, "Get-ChildItem")
    if local is None:
        return []
    if not os.path.exists(local):
        not_found(interp, path, node, "Get-ChildItem")
        return []
    if not os.path.isdir(local):
        return [FileSystemItem(interp.host.host, path, local)]
    winsim_files.local_user_acts(interp.host.host, path)  # a local user acting meanwhile (winsim_files)
    host = interp.host.host
    if not winsim_files.token_allows(host, path, winsim_files.REMOTE_TOKEN, winsim_files.FILE_READ_DATA):
        # listing opens the directory for FILE_LIST_DIRECTORY (0x1; Microsoft Learn, "File Security and Access
        # Rights"): denied, Get-ChildItem writes "Access to the path ... is denied." (UnauthorizedAccessException)
        interp.write_error(ErrorRecord("Access to the path '%s' is denied." % path,
                                       "System.UnauthorizedAccessException",
                                       "DirUnauthorizedAccessError,Microsoft.PowerShell.Commands.GetChildItemCommand",
                                       "PermissionDenied", path, interp.where(node)))
        return []
    return children(host, path, local)


def _get_file_hash(interp, b, items, node):
    """Get-FileHash -LiteralPath -Algorithm SHA512 or SHA256: an object whose Hash is upper-case hex (Microsoft Learn,
    Get-FileHash examples; -Algorithm is a ValidateSet, matched without regard to case); a missing path is a
    non-terminating error."""
    algorithm = to_str(b.get("Algorithm")).upper()
    if set(b) != {"LiteralPath", "Algorithm"} or algorithm not in ("SHA512", "SHA256"):
        interp.unsupported("Get-FileHash other than -LiteralPath -Algorithm SHA512 or SHA256", node)
    path = to_str(b["LiteralPath"])
    local = _local(interp, path, node, "Get-FileHash")
    if local is None:
        return []
    if not os.path.isfile(local):
        not_found(interp, path, node, "Get-FileHash")
        return []
    if algorithm == "SHA256":
        import hashlib
        with open(local, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
    else:
        digest = winsim_files.sha512_file(local)
    return [PSObject({"Algorithm": algorithm, "Hash": digest.upper(), "Path": path})]


def new_directory(interp, b, node):
    """New-Item -ItemType Directory -Path -Force: winsim_files.new_directory (parents too; a file in the way
    is an error)."""
    if to_str(b.get("ItemType")).lower() != "directory" or "Force" not in b or set(b) - {"Path", "ItemType", "Force"}:
        interp.unsupported("New-Item of a file system path other than -ItemType Directory -Force", node)
    path = to_str(b["Path"])
    host = interp.host.host
    parts = path.rstrip("\\").split("\\")
    missing = ["\\".join(parts[:d]) for d in range(2, len(parts) + 1)
               if not os.path.lexists(host.local_path("\\".join(parts[:d])))]
    try:
        winsim_files.new_directory(host, path)
        for made in missing:  # the token's default owner on each directory it made (TOKEN_OWNER)
            winsim_files.created(host, made)
    except SimError as e:
        _cmdlet_error(interp, node, "New-Item", e)
        return []
    local = interp.host.host.local_path(path)
    return [FileSystemItem(interp.host.host, path, local)]


def _remove_item(interp, b, items, node):
    """Remove-Item -LiteralPath -Force (no -Recurse): winsim_files.remove_item with the files running
    programs hold (winsim_binaries.locked_files); a directory with children is an error."""
    if set(b) != {"LiteralPath", "Force"}:
        interp.unsupported("Remove-Item other than -LiteralPath -Force", node)
    host = interp.host.host
    try:
        winsim_files.remove_item(host, to_str(b["LiteralPath"]), recurse=False,
                                 locked=winsim_binaries.locked_files(host))
    except SimError as e:
        _cmdlet_error(interp, node, "Remove-Item", e)
    return []


def _copy_item(interp, b, items, node):
    """Copy-Item -LiteralPath source -Destination file -Force (a C: or UNC source): winsim_files.copy_item."""
    if set(b) != {"LiteralPath", "Destination", "Force"}:
        interp.unsupported("Copy-Item other than -LiteralPath -Destination -Force", node)
    host = interp.host.host
    try:
        winsim_files.copy_item(host, to_str(b["LiteralPath"]), host.local_path(to_str(b["Destination"])))
        winsim_files.created(host, to_str(b["Destination"]))
    except SimError as e:
        _cmdlet_error(interp, node, "Copy-Item", e, "System.Management.Automation.ItemNotFoundException")
    return []


def _split_path(interp, b, items, node):
    """Split-Path -Parent: everything before the last backslash (C:\\ for an item of the root)."""
    if set(b) != {"Path", "Parent"}:
        interp.unsupported("Split-Path other than -Parent", node)
    try:
        return [winsim_files.parent(to_str(b["Path"]))]
    except SimError as e:
        raise interp.error(str(e), node, "System.Management.Automation.ParameterBindingValidationException",
                           "ParameterArgumentValidationErrorEmptyStringNotAllowed") from None


# --- [System.IO.File] / [System.IO.Directory] -----------------------------------------------------------
def _dir_delete(interp, node, path, recursive):
    """[IO.Directory]::Delete(path, $false): on a reparse point RemoveDirectoryW removes the link only
    (Microsoft Learn, RemoveDirectoryW remarks); the scripts call it only on a link."""
    host = interp.host.host
    local = winsim_files.resolve(host, to_str(path))
    if recursive or local is None or not os.path.islink(local):
        interp.unsupported("[IO.Directory]::Delete other than of a link, non-recursive", node)
    winsim_files.delete_link(host, local)
    return VOID


def _file_delete(interp, node, path):
    """[IO.File]::Delete: DeleteFileW on a symbolic link removes the link; the scripts call it only on a link."""
    host = interp.host.host
    local = winsim_files.resolve(host, to_str(path))
    if local is None or not os.path.islink(local):
        interp.unsupported("[IO.File]::Delete other than of a link", node)
    winsim_files.delete_link(host, local)
    return VOID


def _file_move(interp, node, source, dest):
    """[IO.File]::Move (MoveFileW): an existing destination, a dangling link too, is ERROR_ALREADY_EXISTS
    (Microsoft Learn, MoveFileW); a rename on the same volume keeps the file's own access rules and owner."""
    host = interp.host.host
    src, dst = to_str(source), to_str(dest)
    local_src, local = host.local_path(src), host.local_path(dst)
    if not os.path.isfile(local_src):
        interp.unsupported("[IO.File]::Move of a missing file", node)
    if os.path.lexists(local):
        raise _method_error(interp, node, "Move", 2, "Cannot create a file when that file already exists.",
                            "System.IO.IOException")
    sddl = winsim_files.explicit_sddl(host, src)
    owner = winsim_files.owner_of(host, src)
    os.rename(local_src, local)
    (host.state.get("sddl") or {}).pop(winsim_files.sddl_key(src), None)
    (host.state.get("owner") or {}).pop(winsim_files.sddl_key(src), None)
    if sddl:
        winsim_files.set_sddl(host, dst, sddl)
    if owner != "BA":  # BA is what an entry-less path reports
        winsim_files.set_owner(host, dst, owner)
    return VOID


def _file_replace(interp, node, source, dest, backup):
    """[IO.File]::Replace(source, dest, $null) (ReplaceFileW): the destination keeps its identity and its own
    access rules (ReplaceFile preserves the replaced file's DACL); the program of a running service cannot be
    replaced (ERROR_UNABLE_TO_REMOVE_REPLACED; not verified on a host, the stricter choice)."""
    if backup is not None and backup is not NULLSTRING:
        interp.unsupported("[IO.File]::Replace with a backup file", node)
    host = interp.host.host
    src, dst = to_str(source), to_str(dest)
    local_src, local = host.local_path(src), host.local_path(dst)
    if not os.path.isfile(local_src) or not os.path.isfile(local):
        interp.unsupported("[IO.File]::Replace of a missing file", node)
    if os.path.normcase(os.path.abspath(local)) in winsim_binaries.locked_files(host):
        os.remove(local_src)
        raise _method_error(interp, node, "Replace", 3, "Unable to remove the file to be replaced. (%s)" % dst,
                            "System.IO.IOException")
    with open(local_src, "rb") as f, open(local, "wb") as out:
        shutil.copyfileobj(f, out)
    os.remove(local_src)
    return VOID


def _writable(interp, node, method, nargs, path):
    """The local path of a file a .NET method is about to write; one a running program holds is an IOException
    (winsim_files.check_writable: sharing violation)."""
    host = interp.host.host
    local = host.local_path(to_str(path))
    try:
        winsim_files.check_writable(host, local, to_str(path))
    except SimError as e:
        raise _method_error(interp, node, method, nargs, str(e), "System.IO.IOException") from None
    return local


def _write_all_text(interp, node, path, text):
    """[IO.File]::WriteAllText: UTF-8 without a byte order mark."""
    with open(_writable(interp, node, "WriteAllText", 2, path), "wb") as f:
        f.write(to_str(text).encode("utf-8"))
    winsim_files.created(interp.host.host, to_str(path))
    return VOID


def _append_all_text(interp, node, path, text):
    """[IO.File]::AppendAllText: UTF-8 without a byte order mark, the file created when missing; a missing directory
    is a DirectoryNotFoundException (Microsoft Learn, File.AppendAllText)."""
    local = _writable(interp, node, "AppendAllText", 2, path)
    if not os.path.isdir(os.path.dirname(local)):
        raise _method_error(interp, node, "AppendAllText", 2, "Could not find a part of the path '%s'." % to_str(path),
                            "System.IO.DirectoryNotFoundException")
    new = not os.path.exists(local)
    with open(local, "ab") as f:
        f.write(to_str(text).encode("utf-8"))
    if new:
        winsim_files.created(interp.host.host, to_str(path))
    return VOID


def _write_all_bytes(interp, node, path, data):
    with open(_writable(interp, node, "WriteAllBytes", 2, path), "wb") as f:
        f.write(bytes(_bytes(interp, data, node)))
    winsim_files.created(interp.host.host, to_str(path))
    return VOID


def _create_directory(interp, node, path, security=None):
    """[IO.Directory]::CreateDirectory(path, DirectorySecurity): winsim_files.create_directory_secured."""
    if not isinstance(security, FileSystemSecurity) or not security.is_dir or security.dacl is None:
        interp.unsupported("[IO.Directory]::CreateDirectory without a DirectorySecurity", node)
    host = interp.host.host
    winsim_files.local_user_creates(host, to_str(path))  # a local user racing the script (winsim_files)
    _sim(interp, node, winsim_files.create_directory_secured, host, to_str(path), security.sddl())
    return FileSystemItem(host, to_str(path), host.local_path(to_str(path)))


class FileStream(NetObject):
    """.NET Framework's FileStream(path, CreateNew, Write, None, bufferSize, None, FileSecurity): a new file
    created with that security descriptor (winsim_files.set_security's checks); CreateNew fails on an
    existing file."""

    type_name = "System.IO.FileStream"

    def __init__(self, interp, node, args):
        if len(args) != 7 or not isinstance(args[6], FileSystemSecurity) or args[6].is_dir:
            interp.unsupported("FileStream other than (path, mode, rights, share, size, options, FileSecurity)",
                               node)
        path, mode, rights, share, _size, options, security = args
        if (to_str(mode), to_str(rights), to_str(share), to_str(options)) != ("CreateNew", "Write", "None", "None"):
            interp.unsupported("FileStream mode %s, rights %s" % (to_str(mode), to_str(rights)), node)
        host = interp.host.host
        self.path = to_str(path)
        local = host.local_path(self.path)
        if os.path.lexists(local):
            raise interp.error('New-Object : Exception calling ".ctor" with "7" argument(s): "The file \'%s\' '
                               'already exists."' % self.path, node,
                               "System.Management.Automation.MethodInvocationException",
                               "ConstructorInvokedThrowException")
        self.f = open(local, "wb")
        try:
            _sim(interp, node, winsim_files.set_security, host, self.path, security.sddl())
        except Exception:
            self.f.close()
            os.remove(local)
            raise

    def m_write(self, interp, node, data, offset, count):
        self.f.write(bytes(_bytes(interp, data, node))[int(offset):int(offset) + int(count)])
        return VOID

    def m_dispose(self, interp, node):
        self.f.close()
        return VOID


# System.IO.FileShare's fields (Microsoft Learn, FileShare Enum)
FILE_SHARE = {"None": 0, "Read": 1, "Write": 2, "ReadWrite": 3, "Delete": 4, "Inheritable": 16}


class FileReadStream(NetObject):
    """.NET Framework's FileStream(path, FileMode, FileAccess, FileShare share) (Microsoft Learn, FileStream
    constructor (String, FileMode, FileAccess, FileShare)): Open with Read or Write, an existing file at Position 0;
    Create with Write, the file made or emptied (FileMode.Create: "if the file already exists, it will be
    overwritten"). FileNotFoundException for a missing file (Open), DirectoryNotFoundException for a missing
    directory, UnauthorizedAccessException for a directory, ArgumentOutOfRangeException for a share outside the enum.
    A file a running program holds open for writing (winsim_files.in_use) opens only with a share that includes Write
    (CreateFileW's sharing rule), and for writing only when its holder shares writing. Length, setting Position,
    SetLength, CopyTo and Dispose are modelled. A test's fault "filestream:open" (core.set_fault) makes the file
    vanish just before the open (a log rotated away after a Test-Path)."""

    type_name = "System.IO.FileStream"

    def __init__(self, interp, node, path, mode, access, share):
        if (to_str(mode), to_str(access)) not in (("Open", "Read"), ("Open", "Write"), ("Create", "Write")):
            interp.unsupported("FileStream mode %s, access %s" % (to_str(mode), to_str(access)), node)
        self.writing = to_str(access) == "Write"
        create = to_str(mode) == "Create"
        share = int(to_number(interp, share, node))
        if share & ~(FILE_SHARE["ReadWrite"] | FILE_SHARE["Delete"] | FILE_SHARE["Inheritable"]):
            raise self._error(interp, node, "Enum value was out of legal range.\r\nParameter name: share",
                              "System.ArgumentOutOfRangeException")
        host = interp.host.host
        self.path = to_str(path)
        local = winsim_files.resolve(host, self.path)
        if local is None or not os.path.isdir(os.path.dirname(local)):
            raise self._error(interp, node, "Could not find a part of the path '%s'." % self.path,
                              "System.IO.DirectoryNotFoundException")
        if os.path.isdir(local):
            raise self._error(interp, node, "Access to the path '%s' is denied." % self.path,
                              "System.UnauthorizedAccessException")
        try:
            host.fault("filestream:open")
        except SimError:
            local = ""
        new = create and local and not os.path.lexists(local)
        if new:
            open(local, "wb").close()
            winsim_files.created(host, self.path)
        if not os.path.isfile(local):
            raise self._error(interp, node, "Could not find file '%s'." % self.path, "System.IO.FileNotFoundException")
        if not share & FILE_SHARE["Write"] and winsim_files.in_use(host, local):
            raise self._error(interp, node, winsim_files.IN_USE % self.path, "System.IO.IOException")
        if self.writing and winsim_files.in_use(host, local) and \
                os.path.normcase(os.path.abspath(local)) not in winsim_binaries.shared_write_files(host):
            # a running program's image is mapped without FILE_SHARE_WRITE: no open for writing succeeds; only a
            # file its holder shares for writing (containerd's --log-file) opens
            raise self._error(interp, node, winsim_files.IN_USE % self.path, "System.IO.IOException")
        self.f = open(local, "r+b" if self.writing else "rb")
        if create:
            self.f.truncate(0)

    @staticmethod
    def _error(interp, node, message, inner):
        # New-Object: 'Exception calling ".ctor" with "4" argument(s): ...', the constructor's exception inside
        err = interp.error('Exception calling ".ctor" with "4" argument(s): "%s"' % message, node,
                           "System.Management.Automation.MethodInvocationException",
                           "ConstructorInvokedThrowException,Microsoft.PowerShell.Commands.NewObjectCommand")
        err.record.inner_type = inner
        return err

    def prop_length(self):
        return os.fstat(self.f.fileno()).st_size

    def m_setlength(self, interp, node, value):
        """FileStream.SetLength on a stream opened for writing (FileAccess.Write): the file is cut or extended
        (Microsoft Learn, FileStream.SetLength; NotSupportedException on a stream that cannot write)."""
        if not self.writing:
            raise _method_error(interp, node, "SetLength", 1, "Stream does not support writing.",
                                "System.NotSupportedException")
        self.f.truncate(int(to_number(interp, value, node)))
        return VOID

    def m_copyto(self, interp, node, destination):
        """Stream.CopyTo(Stream): from this stream's position to its end into ``destination`` at its position, in
        buffered reads (Microsoft Learn, Stream.CopyTo: NotSupportedException when this stream cannot read or the
        destination cannot write, ObjectDisposedException when either is closed)."""
        if not isinstance(destination, FileReadStream):
            interp.unsupported("CopyTo into anything but a FileStream", node)
        if self.f.closed or destination.f.closed:
            raise _method_error(interp, node, "CopyTo", 1, "Cannot access a closed Stream.",
                                "System.ObjectDisposedException")
        if self.writing or not destination.writing:
            raise _method_error(interp, node, "CopyTo", 1, "Stream does not support %s." % (
                "reading" if self.writing else "writing"), "System.NotSupportedException")
        shutil.copyfileobj(self.f, destination.f, 1 << 20)
        return VOID

    def ps_set(self, name, value, interp, node):
        """Position: where the next read starts; a negative one is an ArgumentOutOfRangeException (Microsoft Learn,
        FileStream.Position)."""
        if name.lower() != "position":
            interp.unsupported("setting FileStream.%s" % name, node)
        pos = int(to_number(interp, value, node))
        if pos < 0:
            raise interp.error('Exception setting "Position": "Non-negative number required.\r\nParameter name: '
                               'value"', node, "System.Management.Automation.SetValueInvocationException",
                               "ExceptionWhenSetting")
        self.f.seek(pos)

    def m_dispose(self, interp, node):
        self.f.close()
        return VOID


# A .NET string holds "about 1 billion characters" at most (Microsoft Learn, String class, remarks: "The maximum size
# of a String object in memory is 2-GB"); the runtime's bound is 0x3FFFFFDF characters.
MAX_STRING_CHARS = 0x3FFFFFDF


class StreamReader(NetObject):
    """.NET Framework's StreamReader(Stream) (Microsoft Learn): UTF-8, the encoding detected from a byte order mark
    at the stream's position; invalid bytes become U+FFFD (UTF8Encoding's replacement fallback). ReadToEnd only;
    a UTF-16/32 byte order mark is not modelled. ReadToEnd of more bytes than a string holds characters throws
    OutOfMemoryException (StreamReader.ReadToEnd: "There is insufficient memory to allocate a buffer for the
    returned string"), checked before anything is read: a log is ASCII, one character per byte (a text of
    multi-byte characters that would still fit is refused too, the stricter choice)."""

    type_name = "System.IO.StreamReader"

    def __init__(self, interp, node, args):
        if len(args) != 1 or not isinstance(args[0], FileReadStream):
            interp.unsupported("StreamReader other than (FileStream opened for reading)", node)
        self.stream = args[0]

    def m_readtoend(self, interp, node):
        if self.stream.f.closed:
            raise _method_error(interp, node, "ReadToEnd", 0, "Cannot read from a closed TextReader.",
                                "System.ObjectDisposedException")
        f = self.stream.f
        if os.fstat(f.fileno()).st_size - f.tell() > MAX_STRING_CHARS:
            raise _method_error(interp, node, "ReadToEnd", 0, "Exception of type 'System.OutOfMemoryException' was "
                                "thrown.", "System.OutOfMemoryException")
        data = f.read()
        if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
            interp.unsupported("StreamReader on UTF-16/UTF-32 text", node)
        return data.decode("utf-8-sig", "replace")


class WebProxy(NetObject):
    type_name = "System.Net.WebProxy"

    def __init__(self, interp, node, args):
        if len(args) != 3 or args[1] is not True:
            interp.unsupported("WebProxy other than (address, $true, bypassList)", node)
        self.address = to_str(args[0])
        self.bypass = [to_str(x) for x in (args[2] if isinstance(args[2], list) else [args[2]]) if x is not None]
        _sim(interp, node, winsim_files._compile_bypass, self.bypass)


class WebClient(NetObject):
    """System.Net.WebClient: DownloadFile over winsim_files.http_download (no proxy, or an explicit one)."""

    type_name = "System.Net.WebClient"

    def __init__(self):
        self.proxy = None

    def ps_set(self, name, value, interp, node):
        if name.lower() != "proxy" or not isinstance(value, WebProxy):
            interp.unsupported("setting WebClient.%s" % name, node)
        self.proxy = value

    def m_downloadfile(self, interp, node, url, path):
        host = interp.host.host
        proxy = self.proxy
        _sim(interp, node, winsim_files.check_writable, host, host.local_path(to_str(path)), to_str(path))
        _sim(interp, node, winsim_files.http_download, to_str(url), host.local_path(to_str(path)),
             proxy.address if proxy else "", proxy.bypass if proxy else ())
        winsim_files.created(host, to_str(path))
        return VOID


class _Sid(NetObject):
    type_name = "System.Security.Principal.SecurityIdentifier"
    ps_props = ("Value",)

    def __init__(self, value):
        self.Value = value


class _WindowsIdentity(NetObject):
    """[Security.Principal.WindowsIdentity]::GetCurrent(): the remote session's account
    (winsim_files.REMOTE_ACCOUNT); only User is modelled."""
    type_name = "System.Security.Principal.WindowsIdentity"
    ps_props = ("User",)

    def __init__(self):
        self.User = _Sid(winsim_files.REMOTE_ACCOUNT)


def _current_identity(interp, node):
    return _WindowsIdentity()


def _new_object(interp, b, items, node):
    """New-Object -TypeName [-ArgumentList]: the types the scripts construct."""
    if set(b) - {"TypeName", "ArgumentList"}:
        interp.unsupported("New-Object other than -TypeName [-ArgumentList]", node)
    name = re.sub(r"^system\.", "", to_str(b["TypeName"]).lower())
    args = b.get("ArgumentList")
    args = [] if args is None else (args if isinstance(args, list) else [args])
    if name in ("security.accesscontrol.directorysecurity", "security.accesscontrol.filesecurity") and not args:
        return [FileSystemSecurity(name.endswith("directorysecurity"))]
    if name == "io.filestream":
        return [FileReadStream(interp, node, *args) if len(args) == 4 else FileStream(interp, node, args)]
    if name == "io.streamreader":
        return [StreamReader(interp, node, args)]
    if name == "net.webclient" and not args:
        return [WebClient()]
    if name == "net.webproxy":
        return [WebProxy(interp, node, args)]
    interp.unsupported("New-Object %s" % to_str(b["TypeName"]), node)


def tar_exe(host, argv):
    """tar.exe -xf archive -C dir (Windows' bsdtar): winsim_files.extract; its exit code."""
    if len(argv) != 4 or argv[0] != "-xf" or argv[2] != "-C":
        raise SimError("winsim: tar.exe %s is not simulated" % " ".join(argv))
    winsim_binaries.log_process(host, "C:\\Windows\\System32\\tar.exe", ["tar.exe"] + argv)
    errors = []
    rc = winsim_files.extract(host, host.local_path(argv[1]), argv[3], errors)
    return rc, "", "" if rc == 0 else "".join(e + "\r\n" for e in errors) + \
        "tar.exe: Error exit delayed from previous errors.\r\n"


FILE_CMDLETS = {
    "get-childitem": Cmdlet("Get-ChildItem", _get_child_item, params=("LiteralPath", "Path"), switches=("Force",)),
    "get-filehash": Cmdlet("Get-FileHash", _get_file_hash, params=("LiteralPath", "Path", "Algorithm")),
    "remove-item": Cmdlet("Remove-Item", _remove_item, params=("LiteralPath", "Path"), switches=("Force", "Recurse"),
                          changes=True),
    "copy-item": Cmdlet("Copy-Item", _copy_item, params=("LiteralPath", "Path", "Destination"), switches=("Force",),
                        changes=True),
    "split-path": Cmdlet("Split-Path", _split_path, params=("Path",), switches=("Parent", "Leaf"),
                         positional=("Path",)),
    "new-object": Cmdlet("New-Object", _new_object, params=("TypeName", "ArgumentList"),
                         positional=("TypeName", "ArgumentList")),
}


def register(interp):
    interp.cmdlets.update(FILE_CMDLETS)
    t = interp.types
    t["io.directory"] = TypeInfo("Directory", "System.IO.Directory", statics={
        "Delete": _dir_delete, "CreateDirectory": _create_directory})
    file_statics = dict(t["io.file"].statics) if "io.file" in t else {}
    file_statics.update({"delete": _file_delete, "move": _file_move, "replace": _file_replace,
                         "writealltext": _write_all_text, "writeallbytes": _write_all_bytes,
                         "appendalltext": _append_all_text})
    t["io.file"] = TypeInfo("File", "System.IO.File", statics=file_statics)
    # the members the scripts use, with their values (Microsoft Learn, each enum's "Fields")
    enums = {"io.filemode": ("FileMode", {"CreateNew": 1, "Create": 2, "Open": 3}),
             "io.fileshare": ("FileShare", FILE_SHARE),
             "io.fileaccess": ("FileAccess", {"Read": 1, "Write": 2}),
             "io.fileoptions": ("FileOptions", {"None": 0}),
             "security.accesscontrol.filesystemrights": ("FileSystemRights", {"Write": 278})}
    for key, (name, members) in enums.items():
        full = "System." + ".".join(x.capitalize() for x in key.split(".")[:-1]) + "." + name
        t[key] = TypeInfo(name, full, statics={m: PSEnum(full, m, v) for m, v in members.items()})
    t["security.principal.windowsidentity"] = TypeInfo("WindowsIdentity", "System.Security.Principal.WindowsIdentity",
                                                       statics={"getcurrent": _current_identity})
    t["io.fileattributes"] = TypeInfo("FileAttributes", "System.IO.FileAttributes",
                                      statics={k: file_attributes(v) for k, v in _ATTR.items()})
