# -*- coding: utf-8 -*-
# Test-lab only: Python implementations of kubewin.nodes' PowerShell scripts.
"""kubewin.nodes scripts, dispatched by the id in their header line
(``# kubewin.nodes script: <id>``, see kubewin.nodes win_scripts.script_id).

Only files_state and node_sync are still here: the other scripts run as written through the lab's
PowerShell interpreter (tests/lab/winsim/ps; the win_powershell stand-in's INTERPRETED list).

To add one: write ``def my_id(host, params, check_mode): ... return result_dict`` honouring the
script's documented contract, and register it with ``@script("my_id")``. Raise SimError for what
would be a terminating PowerShell error. ``check_mode`` is only ever true for scripts that declare
SupportsShouldProcess (win_powershell skips the others); such a script must change nothing then.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import binascii
import os
import shutil

from ansible_collections.ansible.windows.plugins.module_utils import (
    winsim_binaries,
    winsim_files,
    winsim_scm,
)
from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError, is_pipe

HEADER_PREFIX = "# kubewin.nodes script: "
IMPLEMENTATIONS = {}


def script(script_id):
    def register(fn):
        IMPLEMENTATIONS[script_id] = fn
        return fn
    return register


def script_id(text):
    first = text.lstrip().splitlines()[0] if text.strip() else ""
    return first[len(HEADER_PREFIX):].strip() if first.startswith(HEADER_PREFIX) else None


# --- helpers of files_state / node_sync -----------------------------------------------------
def _string_list(params, name):
    value = params.get(name)
    if value in (None, ""):
        return []
    return [value] if isinstance(value, str) else [str(v) for v in value]


def _test_path(host, path, leaf=None):
    """Test-Path -LiteralPath (-PathType Leaf/Container when leaf is True/False)."""
    if is_pipe(path):
        name = str(path)[len("\\\\.\\pipe\\"):].lower()
        return leaf is not False and any(p.lower() == "\\\\.\\pipe\\" + name for p in host.state.get("pipes") or [])
    local = winsim_files.resolve(host, path)
    if local is None:
        return False
    if leaf is None:
        return os.path.exists(local)
    return os.path.isfile(local) if leaf else os.path.isdir(local)


# --- files_state / node_sync ---------------------------------------------------------------------
@script("files_state")
def files_state(host, params, check_mode):
    links = []

    def entry(path):
        """Get-Entry: Get-Item -Force -ErrorAction Stop, null on ItemNotFoundException, noting a reparse
        point. Get-Item reads a link itself (GetFileAttributesEx does not follow it), so a dangling link is
        found too. (Get-Item's other failures, 'unreadable', are not simulated.)"""
        local = winsim_files.resolve(host, path)
        if local is None or not os.path.lexists(local):
            return None
        if os.path.islink(local) and path not in links:
            links.append(path)
        return local

    def security(path, local, want_dir):
        """Get-Security on a directory (want_dir) or a file; through a link GetAccessControl opens the target,
        so a dangling one cannot be read. A POSIX link does not say whether it was a file or directory link:
        a dangling one answers 'unreadable' for both, which no check accepts."""
        if not local:
            return None
        if not os.path.exists(local):
            return "unreadable"
        if os.path.isdir(local) != want_dir:
            return None
        return winsim_files.read_security(host, path)

    paths = {}
    for path in _string_list(params, "Paths"):
        entry(path)
        paths[path] = _path_kind(host, path)
    files = {}
    for path in _string_list(params, "Files"):
        local = entry(path)
        # a link is never hashed (Get-FileHash cannot read a dangling one); a directory is reported as such
        if not local or path in links:
            files[path] = None
        elif os.path.isdir(local):
            files[path] = "directory"
        else:
            files[path] = winsim_files.sha512_file(local)
    dirs = {}
    for path in _string_list(params, "Dirs"):
        dirs[path] = security(path, entry(path), True)
    acls = {}
    for path in _string_list(params, "Acls"):
        acls[path] = security(path, entry(path), False)
    owners = _string_list(params, "Owners")
    scan = {}
    for root in _string_list(params, "Scan"):
        hits, pending = [], [root]
        while pending and len(hits) < 20:
            current = pending.pop()
            local = host.local_path(current)
            for name in sorted(os.listdir(local), key=lambda n: n.upper()):
                if len(hits) >= 20:
                    break
                child = current.rstrip("\\") + "\\" + name
                link = os.path.islink(os.path.join(local, name))
                owner = winsim_files.read_owner(host, child)
                if link or owner not in owners:
                    hits.append({"path": child, "owner": owner, "link": link})
                if os.path.isdir(os.path.join(local, name)) and not link:
                    pending.append(child)
        scan[root] = hits
    return {"changed": False, "result": {"files": files, "dirs": dirs, "paths": paths, "acls": acls,
                                         "links": links, "scan": scan}}


def _path_kind(host, path):
    """Get-Item -Force (hidden items too): null, 'file', 'dir' (anything inside) or 'empty-dir'.
    Another drive answers null (Get-Item -ErrorAction SilentlyContinue)."""
    local = winsim_files.resolve(host, path)
    if local is None or not os.path.exists(local):
        return None
    if not os.path.isdir(local):
        return "file"
    return "dir" if os.listdir(local) else "empty-dir"


def _entries(params, name, fields):
    value = params.get(name)
    if value in (None, ""):
        return []
    if isinstance(value, dict):
        value = [value]
    out = []
    for item in value:
        if not isinstance(item, dict):
            raise SimError("winsim: node_sync %s entries must be objects with %s, got %r" % (name, fields, item))
        out.append(item)
    return out


@script("node_sync")
def node_sync(host, params, check_mode):
    proxy = params.get("Proxy") or ""
    bypass = _string_list(params, "ProxyBypass")
    for d in _entries(params, "Dirs", "path, sddl"):
        if not d.get("sddl"):
            winsim_files.new_directory(host, d["path"])
        elif _test_path(host, d["path"]):
            if winsim_files.is_link(host, d["path"]):
                raise SimError("%s is a junction, symbolic link or volume mount point (a reparse point): not "
                               "following it" % d["path"])
            if not os.path.isdir(winsim_files.resolve(host, d["path"])):
                raise SimError("%s is a file, not a directory: move it away, then re-run" % d["path"])
            winsim_files.set_security(host, d["path"], d["sddl"])
        else:
            winsim_files.create_directory_secured(host, d["path"], d["sddl"])
    for path in _string_list(params, "Discard"):
        local = winsim_files.resolve(host, path)
        if local is not None and os.path.lexists(local):  # Get-Item: a dangling link is there too
            _remove_tree(host, path)
    for dl in _entries(params, "Downloads", "url, dest, sha512, extract_dir"):
        url, dest = dl["url"], dl["dest"]
        tmp = "%s.kubewin-download" % dest
        winsim_files.new_directory(host, winsim_files.parent(dest))
        local_tmp = host.local_path(tmp)
        if winsim_files.is_local_or_unc(url):
            winsim_files.copy_item(host, url, local_tmp)
        else:
            winsim_files.http_download(url, local_tmp, proxy, bypass)
        got = winsim_files.sha512_file(local_tmp)
        if got != str(dl.get("sha512") or "").lower():  # PowerShell's -ne ignores case
            os.remove(local_tmp)
            raise SimError("checksum mismatch for %s: expected sha512 %s, got %s" % (url, dl.get("sha512"), got))
        if dl.get("extract_dir"):
            winsim_files.new_directory(host, dl["extract_dir"])
            rc = winsim_files.extract(host, local_tmp, dl["extract_dir"])
            if rc != 0:
                raise SimError("tar.exe could not unpack %s (exit code %d)" % (url, rc))
            os.remove(local_tmp)
            with open(local_tmp, "w") as f:  # WriteAllText: UTF-8, no BOM, no newline
                f.write(dl["sha512"])
        _install_file(host, local_tmp, dest)
    for f in _entries(params, "Files", "path, content, sddl"):
        winsim_files.new_directory(host, winsim_files.parent(f["path"]))
        try:
            data = base64.b64decode(f.get("content") or "", validate=True)
        except (binascii.Error, ValueError):
            raise SimError('Exception calling "FromBase64String" with "1" argument(s): "The input is not a valid '
                           'Base-64 string as it contains a non-base 64 character, more than two padding characters, '
                           'or an illegal character among the padding characters."') from None
        local_tmp = host.local_path(f["path"] + ".kubewin-new")
        if os.path.exists(local_tmp):
            os.remove(local_tmp)
        with open(local_tmp, "wb") as out:
            out.write(data)
        if f.get("sddl"):
            # FileStream(..., FileSecurity): the new file has these access rules from its creation;
            # an existing destination gets them before the content replaces it
            winsim_files.set_security(host, f["path"] + ".kubewin-new", f["sddl"])
            if os.path.isfile(host.local_path(f["path"])):
                winsim_files.set_security(host, f["path"], f["sddl"])
        _install_file(host, local_tmp, f["path"])
    for path in _string_list(params, "Remove"):
        if _test_path(host, path):
            _remove_tree(host, path)
    for path in _string_list(params, "Prune"):
        local = winsim_files.resolve(host, path)
        if _test_path(host, path, leaf=False) and not os.listdir(local):
            winsim_files.remove_item(host, path, recurse=False, locked=set())
    return {"changed": True, "result": {}}


def _remove_tree(host, path):
    """Remove-Tree: a link (junction or symbolic link) is deleted itself, never followed; a directory's
    entries go first (Get-ChildItem: NTFS order), then the directory; a file with Remove-Item -Force."""
    local = winsim_files.resolve(host, path)
    locked = winsim_binaries.locked_files(host)
    if os.path.islink(local):
        winsim_files.delete_link(host, local)
    elif os.path.isdir(local):
        # Windows PowerShell 5.1's FileSystem provider lists a directory's subdirectories, then its files
        names = sorted(os.listdir(local), key=lambda n: n.upper())
        for name in sorted(names, key=lambda n: not os.path.isdir(os.path.join(local, n))):
            _remove_tree(host, path.rstrip("\\") + "\\" + name)
        winsim_files.remove_item(host, path, recurse=False, locked=locked)
    else:
        winsim_files.remove_item(host, path, recurse=False, locked=locked)


def _install_file(host, local_tmp, win_dest):
    """Install-File: [IO.File]::Replace onto an existing file (which keeps the destination's own
    access rules: ReplaceFile preserves the replaced file's DACL), else [IO.File]::Move (a rename on
    the same volume keeps the new file's access rules)."""
    local = host.local_path(win_dest)
    # a directory, or a link that leads nowhere (Test-Path -PathType Leaf is false, and MoveFileW refuses an
    # existing name: Microsoft Learn, MoveFileW, ERROR_ALREADY_EXISTS)
    if os.path.isdir(local) or (os.path.islink(local) and not os.path.exists(local)):
        raise SimError('Exception calling "Move" with "2" argument(s): "Cannot create a file when that file already '
                       'exists."')
    if os.path.isfile(local):
        # The program of a running service cannot be replaced: ReplaceFile must remove the replaced
        # file (Microsoft Learn, ReplaceFileW: ERROR_UNABLE_TO_REMOVE_REPLACED), which Windows refuses
        # for a running image. Not verified on a host; the stricter choice.
        if os.path.normcase(os.path.abspath(local)) in winsim_binaries.locked_files(host):
            os.remove(local_tmp)
            raise SimError('Exception calling "Replace" with "3" argument(s): "Unable to remove the file to be '
                           'replaced. (%s)"' % win_dest)
        with open(local_tmp, "rb") as src, open(local, "wb") as out:  # in place: the destination keeps its identity
            shutil.copyfileobj(src, out)
        os.remove(local_tmp)
        return
    tmp_key = winsim_files.sddl_key(win_dest + ".kubewin-new")
    sddl = winsim_files.explicit_sddl(host, win_dest + ".kubewin-new")
    owner = winsim_files.owner_of(host, win_dest + ".kubewin-new")
    os.rename(local_tmp, local)
    (host.state.get("sddl") or {}).pop(tmp_key, None)
    (host.state.get("owner") or {}).pop(tmp_key, None)
    if sddl:
        winsim_files.set_sddl(host, win_dest, sddl)
    if owner != "BA":  # BA is what an entry-less path reports
        winsim_files.set_owner(host, win_dest, owner)


def run_script(host, text, params, check_mode):
    """Dispatch a win_powershell script; an unknown script fails loudly (the lab cannot run PowerShell)."""
    sid = script_id(text)
    if sid is None:
        raise SimError("winsim cannot run this PowerShell script: it has no '%s<id>' header line, so no Python "
                       "implementation can be chosen. First line: %r" % (HEADER_PREFIX, text.strip()[:80]))
    impl = IMPLEMENTATIONS.get(sid)
    if impl is None:
        raise SimError("winsim has no implementation of kubewin.nodes script %r (known: %s); add one to "
                       "tests/lab/winsim/.../module_utils/winsim_scripts.py"
                       % (sid, ", ".join(sorted(IMPLEMENTATIONS))))
    host.fault("script:" + sid)
    winsim_scm.refresh(host)  # services that exited since the last call show it now
    return impl(host, params or {}, check_mode)


def b64(data):
    return base64.b64encode(data).decode("ascii")
