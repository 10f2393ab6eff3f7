# -*- coding: utf-8 -*-
# Test-lab only: Python implementations of kubewin.nodes' PowerShell scripts.
"""kubewin.nodes scripts, dispatched by the id in their header line
(``# kubewin.nodes script: <id>``, see kubewin.nodes win_scripts.script_id).

To add one: write ``def my_id(host, params, check_mode): ... return result_dict`` honouring the
script's documented contract, and register it with ``@script("my_id")``. Raise SimError for what
would be a terminating PowerShell error. ``check_mode`` is only ever true for scripts that declare
SupportsShouldProcess (win_powershell skips the others); such a script must change nothing then.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import binascii
import json
import os
import re
import shutil

from ansible_collections.ansible.windows.plugins.module_utils import (
    winsim_binaries,
    winsim_files,
    winsim_hns,
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


@script("hns_state")
def hns_state(host, params, check_mode):
    return {"changed": False, "result": {
        "networks": winsim_hns.call(host.state, "GET", "/networks/", ""),
        "endpoints": winsim_hns.call(host.state, "GET", "/endpoints/", ""),
        "policylists": winsim_hns.call(host.state, "GET", "/policylists/", ""),
    }}


@script("hns_calls")
def hns_calls(host, params, check_mode):
    calls = params.get("Calls")
    if not calls:
        raise SimError("Cannot bind argument to parameter 'Calls' because it is an empty array.")
    responses = []
    for c in calls:
        answer = winsim_hns.call(host.state, c["method"], c["path"], c.get("request") or "")
        responses.append(answer)
        if not json.loads(answer)["Success"]:
            break
    return {"changed": True, "result": {"responses": responses}}


@script("service_state")
def service_state(host, params, check_mode):
    name = _mandatory(params, "Name")
    result = {"exists": False, "flags_file_content": None}
    flags_file = params.get("FlagsFile") or ""
    if flags_file:
        path = host.local_path(flags_file)
        import os
        if os.path.isfile(path):
            with open(path, "rb") as f:
                result["flags_file_content"] = f.read().decode("utf-8-sig")
    svc = winsim_scm.find(host.state, name)
    if svc:
        result.update(
            exists=True, status=svc["status"], image_path=svc["image_path"], start=svc["start"],
            delayed_autostart=svc["delayed_autostart"], dependencies=list(svc["dependencies"]),
            display_name=svc["display_name"], description=svc["description"], object_name=svc["object_name"],
            environment=list(svc.get("environment") or []),
            # $params.GetValue($value): REG_SZ -> text, REG_MULTI_SZ -> string[] (a JSON list)
            parameters={k: (list(v) if isinstance(v, list) else v) for k, v in (svc.get("parameters") or {}).items()},
            failure_actions=svc["failure_actions"], failure_actions_on_non_crash=svc["failure_actions_on_non_crash"])
    return {"changed": False, "result": result}


@script("service_apply")
def service_apply(host, params, check_mode):
    state = host.state
    name = _mandatory(params, "Name")
    action = _mandatory(params, "Action")
    if action not in ("create", "update", "remove", "none"):
        raise SimError("Cannot validate argument on parameter 'Action'. The argument \"%s\" does not belong to the "
                       "set \"create,update,remove,none\"" % action)
    run = params.get("Run") or "none"
    if action == "remove":
        if winsim_scm.find(state, name):
            winsim_scm.stop(host, name, force=True)
            if winsim_scm.find(state, name):
                winsim_scm.delete(state, name)
        return {"changed": True, "result": {"status": "Absent"}}
    # Stop-Service -Force stops the dependents first; a restart starts those that were running again
    # (ServiceController.DependentServices lists direct and indirect dependents).
    restart_dependents = []
    if run in ("stop", "restart") and winsim_scm.find(state, name):
        if run == "restart" and winsim_scm.find(state, name)["status"] != "Stopped":
            restart_dependents = [d["name"] for d in _all_dependents(state, winsim_scm.find(state, name)["name"])
                                  if d["status"] == "Running"]
        winsim_scm.stop(host, name, force=True)
    deps = params.get("Dependencies") or []
    if isinstance(deps, str):
        deps = [deps]
    if action == "create":
        winsim_scm.create(state, name, params.get("CommandLine") or "", params.get("DisplayName") or "",
                          start=2, dependencies=deps)
    elif action == "update":
        svc = winsim_scm.require(state, name)  # Win32_Service.Change
        svc.update(image_path=params.get("CommandLine") or "", display_name=params.get("DisplayName") or svc["name"],
                   start=2, dependencies=list(deps), delayed_autostart=0)
    if action != "none":
        winsim_scm.require(state, name)["description"] = params.get("Description") or ""
        # Set-ItemProperty -Type MultiString, or Remove-ItemProperty when the list is empty
        winsim_scm.require(state, name)["environment"] = _environment(params.get("Environment"))
        _set_parameters(winsim_scm.require(state, name), params.get("Parameters"), params.get("ParameterTypes"))
        if params.get("FailureActions"):
            svc = winsim_scm.require(state, name)
            actions = winsim_scm.parse_sc_actions(params["FailureActions"])
            svc["failure_actions"] = winsim_scm.encode_failure_actions(int(params.get("FailureResetSeconds", 86400)),
                                                                      actions)
            svc["failure_actions_on_non_crash"] = 1
    if run in ("start", "restart"):
        winsim_scm.start(host, name)
        for dependent in restart_dependents:
            winsim_scm.start(host, dependent)
    return {"changed": True, "result": {"status": winsim_scm.require(state, name)["status"],
                                        "restarted_dependents": restart_dependents}}


def _all_dependents(state, name, seen=None):
    """ServiceController.DependentServices: EnumDependentServices lists indirect dependents too."""
    seen = [] if seen is None else seen
    for d in winsim_scm.dependents(state, name):
        if d not in seen:
            seen.append(d)
            _all_dependents(state, d["name"], seen)
    return seen


@script("service_watch")
def service_watch(host, params, check_mode):
    """Samples Win32_Service (State, ProcessId) every IntervalMs for Seconds, then the exit codes
    and the last lines of each log file. The host's clock moves on by the time watched instead of
    sleeping (winsim_scm.clock), so what the samples show is what later calls see."""
    name = _mandatory(params, "Name")
    seconds, interval = int(params.get("Seconds", 20)), max(1, int(params.get("IntervalMs", 1000)))
    svc = winsim_scm.find(host.state, name)
    start, samples, ms = winsim_scm.clock(host), [], 0
    while True:
        status, pid = winsim_scm.observe(host, svc, start + ms / 1000.0)
        samples.append({"ms": ms, "status": status, "pid": pid})
        if ms >= seconds * 1000:
            break
        ms += interval
    winsim_scm.advance(host, seconds)
    exit_code, specific = winsim_scm.exit_codes(host, svc)
    tails = {}
    for log in _string_list(params, "LogFiles"):
        local = winsim_files.resolve(host, log)
        if local is None or not os.path.isfile(local):
            tails[log] = None
            continue
        with open(local, "rb") as f:
            lines = f.read().decode("utf-8", "replace").splitlines()
        tails[log] = "\n".join(lines[-int(params.get("TailLines", 20)):])
    return {"changed": False, "result": {"samples": samples, "exit_code": exit_code, "service_exit_code": specific,
                                         "log_tail": tails}}


# --- node_facts ---------------------------------------------------------------------------------
# Update build revision (UBR) of each simulated build; a host state may set "ubr" itself.
DEFAULT_UBR = {17763: 6659, 20348: 2849, 26100: 2894}
FACT_PIPES = ("containerd-containerd", "docker_engine", "cri-dockerd")


def _string_list(params, name):
    value = params.get(name)
    if value in (None, ""):
        return []
    return [value] if isinstance(value, str) else [str(v) for v in value]


def _up_adapters(state):
    """Get-NetAdapter | Where Status -eq Up, with their IPv4 addresses. An adapter bound to an HNS
    vSwitch keeps its MAC but loses its addresses to the host vNIC 'vEthernet (<adapter>)'."""
    vswitches = (state.get("hns") or {}).get("vswitches") or {}
    out = []
    for a in state.get("adapters") or []:
        ips = [a["ip"]] if a.get("ip") and not a["ip"].startswith("169.254.") else []
        if a["name"] in vswitches:
            out.append({"name": a["name"], "mac": a["mac"], "ipv4": []})
            out.append({"name": vswitches[a["name"]], "mac": a["mac"], "ipv4": ips})
        else:
            out.append({"name": a["name"], "mac": a["mac"], "ipv4": ips})
    return out


def _image_exe(image_path):
    """$exe = if ($path.StartsWith('"')) { $path.Split('"')[1] } else { $path.Split(' ')[0] }"""
    if image_path.startswith('"'):
        return image_path.split('"')[1]
    return image_path.split(" ")[0]


def _version_output(host, image_path):
    """try { $ErrorActionPreference = 'Continue'; (& $exe --version 2>&1 | ForEach-Object { "$_" }) -join "`n" }
    catch { "error: $_" }: a program that is not there is caught (CommandNotFoundException ends the
    statement whatever the preference); stderr lines are text like stdout ("$_" of a stderr record is
    the line). winsim cannot interleave the two streams, so stdout comes first."""
    exe = _image_exe(image_path or "")
    rc, out, err = winsim_binaries.run(host, [exe, "--version"], shell="powershell")
    if rc != 0 and not out and "is not recognized as the name of a cmdlet" in err:
        # CommandNotFoundException: terminating under 'Stop', caught
        return ("error: The term '%s' is not recognized as the name of a cmdlet, function, script file, or operable "
                "program. Check the spelling of the name, or if a path was included, verify that the path is "
                "correct and try again." % exe)
    return "\n".join(out.splitlines() + err.splitlines())


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


def _config_dump(host, image_path, pattern):
    """$dumpArgs from the ImagePath with ConfigFlagPattern ($Matches[1].Trim('"')), then
    `& $program @dumpArgs config dump 2>$null | Out-String` with ErrorAction Continue: stdout, or
    "error: exit code N"; a program that cannot run throws, reported as "error: <message>"."""
    image = image_path or ""
    args = []
    m = re.search(pattern, image) if pattern else None
    if m:
        args = ["--config", m.group(1).strip('"')]
    rc, out, err = winsim_binaries.run(host, [_image_exe(image)] + args + ["config", "dump"], shell="powershell")
    if rc != 0 and not out and "is not recognized as the name of a cmdlet" in err:
        return "error: " + err.strip()
    return out if rc == 0 else "error: exit code %d" % rc


@script("node_facts")
def node_facts(host, params, check_mode):
    st = host.state
    version_of = [v.lower() for v in _string_list(params, "VersionOf")]
    config_dump_of = [v.lower() for v in _string_list(params, "ConfigDumpOf")]
    services = {}
    for name in _string_list(params, "Services"):
        svc = winsim_scm.find(st, name)
        entry = {"exists": bool(svc), "status": None, "image_path": None, "version_output": None}
        if svc:
            entry["status"] = svc["status"]
            entry["image_path"] = svc["image_path"]
            if name.lower() in version_of:  # PowerShell's -in is case-insensitive
                entry["version_output"] = _version_output(host, svc["image_path"])
        if svc and name.lower() in config_dump_of:
            entry["config_dump"] = _config_dump(host, svc["image_path"], params.get("ConfigFlagPattern") or "")
        services[name] = entry
    pipes = []
    for p in st.get("pipes") or []:
        short = p[len("\\\\.\\pipe\\"):] if is_pipe(p) else p
        if short.lower() in FACT_PIPES:
            pipes.append(short)
    build = int(st.get("build") or 0)
    return {"changed": False, "result": {
        "computer_name": st["hostname"],
        # the DNS host name keeps its case; COMPUTERNAME is the upper-case NetBIOS name
        "hostname": st.get("dns_hostname") or st["hostname"].lower(),
        "version": {"major": 10, "minor": 0, "build": str(build), "ubr": int(st.get("ubr", DEFAULT_UBR.get(build, 1)))},
        "adapters": _up_adapters(st),
        "pipes": pipes,
        "services": services,
        "paths": {path: _test_path(host, path) for path in _string_list(params, "Paths")},
        # [Environment]::GetEnvironmentVariable('Path', 'Machine'): the registry value, not the session's
        "machine_path": (st.get("env") or {}).get("Path", ""),
    }}


# --- files_state / node_sync ---------------------------------------------------------------------
@script("files_state")
def files_state(host, params, check_mode):
    links = []

    def entry(path):
        """Get-Entry: Get-Item -Force -ErrorAction SilentlyContinue, noting a reparse point."""
        local = winsim_files.resolve(host, path)
        if local is None or not os.path.lexists(local):
            return None
        if os.path.islink(local) and path not in links:
            links.append(path)
        return local if os.path.exists(local) else None

    paths = {}
    for path in _string_list(params, "Paths"):
        entry(path)
        paths[path] = _path_kind(host, path)
    files = {}
    for path in _string_list(params, "Files"):
        local = entry(path)
        files[path] = winsim_files.sha512_file(local) if local and os.path.isfile(local) else None
    dirs = {}
    for path in _string_list(params, "Dirs"):
        local = entry(path)
        dirs[path] = winsim_files.security_sddl(host, path) if local and os.path.isdir(local) else None
    acls = {}
    for path in _string_list(params, "Acls"):
        local = entry(path)
        acls[path] = winsim_files.security_sddl(host, path) if local and os.path.isfile(local) else None
    owners = _string_list(params, "Owners")
    scan = {}
    for root in _string_list(params, "Scan"):
        hits, pending = [], [root]
        while pending and len(hits) < 20:
            current = pending.pop()
            local = host.local_path(current)
            for name in sorted(os.listdir(local), key=lambda n: n.upper()):
                child = current.rstrip("\\") + "\\" + name
                link = os.path.islink(os.path.join(local, name))
                owner = winsim_files.owner_of(host, child)
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
                raise SimError("%s is a junction or symbolic link: not following it" % d["path"])
            winsim_files.set_security(host, d["path"], d["sddl"])
        else:
            winsim_files.create_directory_secured(host, d["path"], d["sddl"])
    for path in _string_list(params, "Discard"):
        if _test_path(host, path):
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
    if os.path.isdir(local):
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


def _registry_text(value):
    """What Set-ItemProperty stores for one value: PowerShell's string conversion."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "True" if value else "False"
    return str(value)


