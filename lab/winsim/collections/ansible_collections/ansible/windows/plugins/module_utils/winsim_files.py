# Test-lab only: files, access rules (SDDL), file shares and downloads of a simulated host.
"""What kubewin.nodes' files_state and node_sync scripts touch, beyond the C: drive mapping.

Access rules: ``state["sddl"]`` maps a lower-cased Windows path to ``{"sddl", "ino"}``, the DACL set
with ``Set-Acl`` (SDDL 'Access' section) and the inode of the file or directory it was set on, so
an entry dies with its file even when another module deletes it. A path without explicit rules
reports what it inherits from the nearest ancestor that has some, the drive's default being
:data:`DRIVE_DEFAULT_SDDL` (Administrators, SYSTEM full control; Users read & execute), e.g. a new
directory reports ``D:AI(A;OICIID;FA;;;BA)(A;OICIID;FA;;;SY)(A;OICIID;0x1200a9;;;BU)``.

Owners: ``state["owner"]`` maps a lower-cased path to ``{"owner", "ino"}`` the same way (the inode read
without following a link); a path without one is owned by BA, the owner Windows Server gives what a member
of Administrators creates (Microsoft Learn, "System objects: Default owner for objects created by members
of the Administrators group": Administrators group on servers). A test plants a user's directory with
:func:`set_owner`. Changing the owner needs WRITE_OWNER, which an elevated administrator has only
through the object's DACL (SeTakeOwnershipPrivilege is present but disabled in its token, and no script
enables it): when the DACL grants Administrators nothing that includes WRITE_OWNER, SetAccessControl fails
with UnauthorizedAccessException.

Junctions and symbolic links (reparse points, FileAttributes.ReparsePoint) are POSIX symlinks on the
simulated drive; Windows follows them on every open, and so does the drive mapping. Windows PowerShell
5.1's ``Remove-Item -Recurse`` walks into a junction and deletes what its target holds
(PowerShell/PowerShell#621; scriptcs-contrib/svm#48): :func:`remove_item` does the same, while
``[IO.Directory]::Delete(link, $false)`` / ``[IO.File]::Delete(link)`` remove only the link (Microsoft Learn,
RemoveDirectoryW remarks: removing a junction never touches the target), :func:`delete_link`.

File shares: a UNC path ``\\\\server\\share\\rest`` maps to ``<root>/shares/server/share/rest`` (names
matched case-insensitively), so a test can publish an "air-gapped" share next to the hosts.

Downloads go over real HTTP with urllib, the way ``System.Net.WebClient`` would: an explicit proxy
(``WebProxy(proxy, BypassOnLocal=$true, bypassList)``: loopback and dot-less host names go direct,
bypass entries are .NET regular expressions matched against ``scheme://host[:port]``), or no
proxy at all (the controller's http_proxy variables are ignored, as the host does not have them).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tarfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile

from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError, split_win_path

# What C:\ passes on to everything created below it (as on a fresh Windows Server install, simplified).
DRIVE_DEFAULT_SDDL = "D:PAI(A;OICI;FA;;;BA)(A;OICI;FA;;;SY)(A;OICI;0x1200a9;;;BU)"
DOWNLOAD_TIMEOUT = 100  # WebClient's default, seconds

_SDDL = re.compile(r"^D:(?:P|AI|AR|NO_ACCESS_CONTROL)*(?:\((?:A|D|OA|OD|AU);[A-Z]*;(?:0x[0-9A-Fa-f]+|[A-Z]+);"
                   r"[^;()]*;[^;()]*;[A-Za-z0-9-]+\))*$")
_ACE = re.compile(r"\(([^()]*)\)")
_LOCAL_OR_UNC = re.compile(r"^(\\\\|[A-Za-z]:\\)")


def _key(win_path):
    return ("c:\\" + "\\".join(split_win_path(win_path))).lower()


sddl_key = _key


# --- paths -------------------------------------------------------------------------------------
def resolve(host, path):
    """Local path of a C: or UNC path (None for anything else, e.g. another drive)."""
    p = str(path)
    if p.startswith("\\\\") and not p.startswith("\\\\?\\") and not p.startswith("\\\\.\\"):
        return share_path(host, p)
    try:
        return host.local_path(p)
    except SimError:
        return None


def share_path(host, unc):
    """'\\\\server\\share\\x' -> <root>/shares/server/share/x, matching names case-insensitively."""
    parts = [x for x in re.split(r"[\\/]+", unc[2:]) if x and x != "."]
    if len(parts) < 2:
        return None
    cur = os.path.join(host.root, "shares")
    for part in parts:
        match = part
        if os.path.isdir(cur):
            for entry in os.listdir(cur):
                if entry.lower() == part.lower():
                    match = entry
                    break
        cur = os.path.join(cur, match)
    return cur


# --- access rules ------------------------------------------------------------------------------
def check_sddl(sddl):
    if not _SDDL.match(sddl or ""):
        raise SimError('Exception calling "SetSecurityDescriptorSddlForm" with "2" argument(s): "The SDDL form of a '
                       'security descriptor object is invalid."')


def set_sddl(host, win_path, sddl):
    """Set-Acl with an SDDL 'Access' section on an existing file or directory."""
    check_sddl(sddl)
    local = host.local_path(win_path)
    if not os.path.exists(local):
        raise SimError("Cannot find path '%s' because it does not exist." % win_path)
    host.state.setdefault("sddl", {})[_key(win_path)] = {"sddl": sddl, "ino": os.stat(local).st_ino}


def explicit_sddl(host, win_path):
    entry = (host.state.get("sddl") or {}).get(_key(win_path))
    if not entry:
        return None
    local = host.local_path(win_path)
    if not os.path.exists(local) or os.stat(local).st_ino != entry["ino"]:
        return None  # the file it was set on is gone (deleted, maybe recreated)
    return entry["sddl"]


def inherited_sddl(parent_sddl, is_dir):
    """The DACL a new child gets from its parent's inheritable ACEs (as Windows computes it)."""
    aces = []
    for ace in _ACE.findall(parent_sddl.split("S:")[0]):
        fields = ace.split(";")
        flags = re.findall("..", fields[1])
        if is_dir and "CI" in flags:
            new = [] if "NP" in flags else [f for f in ("OI", "CI") if f in flags]
        elif not is_dir and "OI" in flags:
            new = []
        else:
            continue
        fields[1] = "".join(new + ["ID"])
        aces.append("(%s)" % ";".join(fields))
    return "D:AI" + "".join(aces)


