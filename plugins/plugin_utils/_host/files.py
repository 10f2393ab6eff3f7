# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Decisions about a node's directories, verified downloads and configuration files.

Every file is compared by SHA-512, so a re-run downloads and writes nothing. Where a download's
checksum and proxy come from is plugin_utils/_downloads.py.
"""

from __future__ import annotations

import base64
import hashlib
import re

from ansible_collections.kubewin.nodes.plugins.plugin_utils._host.network import json_text

# Administrators and SYSTEM only, not inherited: for C:\k, C:\etc\kubernetes, C:\var\lib\kubelet
# and files holding credentials.
RESTRICTED_DIR_SDDL = "D:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)"
RESTRICTED_FILE_SDDL = "D:PAI(A;;FA;;;SY)(A;;FA;;;BA)"
# The kubelet's pods directory (pod volumes: service-account tokens, secrets, configMaps, emptyDir). A
# process-isolated container reaches its mounts through the host file system, checked against the container's
# token (containerd/containerd#6183, #6256), and ContainerUser, nanoserver's default user, is a member of
# BUILTIN\Users, not of Administrators (kubernetes-csi/csi-proxy#382): Users read everything below it, may add
# files and folders in the directories below it (an emptyDir; kubernetes-sigs/windows-testing#35 gave Users write
# on the kubelet's directory for the same reason), and the creator of a file there has full control of it (as
# below C:\). Protected, so it does not depend on what the kubelet's directory (SYSTEM and Administrators only:
# its pki holds the kubelet's keys) passes on. Local users can read pod volumes by path ("Bypass traverse
# checking" is granted to Everyone by default): docs/operations.md.
PODS_DIR_SDDL = "D:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICI;0x1200a9;;;BU)(A;CIIO;0x6;;;BU)(A;OICIIO;FA;;;CO)"
# Restricted directories whose access rules are not RESTRICTED_DIR_SDDL.
_DIR_SDDL = {"c:\\var\\lib\\kubelet\\pods": PODS_DIR_SDDL}


def unscanned_below(path):
    """The directories below ``path`` that node_sync's scan of it does not enter (the pods directory: its content
    is the kubelet's and the containers', review R1)."""
    root = path.lower().rstrip("\\") + "\\"
    return [p for p in sorted(_DIR_SDDL) if p.startswith(root)]


def restricted_dir_sddl(path):
    """The access rules of a restricted directory (owner Administrators): RESTRICTED_DIR_SDDL, or the pods
    directory's."""
    return _DIR_SDDL.get(path.lower().rstrip("\\"), RESTRICTED_DIR_SDDL)


# Owner of every restricted directory and of every file in one. The owner of an object always keeps
# READ_CONTROL and WRITE_DAC on it (Microsoft Learn, "Ownership of objects" / DACLs and ACEs), so a user
# who owns C:\k could give themselves access again whatever its DACL says: the owner is part of the
# protection. BA is the SID an elevated administrator may assign (the Administrators group carries
# SE_GROUP_OWNER in its token), and the default owner of what members of Administrators create on
# Windows Server ("System objects: Default owner for objects created by members of the Administrators
# group").
RESTRICTED_OWNER = "BA"
# Owners that are fine for what the collection installs, and for the directories above it:
# Administrators, SYSTEM, TrustedInstaller (owner of C:\Program Files, where a runtime's CNI
# directories may be).
TRUSTED_OWNERS = ("BA", "SY", "S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464")


def owned(dacl):
    """An SDDL with the restricted owner and the given DACL, for node_sync ('Owner, Access')."""
    return "O:%s%s" % (RESTRICTED_OWNER, dacl)


class HostFilesError(Exception):
    """Input or a checksum that cannot be used; the message names the URL and the fix."""


def windows_basename(path):
    return re.split(r"[\\/]", path.rstrip("\\/"))[-1]


def stamp_path(entry):
    """Where an unpacked archive records which archive it came from."""
    return "%s\\.kubewin-%s.sha512" % (entry["extract_dir"].rstrip("\\"), windows_basename(entry["url"]))


def expected_file_hash(entry):
    """SHA-512 the destination must have when the download is in place (a stamp holds the archive's checksum in
    hex: its SHA-512, or its SHA-256 when the download is checked with that)."""
    if entry["extract_dir"]:
        return hashlib.sha512((entry.get("sha256") or entry["sha512"]).encode()).hexdigest()
    return entry["sha512"]