def _set_parameters(svc, value, types):
    """[hashtable]$Parameters into the service's Parameters key: the key is created only when
    missing (values already there stay); each value is written with the type [hashtable]$ParameterTypes
    names (DWord, MultiString, String), and a value without one ends the script. A DWORD is kept as
    RegistryKey.GetValue returns it, a signed Int32."""
    if value in (None, ""):
        return
    types = types or {}
    if not isinstance(value, dict):
        raise SimError("Cannot process argument transformation on parameter 'Parameters'. Cannot convert the "
                       "\"%s\" value of type \"%s\" to type \"System.Collections.Hashtable\"."
                       % (value, type(value).__name__))
    if not value:
        return
    key = svc.setdefault("parameters", {})
    for name, v in value.items():
        # registry value names are case-insensitive: an existing value keeps its spelling
        existing = next((k for k in key if k.lower() == str(name).lower()), str(name))
        kind = next((t for k, t in types.items() if k.lower() == str(name).lower()), None)  # hashtable keys ignore case
        if not kind:
            raise SimError("no registry type given for the parameter %s" % name)
        if kind == "DWord":
            number = int(v) & 0xFFFFFFFF  # [uint32]$value, then its bits as Int32
            key[existing] = number - 2 ** 32 if number >= 2 ** 31 else number
        elif kind == "MultiString":
            key[existing] = [_registry_text(i) for i in (v if isinstance(v, list) else [v])]
        else:
            key[existing] = _registry_text(v)


def _environment(value):
    """[string[]]$Environment: the NAME=value strings of the REG_MULTI_SZ value."""
    if value in (None, ""):
        return []
    return [value] if isinstance(value, str) else [str(v) for v in value]


def _mandatory(params, name):
    value = params.get(name)
    if value in (None, ""):
        raise SimError("Cannot bind argument to parameter '%s' because it is an empty string." % name)
    return value


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