def effective_sddl(host, win_path):
    """What (Get-Acl).GetSecurityDescriptorSddlForm('Access') reports for an existing path."""
    explicit = explicit_sddl(host, win_path)
    if explicit is not None:
        return explicit
    parts = split_win_path(win_path)
    is_dir = os.path.isdir(host.local_path(win_path))
    for depth in range(len(parts) - 1, 0, -1):
        ancestor = "C:\\" + "\\".join(parts[:depth])
        found = explicit_sddl(host, ancestor)
        if found is not None:
            return inherited_sddl(found, is_dir)
    if not parts:
        return DRIVE_DEFAULT_SDDL
    return inherited_sddl(DRIVE_DEFAULT_SDDL, is_dir)


# --- owners and links ----------------------------------------------------------------------------
_WRITE_OWNER = 0x80000


def is_link(host, win_path):
    """(Get-Item -Force).Attributes -band ReparsePoint."""
    local = resolve(host, win_path)
    return local is not None and os.path.islink(local)


def set_owner(host, win_path, owner):
    local = host.local_path(win_path)
    if not os.path.lexists(local):
        raise SimError("Cannot find path '%s' because it does not exist." % win_path)
    host.state.setdefault("owner", {})[_key(win_path)] = {"owner": owner, "ino": os.lstat(local).st_ino}


def owner_of(host, win_path):
    entry = (host.state.get("owner") or {}).get(_key(win_path))
    local = host.local_path(win_path)
    if entry and os.path.lexists(local) and os.lstat(local).st_ino == entry["ino"]:
        return entry["owner"]
    return "BA"


def security_sddl(host, win_path):
    """GetAccessControl('Owner, Access').GetSecurityDescriptorSddlForm('Owner, Access')."""
    return "O:%s%s" % (owner_of(host, win_path), effective_sddl(host, win_path))