_SDDL_DACL = re.compile(r"^D:(?P<flags>[A-Z_]*)(?P<aces>(?:\([^()]*\))*)$")
_SDDL_OWNER = re.compile(r"^O:(?P<owner>[A-Z]{2}|S-1-[0-9-]+)(?P<rest>.*)$")


def split_security(sddl):
    """'O:BAD:P(...)' (GetSecurityDescriptorSddlForm('Owner, Access')) -> ('BA', 'D:P(...)').

    No owner section (or an unreadable descriptor) gives owner None, which no check accepts."""
    if sddl is None:
        return None, None
    m = _SDDL_OWNER.match(sddl.strip())
    if not m:
        return None, sddl.strip()
    return m.group("owner").upper(), m.group("rest")


def trusted_owner(owner):
    return owner is not None and owner.upper() in [o.upper() for o in TRUSTED_OWNERS]


def file_text(content):
    """The text a file entry's content stands for: itself, or for a JSON document the templating decoded on
    the way (ansible-core 2.18 turns a filter's JSON text without true/false/null into a dict) the text
    host_network.json_text writes, which every JSON-producing filter uses."""
    return content if isinstance(content, str) else json_text(content)


def restricted_file_secured(security):
    """Whether a file's security descriptor ('O:..D:...' as files_state reads it) is what a restricted
    file gets: a trusted owner and Administrators-and-SYSTEM-only access rules."""
    owner, acl = split_security(security)
    return trusted_owner(owner) and access_matches(acl, RESTRICTED_FILE_SDDL)


def access_matches(live, want):
    """Whether the access rules (SDDL 'Access' section) a file or directory has are the ones wanted.

    Compared as what grants access: the protected flag (P: nothing inherited) and the set of access
    entries. AI and AR only record how inheritance was computed, and Windows may set AI itself when
    it stores a DACL (SetSecurityInfo), so they are ignored. Anything unreadable differs.
    """
    if live is None or want is None:
        return live == want
    parsed = []
    for sddl in (live, want):
        m = _SDDL_DACL.match(sddl.strip())
        if not m:
            return False
        flags = set(re.findall(r"NO_ACCESS_CONTROL|AI|AR|P", m.group("flags"))) - {"AI", "AR"}
        parsed.append((flags, sorted(a.upper() for a in re.findall(r"\(([^()]*)\)", m.group("aces")))))
    return parsed[0] == parsed[1]


def _inside(path, parent):
    path, parent = path.lower().rstrip("\\"), parent.lower().rstrip("\\")
    return path == parent or path.startswith(parent + "\\")


def _ancestors(path):
    """The directories above a path, below the drive root: C:\\var\\log\\kubelet -> C:\\var, C:\\var\\log."""
    parts = [p for p in re.split(r"[\\/]+", path) if p]
    return ["\\".join(parts[:i]) for i in range(2, len(parts))]


def _guarded_ancestors(directories):
    own = {d["path"].lower() for d in directories}
    out = []
    for d in directories:
        if d["restricted"]:
            for a in _ancestors(d["path"]):
                if a.lower() not in own and a not in out:
                    out.append(a)
    return out


# What files_state reports for a path it could not read (Get-Item, the security descriptor or the content):
# never "absent", and an owner no check accepts (split_security gives None).
UNREADABLE = "unreadable"
# What files_state reports in "files" for a directory at a file's destination.
DIRECTORY = "directory"


def _link_error(path):
    return HostFilesError(
        "%s is a junction or symbolic link (a reparse point), so what is written there would land wherever it "
        "points: someone planted it. Remove the link itself (cmd /c rmdir \"%s\" for a directory link, del for a "
        "file link: neither touches the target), check the target, and re-run. A volume mount point (a disk "
        "mounted on this folder) is a reparse point too and cannot be told apart: kubewin.nodes does not protect "
        "what lies on another volume there; remove the mount point (mountvol \"%s\" /D: the volume and its data "
        "stay), give the volume a drive letter or mount it elsewhere, and re-run" % (path, path, path))


def _unreadable_error(path):
    return HostFilesError(
        "%s cannot be read by Administrators (its owner took away their access), so kubewin.nodes cannot tell who "
        "controls it. Run takeown /F \"%s\" /A as an administrator (Administrators become its owner, nothing "
        "below it changes), check what it holds, then re-run" % (path, path))