# READ_CONTROL and what includes it: the generic rights and FILE_GENERIC_READ/WRITE/EXECUTE all include a
# STANDARD_RIGHTS_* that is READ_CONTROL (Microsoft Learn, "File Security and Access Rights", "Standard
# Access Rights"; SDDL ACE strings: "ACE Strings" rights codes).
_READ_CONTROL = 0x20000
_READ_CONTROL_CODES = ("FA", "FR", "FW", "FX", "GA", "GR", "GW", "GX", "RC")
_READ_CONTROL_HEX = _READ_CONTROL | 0x10000000 | 0x20000000 | 0x40000000 | 0x80000000
# The groups of an elevated administrator's token an ACE may name (Administrators, Everyone, Authenticated
# Users, Users), by SDDL alias or SID.
_ADMIN_TOKEN = ("BA", "S-1-5-32-544", "WD", "S-1-1-0", "AU", "S-1-5-11", "BU", "S-1-5-32-545")


def _ace_has_read_control(rights):
    if rights.lower().startswith("0x"):
        return bool(int(rights, 16) & _READ_CONTROL_HEX)
    return any(code in _READ_CONTROL_CODES for code in re.findall("..", rights.upper()))


def readable_security(host, win_path):
    """Whether an elevated administrator may read the security descriptor (GetAccessControl opens it for
    READ_CONTROL). The owner gets READ_CONTROL whatever the DACL says (Microsoft Learn, "Ownership of
    objects"), and BA is in the token; otherwise the DACL must grant it to a group of the token. Stricter
    than Windows on purpose: any deny ACE naming such a group with READ_CONTROL makes it unreadable, wherever
    it stands (Windows honours only the deny ACEs before the first granting allow ACE; canonical order puts
    them all first). SeBackupPrivilege would open anything but is disabled in the token and nothing enables it."""
    if owner_of(host, win_path).upper() in ("BA", "S-1-5-32-544"):
        return True
    allowed = False
    for ace in _ACE.findall(effective_sddl(host, win_path)):
        fields = ace.split(";")
        if len(fields) < 6 or fields[5].upper() not in _ADMIN_TOKEN or "IO" in re.findall("..", fields[1]):
            continue
        if not _ace_has_read_control(fields[2]):
            continue
        if fields[0] == "D":
            return False
        if fields[0] == "A":
            allowed = True
    return allowed


def read_security(host, win_path):
    """files_state's Get-Security: the SDDL, or 'unreadable' when GetAccessControl fails."""
    return security_sddl(host, win_path) if readable_security(host, win_path) else "unreadable"


def read_owner(host, win_path):
    """files_state's scan: GetAccessControl('Owner') needs READ_CONTROL too."""
    return owner_of(host, win_path) if readable_security(host, win_path) else "unreadable"


def _grants_write_owner_to_admins(dacl):
    for ace in _ACE.findall(dacl):
        fields = ace.split(";")
        if fields[0] != "A" or fields[5].upper() not in ("BA", "S-1-5-32-544") or "IO" in re.findall("..", fields[1]):
            continue
        rights = fields[2]
        if rights in ("FA", "GA", "WO") or (rights.startswith("0x") and int(rights, 16) & _WRITE_OWNER):
            return True
    return False


class AccessDenied(SimError):
    """SetAccessControl's UnauthorizedAccessException (no WRITE_OWNER for a new owner)."""


def split_security_sddl(sddl):
    """The owner and DACL of an 'O:..D:..' SDDL (SetSecurityDescriptorSddlForm with 'Owner, Access');
    anything else is the invalid form .NET rejects."""
    m = re.match(r"^O:([A-Z]{2}|S-1-[0-9-]+)(D:.*)$", sddl or "")
    if not m:
        raise SimError('Exception calling "SetSecurityDescriptorSddlForm" with "2" argument(s): "The SDDL form of '
                       'a security descriptor object is invalid."')
    check_sddl(m.group(2))
    return m.group(1), m.group(2)


def set_security(host, win_path, sddl):
    """$item.SetAccessControl with the 'Owner, Access' sections of an 'O:..D:..' SDDL (Set-Security)."""
    m = re.match(r"^O:([A-Z]{2}|S-1-[0-9-]+)(D:.*)$", sddl or "")
    if not m:
        check_sddl(sddl)
        raise SimError('Exception calling "SetSecurityDescriptorSddlForm" with "2" argument(s): "The SDDL form of '
                       'a security descriptor object is invalid."')
    owner, dacl = m.group(1), m.group(2)
    check_sddl(dacl)
    if owner != owner_of(host, win_path) and not _grants_write_owner_to_admins(effective_sddl(host, win_path)):
        raise AccessDenied("cannot make Administrators the owner of %s (another user took away their access): run "
                       "takeown /F \"%s\" /A as an administrator, then re-run" % (win_path, win_path))
    set_sddl(host, win_path, dacl)
    set_owner(host, win_path, owner)


def create_directory_secured(host, win_path, sddl):
    """[IO.Directory]::CreateDirectory(path, DirectorySecurity): each directory it creates, the missing parents
    too, gets the security descriptor (.NET Framework reference source, Directory.InternalCreateDirectory passes
    the same SECURITY_ATTRIBUTES to every CreateDirectory call); an existing one is left as it is."""
    m = re.match(r"^O:([A-Z]{2}|S-1-[0-9-]+)(D:.*)$", sddl or "")
    if not m:  # the script sets the 'Owner, Access' sections: without an owner the form is invalid
        raise SimError('Exception calling "SetSecurityDescriptorSddlForm" with "2" argument(s): "The SDDL form of '
                       'a security descriptor object is invalid."')
    owner, dacl = m.group(1), m.group(2)
    check_sddl(dacl)
    parts = split_win_path(win_path)
    for depth in range(1, len(parts) + 1):
        path = "C:\\" + "\\".join(parts[:depth])
        local = host.local_path(path)
        if os.path.isfile(local):
            raise SimError("Cannot create \"%s\" because a file or directory with the same name already exists."
                           % path)
        if not os.path.isdir(local):
            os.mkdir(local)
            set_sddl(host, path, dacl)
            set_owner(host, path, owner)


def delete_link(host, local):
    """[IO.Directory]::Delete(link, $false) or [IO.File]::Delete(link): the link goes, its target stays."""
    os.unlink(local)


def live_sddls(host):
    """Explicit access rules whose file still exists (for state dumps)."""
    out = {}
    for key in sorted(host.state.get("sddl") or {}):
        sddl = explicit_sddl(host, key)
        if sddl is not None:
            out[key] = sddl
    return out