def scan_needed(directories, state):
    """Restricted directories that exist but were not protected (another owner, or access rules that let
    others write): a user may have put something in them meanwhile, so files_state lists their content."""
    live_dirs = state.get("dirs") or {}
    links = set(state.get("links") or [])
    out = []
    for d in directories:
        live = live_dirs.get(d["path"])
        if not d["restricted"] or live in (None, UNREADABLE) or d["path"] in links:
            continue
        if restricted_dir_sddl(d["path"]) != RESTRICTED_DIR_SDDL:
            # the pods directory holds, by design, what other principals make: the kubelet's AtomicWriter links
            # (..data, each key: pkg/volume/util/atomic_writer.go) and files owned by a container's user
            # (containerd/containerd#8171): never listed (review R1)
            continue
        owner, dacl = split_security(live)
        if not trusted_owner(owner) or not access_matches(dacl, restricted_dir_sddl(d["path"])):
            out.append(d["path"])
    return out


def plan(directories, downloads, files, state, absent=(), prune=(), forget_transport_key=False):
    """Compare with the files_state answer; return the node_sync parameters and a report.

    ``downloads`` are resolved entries; ``absent`` paths go with all they hold; ``prune`` directories
    go only if empty once ``absent`` is done (so a directory the user put files in stays).
    A restricted directory gets owner Administrators and the restricted access rules, also when it already
    existed with another owner; a directory above one must not be a link or belong to another user (who
    could rename the protected directory away), and what a user could have put in a directory that was
    not protected (:func:`scan_needed`) is listed by node_sync once it is secured, when nobody else can add to it
    (its Dirs entry's ``scan``), and stops the run there: it would run as SYSTEM.
    A file or download whose destination has another owner, or is a link, is discarded and written again.
    With ``forget_transport_key`` (reset) node_sync always runs and deletes the host's transport key if there is
    one: every facts read makes it again, so it is not counted as a change (as its making is not).
    Returns (params, report); params is None when nothing is to do. Raises HostFilesError.
    """
    live_files = state.get("files") or {}
    live_dirs = state.get("dirs") or {}
    live_paths = state.get("paths") or {}
    live_acls = state.get("acls") or {}
    links = set(state.get("links") or [])
    dirs, fetches, writes, discard = [], [], [], []
    report = {"directories": [], "downloads": [], "files": [], "removed": [], "before": {}, "after": {}}
    for path in _guarded_ancestors(directories):
        if path in links:
            raise _link_error(path)
        if live_dirs.get(path) == UNREADABLE:
            raise _unreadable_error(path)
        owner = split_security(live_dirs.get(path))[0]
        if live_dirs.get(path) is not None and not trusted_owner(owner):
            who = owner or "an unknown owner"
            raise HostFilesError(
                "%s belongs to %s, not to Administrators or SYSTEM: its owner can rename the directories kubewin.nodes "
                "protects below it and put their own in place. Make Administrators its owner (takeown /F %s /A) and "
                "remove other users' write access, or delete it, then re-run" % (path, who, path))
    for d in directories:
        if d["restricted"] and d["path"] not in links and live_dirs.get(d["path"]) == UNREADABLE:
            raise _unreadable_error(d["path"])
    unprotected = set(scan_needed(directories, state))
    for d in directories:
        sddl = restricted_dir_sddl(d["path"]) if d["restricted"] else ""
        live = live_dirs.get(d["path"])
        if d["path"] in links and d["restricted"]:
            raise _link_error(d["path"])
        owner, dacl = split_security(live)
        if live is None or (sddl and not (trusted_owner(owner) and access_matches(dacl, sddl))):
            scan = d["path"] in unprotected
            dirs.append({"path": d["path"], "sddl": owned(sddl) if sddl else "", "scan": scan,
                         "skip": unscanned_below(d["path"]) if scan else []})
            report["directories"].append(d["path"])
            report["before"][d["path"]] = "absent" if live is None else "owner: %s, access: %s" % (owner, dacl)
            report["after"][d["path"]] = "directory" + (
                ", owner: %s, access: %s" % (RESTRICTED_OWNER, sddl) if sddl else "")

    def foreign(path):
        """An existing destination another user owns (or a link): replaced, not reused."""
        return path in links or not trusted_owner(split_security(live_acls.get(path))[0])

    def taken(path, have):
        """A link (files_state never reads through one, so ``have`` is None) or a file another user owns (or
        that cannot be read) at a destination: discarded first. A directory there is never deleted."""
        if path in links:
            return True
        if have == DIRECTORY:
            raise HostFilesError(
                "%s is a directory, where kubewin.nodes puts a file; it does not delete directories it did not make: "
                "move it away (or delete it if it is yours to delete), then re-run" % path)
        return have is not None and foreign(path)

    def was(path, have):
        if path in links:
            return "link"
        return "absent" if have is None else UNREADABLE if have == UNREADABLE else "sha512:%s" % have

    for entry in downloads:
        want = expected_file_hash(entry)
        have = live_files.get(entry["dest"])
        discarded = taken(entry["dest"], have)
        if have != want or discarded:
            fetches.append(entry)
            if discarded:
                discard.append(entry["dest"])
            report["downloads"].append(entry["dest"])
            report["before"][entry["dest"]] = was(entry["dest"], have)
            report["after"][entry["dest"]] = "sha512:%s from %s" % (want, entry["url"])
            if entry.get("sha256"):
                report["after"][entry["dest"]] += " (archive sha256:%s)" % entry["sha256"]
            if discarded:
                report["before"][entry["dest"]] += ", owner: %s" % split_security(live_acls.get(entry["dest"]))[0]
                report["after"][entry["dest"]] += ", owner: %s" % RESTRICTED_OWNER
    for f in files:
        f = dict(f, content=file_text(f["content"]))
        data = f["content"].encode("utf-8")
        want = hashlib.sha512(data).hexdigest()
        have = live_files.get(f["path"])
        sddl = RESTRICTED_FILE_SDDL if f["restricted"] else ""
        # A restricted file whose access rules drifted (or were never set) is written again: the
        # rewrite sets them before the content lands. One another user owns is discarded first.
        owner, acl = split_security(live_acls.get(f["path"]))
        discarded = taken(f["path"], have)
        drifted = bool(sddl) and have is not None and not access_matches(acl, sddl)
        if have != want or drifted or discarded:
            writes.append({"path": f["path"], "content": base64.b64encode(data).decode("ascii"),
                           "sddl": owned(sddl) if sddl else ""})
            if discarded:
                discard.append(f["path"])
            report["files"].append(f["path"])
            if f["secret"]:
                report["before"][f["path"]] = "(secret)" if have else was(f["path"], have)
                report["after"][f["path"]] = "(secret, changed)" if have != want else "(secret)"
            else:
                report["before"][f["path"]] = was(f["path"], have)
                report["after"][f["path"]] = f["content"]
            if drifted or discarded:
                report["before"][f["path"]] += ", owner: %s, access: %s" % (owner, acl or "unknown")
                report["after"][f["path"]] += ", owner: %s, access: %s" % (RESTRICTED_OWNER, sddl or "inherited")
    remove = [p for p in absent if live_paths.get(p)]
    for p in remove:
        report["removed"].append(p)
        report["before"][p], report["after"][p] = live_paths[p], "absent"
    # A directory is pruned when it is empty now, or holds nothing but what is removed above.
    pruned = [p for p in prune if live_paths.get(p) == "empty-dir"
              or (live_paths.get(p) == "dir" and any(_inside(r, p) for r in remove))]
    if not (dirs or fetches or writes or remove or pruned or forget_transport_key):
        return None, report
    report["removed"].extend(p for p in pruned if p not in report["removed"])
    # RootSddl: what each directory Remove walks gets before it is listed (and refused if others own what is in it)
    return {"Dirs": dirs, "Discard": discard, "Downloads": fetches, "Files": writes, "Remove": remove,
            "Prune": [p for p in prune if live_paths.get(p)], "RootSddl": owned(RESTRICTED_DIR_SDDL),
            "Owners": list(TRUSTED_OWNERS), "ForgetTransportKey": bool(forget_transport_key)}, report


def assumed_present(absent=(), prune=()):
    """A files_state answer that takes every path of ``absent`` and ``prune`` as there: what plan then
    gives node_sync removes each one that is there (Remove) and each directory of ``prune`` found empty (Prune), and
    node_sync's answer says which were (its ``removed``). For a removal without a read of its own."""
    paths = {p: "dir" for p in absent}
    paths.update((p, "empty-dir") for p in prune)  # each goes to Prune; node_sync removes it only if empty then
    return {"files": {}, "dirs": {}, "acls": {}, "links": [], "paths": paths}


def state_query(directories, downloads, files, absent=(), prune=()):
    """Parameters of the files_state script for everything this task manages: the owner and access rules of
    every directory (and of those above a restricted one) and of every file it puts in place."""
    installed = [d["dest"] for d in downloads] + [f["path"] for f in files]
    return {"Files": installed,
            "Dirs": [d["path"] for d in directories] + _guarded_ancestors(directories),
            "Paths": list(absent) + list(prune),
            "Acls": installed}