# --- hashing, directories ----------------------------------------------------------------------
def sha512_file(local):
    h = hashlib.sha512()
    with open(local, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def new_directory(host, win_path):
    """New-Item -ItemType Directory -Force: creates parents; fails if a file is in the way."""
    local = host.local_path(win_path)
    if os.path.isfile(local):
        raise SimError("An item with the specified name %s already exists." % win_path)
    os.makedirs(local, exist_ok=True)
    return local


def remove_item(host, path, recurse, locked=()):
    """Remove-Item -LiteralPath -Force [-Recurse] under $ErrorActionPreference = 'Stop'.

    ``locked``: normalized local paths that cannot be deleted (programs of running services: access
    denied; files a running program holds open: sharing violation). Like the FileSystem provider,
    a directory's subdirectories go first, then its files, in NTFS order (names compared upper-case);
    the first failure ends the command and what was removed before it stays removed."""
    local = resolve(host, path)
    if local is None or not os.path.lexists(local):
        raise SimError("Cannot find path '%s' because it does not exist." % path)
    locked = set(locked or ())

    def win(p):
        return host.win_path(p) if p.startswith(host.drive) else p

    def remove_file(p):
        if os.path.normcase(os.path.abspath(p)) in locked:
            w = win(p)
            if w.lower().endswith(".exe"):
                raise SimError("Cannot remove item %s: Access to the path '%s' is denied." % (w, w))
            raise SimError("Cannot remove item %s: The process cannot access the file '%s' because it is being used "
                           "by another process." % (w, w))
        os.remove(p)

    def remove_dir(p):
        # Windows PowerShell 5.1 walks into a junction below the item like into any directory and deletes
        # its target's content, then the link (PowerShell/PowerShell#621, scriptcs-contrib/svm#48).
        children = [os.path.join(p, n) for n in sorted(os.listdir(p), key=lambda n: n.upper())]
        subdirs = [c for c in children if os.path.isdir(c)]
        for child in subdirs:
            remove_dir(child)
        for child in children:
            if child not in subdirs:
                remove_file(child)
        if os.path.islink(p):
            os.unlink(p)
        else:
            os.rmdir(p)

    if os.path.isdir(local):  # a junction too (its target's content counts as its children)
        if not recurse and os.listdir(local):
            raise SimError("The item at %s has children and the Recurse parameter was not specified." % path)
        remove_dir(local)
    else:
        remove_file(local)


IN_USE = "The process cannot access the file '%s' because it is being used by another process."


def in_use(host, local):
    """Whether a file is held by a running program: the image of a running process, or a file NSSM holds
    open (winsim_binaries.locked_files). Writing over it fails with ERROR_SHARING_VIOLATION: the loader maps
    an image without FILE_SHARE_WRITE, so CreateFile for writing is refused while it runs (Microsoft Learn,
    "Creating and Opening Files": sharing modes; a running .exe can be renamed but not written or deleted)."""
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_binaries
    return os.path.normcase(os.path.abspath(local)) in winsim_binaries.locked_files(host)


def check_writable(host, local, win=None):
    """Raise the sharing violation .NET reports (IOException) when ``local`` is in use."""
    if in_use(host, local):
        raise SimError(IN_USE % (win or host.win_path(local)))


def parent(win_path):
    parts = split_win_path(win_path)
    if not parts:
        raise SimError("Cannot bind argument to parameter 'Path' because it is an empty string.")
    return "C:\\" + "\\".join(parts[:-1])


# --- downloads ---------------------------------------------------------------------------------
def is_local_or_unc(url):
    return bool(_LOCAL_OR_UNC.match(url))


def _bypassed(url, bypass):
    parsed = urllib.parse.urlsplit(url)
    host = (parsed.hostname or "").lower()
    if host in ("localhost", "::1") or host.startswith("127.") or "." not in host:
        return True  # BypassOnLocal
    default = {"http": 80, "https": 443}.get(parsed.scheme)
    target = "%s://%s" % (parsed.scheme, host) + ("" if parsed.port in (None, default) else ":%d" % parsed.port)
    for pattern in bypass or []:
        if re.search(pattern, target, re.I):
            return True
    return False


def _compile_bypass(bypass):
    for pattern in bypass or []:
        try:
            re.compile(pattern)
        except re.error as e:
            raise SimError('New-Object : Exception calling ".ctor" with "3" argument(s): "parsing "%s" - %s." '
                           '(WebProxy bypass entries are regular expressions)' % (pattern, e)) from None


def http_download(url, local_tmp, proxy="", bypass=()):
    """WebClient.DownloadFile(url, tmp); the partial file is removed on failure, as WebClient does."""
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    if scheme not in ("http", "https", "ftp", "file"):
        raise SimError('Exception calling "DownloadFile" with "2" argument(s): "The URI prefix is not recognized."')
    if proxy:
        _compile_bypass(bypass)
    handlers = [urllib.request.ProxyHandler({})]  # never the controller's environment proxies
    if proxy and not _bypassed(url, bypass):
        handlers = [urllib.request.ProxyHandler({"http": proxy, "https": proxy})]
    opener = urllib.request.build_opener(*handlers)
    try:
        with opener.open(url, timeout=DOWNLOAD_TIMEOUT) as response, open(local_tmp, "wb") as out:
            shutil.copyfileobj(response, out)
    except urllib.error.HTTPError as e:
        _remove(local_tmp)
        raise SimError('Exception calling "DownloadFile" with "2" argument(s): "The remote server returned an error: '
                       '(%d) %s."' % (e.code, e.reason)) from None
    except (urllib.error.URLError, OSError) as e:
        _remove(local_tmp)
        reason = getattr(e, "reason", e)
        raise SimError('Exception calling "DownloadFile" with "2" argument(s): "Unable to connect to the remote '
                       'server (%s)"' % reason) from None


def copy_item(host, source, local_tmp):
    """Copy-Item -LiteralPath source -Destination tmp -Force (a C: or UNC path); a destination in use is a
    sharing violation (check_writable)."""
    local = resolve(host, source)
    if local is None or not os.path.isfile(local):
        raise SimError("Cannot find path '%s' because it does not exist." % source)
    check_writable(host, local_tmp)
    shutil.copyfile(local, local_tmp)


def _remove(local):
    if os.path.lexists(local):
        os.remove(local)


def _member_target(name):
    """bsdtar's rules: leading '/' and './' stripped, '..' refused. Returns the parts or None."""
    parts = [x for x in re.split(r"[\\/]+", name) if x and x != "."]
    if any(x == ".." for x in parts) or re.match(r"^[A-Za-z]:", name):
        return None
    return parts


def extract(host, local_archive, extract_dir, errors=None):
    """tar.exe -xf archive -C extract_dir, see :func:`_extract`. What it creates gets the token's default owner
    (tar.exe passes no security descriptor: Microsoft Learn, TOKEN_OWNER; the connecting account under "Object
    creator", :func:`default_owner`)."""
    base = host.local_path(extract_dir)

    def listing():
        return {os.path.join(d, n) for d, dirs, files in os.walk(base) for n in dirs + files}

    before = listing() if os.path.isdir(base) else set()
    rc = _extract(host, local_archive, extract_dir, errors)
    owner = default_owner(host)
    if owner != "BA":
        for local in sorted((listing() if os.path.isdir(base) else set()) - before):
            set_owner(host, host.win_path(local), owner)
    return rc


def _extract(host, local_archive, extract_dir, errors=None):
    """tar.exe -xf archive -C extract_dir (bsdtar reads .tgz and .zip alike). Returns tar's exit code.

    A member whose destination is in use (a running program) cannot be written: libarchive reports
    "Can't create '<path>'" for it, goes on with the other members and bsdtar exits 1 ("Error exit delayed
    from previous errors", bsdtar's read.c). The message is appended to ``errors``."""
    base = host.local_path(extract_dir)
    bad = False
    errors = [] if errors is None else errors

    def writable(dest):
        if in_use(host, dest):
            errors.append("tar.exe: %s: Can't create '\\\\?\\%s'" % (os.path.basename(dest), host.win_path(dest)))
            return False
        return True

    def target(parts):
        return host.local_path(extract_dir.rstrip("\\") + "\\" + "\\".join(parts))

    if zipfile.is_zipfile(local_archive):
        with zipfile.ZipFile(local_archive) as z:
            for info in z.infolist():
                parts = _member_target(info.filename)
                if parts is None:
                    bad = True
                    continue
                if not parts:
                    continue
                dest = target(parts)
                if info.is_dir():
                    os.makedirs(dest, exist_ok=True)
                    continue
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                if not writable(dest):
                    bad = True
                    continue
                with z.open(info) as src, open(dest, "wb") as out:
                    shutil.copyfileobj(src, out)
        return 1 if bad else 0
    try:
        archive = tarfile.open(local_archive, "r:*")
    except (tarfile.TarError, OSError):
        return 1  # "Unrecognized archive format"
    with archive:
        for member in archive.getmembers():
            parts = _member_target(member.name)
            if parts is None:
                bad = True
                continue
            if not parts:
                continue
            dest = target(parts)
            if member.isdir():
                os.makedirs(dest, exist_ok=True)
            elif member.isfile():
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                if not writable(dest):
                    bad = True
                    continue
                with archive.extractfile(member) as src, open(dest, "wb") as out:
                    shutil.copyfileobj(src, out)
            # links and devices: not produced by the release archives; skipped
    if not os.path.isdir(base):
        os.makedirs(base, exist_ok=True)
    return 1 if bad else 0


# --- who creates what: the token's default owner -------------------------------------------------------------
# The account the remote session runs as (a member of Administrators, not the built-in Administrator).
REMOTE_ACCOUNT = "S-1-5-21-1004336348-1177238915-682003330-1105"
# host.state["default_owner_policy"]: "Administrators group" (Windows Server's default) or "Object creator".
# Microsoft Learn, TOKEN_OWNER: "Whenever the process using this access token creates a new object, the object is
# owned by the Owner, unless the process provides a security descriptor for the object"; security policy setting
# "System objects: Default owner for objects created by members of the Administrators group": Administrators group
# or Object creator (the creator's own account; the default on client editions, and what some baselines set).
POLICY_ADMINISTRATORS, POLICY_CREATOR = "Administrators group", "Object creator"


def default_owner(host):
    """The owner of what the remote session creates without a security descriptor."""
    policy = host.state.get("default_owner_policy") or POLICY_ADMINISTRATORS
    return REMOTE_ACCOUNT if policy == POLICY_CREATOR else "BA"


def created(host, win_path):
    """Record the token's default owner on a file or directory the remote session just created without a
    security descriptor (WriteAllText/WriteAllBytes, Copy-Item, WebClient.DownloadFile, New-Item)."""
    owner = default_owner(host)
    if owner != "BA":  # BA is what an entry-less path reports
        set_owner(host, win_path, owner)


def set_owner_only(host, win_path, owner):
    """SetAccessControl with only the Owner section set (NativeObjectSecurity.Persist writes only what was set:
    the access rules stay as they are). A new owner needs WRITE_OWNER, as in set_security."""
    if owner != owner_of(host, win_path) and not _grants_write_owner_to_admins(effective_sddl(host, win_path)):
        raise AccessDenied("cannot make %s the owner of %s" % (owner, win_path))
    set_owner(host, win_path, owner)


# --- access checks for other tokens: a local user, a container's user ----------------------------------------------
# Rights an ACE grants, as masks (Microsoft Learn, "File Security and Access Rights", "ACE Strings").
_RIGHTS = {"FA": 0x1F01FF, "GA": 0x1F01FF, "FR": 0x120089, "GR": 0x120089, "FW": 0x120116, "GW": 0x120116,
           "FX": 0x1200A0, "GX": 0x1200A0, "SD": 0x10000, "RC": 0x20000, "WD": 0x40000, "WO": 0x80000}
FILE_READ_DATA, FILE_ADD_FILE, FILE_ADD_SUBDIRECTORY, DELETE, FILE_DELETE_CHILD = 0x1, 0x2, 0x4, 0x10000, 0x40
# A container's default non-administrator user (nanoserver's ContainerUser; moby/buildkit#4731) reaches the host
# files of its mounts with a token the host DACL is checked against (containerd/containerd#6183, #6256: "Filesystem
# permissions are enforced by the host filesystem"), and is a member of BUILTIN\Users, not of Administrators
# (kubernetes-csi/csi-proxy#382). The SID is the container's virtual account (S-1-5-93-2-2, ContainerUser).
CONTAINER_USER = "S-1-5-93-2-2"


def _mask(rights):
    if rights.lower().startswith("0x"):
        return int(rights, 16)
    mask = 0
    for code in re.findall("..", rights.upper()):
        mask |= _RIGHTS.get(code, 0)
    return mask


def token_allows(host, win_path, sids, want):
    """Whether a token holding ``sids`` (its user and groups) gets every right in ``want`` on an existing path,
    from its effective DACL: deny ACEs first (canonical order), CREATOR OWNER ACEs that were inherited apply to the
    object's owner (Windows replaces them with the creator's SID at creation), inherit-only ACEs do not apply; the
    owner may give itself anything (implicit READ_CONTROL and WRITE_DAC: Microsoft Learn, "Ownership of objects")."""
    sids = {s.upper() for s in sids}
    owner = owner_of(host, win_path).upper()
    if owner in sids:
        return True
    granted = 0
    aces = [a.split(";") for a in _ACE.findall(effective_sddl(host, win_path))]
    for fields in sorted(aces, key=lambda f: f[0] != "D"):
        if len(fields) < 6 or "IO" in re.findall("..", fields[1]):
            continue
        trustee = fields[5].upper()
        if trustee == "CO":
            trustee = owner
        if trustee not in sids:
            continue
        if fields[0] == "D" and _mask(fields[2]) & want:
            return False
        if fields[0] == "A":
            granted |= _mask(fields[2])
    return granted & want == want


# The connecting administrator's token (elevated): its account, Administrators and the groups every account has.
REMOTE_TOKEN = (REMOTE_ACCOUNT,) + _ADMIN_TOKEN


def local_user_token(sid):
    """A local non-administrator's token: the user, Users, Everyone, Authenticated Users, INTERACTIVE."""
    return (sid, "BU", "S-1-5-32-545", "WD", "S-1-1-0", "AU", "S-1-5-11", "IU", "S-1-5-4")


def container_user_token():
    """ContainerUser's token as the host sees it: the account, Users, Everyone, Authenticated Users. Bypass
    traverse checking is granted to Everyone by default (Microsoft Learn, "Bypass traverse checking"), so only
    the object itself is checked, not the directories above it."""
    return (CONTAINER_USER, "BU", "S-1-5-32-545", "WD", "S-1-1-0", "AU", "S-1-5-11")


def container_can_read(host, win_path):
    return token_allows(host, win_path, container_user_token(), FILE_READ_DATA)


def container_writes(host, win_dir, name, data="x"):
    """ContainerUser creates ``name`` in a mounted directory (FILE_ADD_FILE on it); the file gets the container
    user as its owner (TOKEN_OWNER). Raises SimError("Access is denied") otherwise."""
    if not token_allows(host, win_dir, container_user_token(), FILE_ADD_FILE):
        raise SimError("Access to the path '%s\\%s' is denied." % (win_dir, name))
    path = win_dir.rstrip("\\") + "\\" + name
    with open(host.local_path(path), "w") as f:
        f.write(data)
    set_owner(host, path, CONTAINER_USER)
    if not token_allows(host, path, container_user_token(), 0x2):  # FILE_WRITE_DATA on its own file
        raise SimError("Access to the path '%s' is denied." % path)
    return path


# --- a local user acting during a remote operation --------------------------------------------------------------
# host.state["local_user_acts"]: [{"when_listing": dir, "swap": dir, "target": dir, "user": SID, "skip": n}]:
# when a remote command lists ``when_listing`` (Get-ChildItem) for the n+1st time, the user first renames ``swap``
# away and puts a junction to ``target`` in its place (googleprojectzero/symboliclink-testing-tools,
# CreateMountPoint, BaitAndSwitch) -- if the simulated ACLs let them: DELETE on ``swap`` (or FILE_DELETE_CHILD on
# its parent) and FILE_ADD_SUBDIRECTORY on the parent. A junction is resolved each time a path is opened (Microsoft
# Learn, "Hard Links and Junctions"). Each act happens once; what it did is appended to host.state["local_user_log"].
def local_user_acts(host, listing, trigger="when_listing"):
    acts = host.state.get("local_user_acts") or []
    for act in list(acts):
        if trigger not in act or _key(act[trigger]) != _key(listing):
            continue
        if act.get("skip"):  # listings of that directory to let pass first
            act["skip"] -= 1
            continue
        acts.remove(act)
        swap, user = act["swap"], local_user_token(act["user"])
        local = host.local_path(swap)
        parent_dir = parent(swap)
        log = host.state.setdefault("local_user_log", [])
        if not os.path.isdir(local) or os.path.islink(local):
            log.append("nothing at %s" % swap)
            continue
        may_rename = token_allows(host, swap, user, DELETE) or token_allows(host, parent_dir, user, FILE_DELETE_CHILD)
        may_link = token_allows(host, parent_dir, user, FILE_ADD_SUBDIRECTORY)
        if not (may_rename and may_link):
            log.append("denied: %s" % swap)
            continue
        os.rename(local, local + ".moved-away")
        os.symlink(host.local_path(act["target"]), local, target_is_directory=True)
        set_owner(host, swap, act["user"])
        log.append("swapped: %s -> %s" % (swap, act["target"]))


# {"when_securing": dir, "swap": dir, "target": dir, "user": SID}: the same swap, when a remote command is about to
# set a security descriptor by the name ``when_securing`` (FileSystemInfo.SetAccessControl, after its own checks).


def named_security_target(host, win_path):
    """The object SetAccessControl writes to: .NET Framework persists by name (FileSystemSecurity.Persist(fullPath)
    -> NativeObjectSecurity.Persist -> SetNamedSecurityInfo; microsoft/referencesource filesecurity.cs,
    nativeobjectsecurity.cs), and a name is resolved, junctions included, each time it is opened (Microsoft Learn,
    "Hard Links and Junctions"): a junction at ``win_path`` gets its target's path written to."""
    local = host.local_path(win_path)
    if not os.path.islink(local):
        return win_path
    target = os.path.realpath(local)
    rel = os.path.relpath(target, os.path.realpath(host.drive))
    if rel.startswith(".."):
        raise SimError("the junction %s points outside the simulated drive" % win_path)
    return "C:\\" + ("" if rel == "." else rel.replace(os.sep, "\\"))


# host.state["local_user_acts"] may also hold {"when_creating": dir, "user": SID}: just before the remote command
# creates ``dir`` ([IO.Directory]::CreateDirectory), the user creates it (the race after a Test-Path), if they may
# add a subdirectory to its parent (FILE_ADD_SUBDIRECTORY); they own it (TOKEN_OWNER) and its rules are inherited.
# Directory.CreateDirectory then "returns a DirectoryInfo object for the existing directory" (Microsoft Learn) and
# applies no security descriptor: create_directory_secured leaves an existing directory as it is.
def local_user_creates(host, creating):
    acts = host.state.get("local_user_acts") or []
    for act in list(acts):
        if "when_creating" not in act or _key(act["when_creating"]) != _key(creating):
            continue
        acts.remove(act)
        log = host.state.setdefault("local_user_log", [])
        local, parent_dir = host.local_path(creating), parent(creating)
        if os.path.lexists(local) or not os.path.isdir(host.local_path(parent_dir)):
            log.append("nothing to do: %s" % creating)
            continue
        if not token_allows(host, parent_dir, local_user_token(act["user"]), FILE_ADD_SUBDIRECTORY):
            log.append("denied: %s" % creating)
            continue
        os.mkdir(local)
        set_owner(host, creating, act["user"])
        log.append("created: %s" % creating)
