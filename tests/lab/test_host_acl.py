"""Issue 12 item 4 on simulated hosts (no control plane): the directories kubewin.nodes protects get their
owner and access rules before anything is written into them, drift is repaired, and reset never follows a
junction planted under what it deletes."""

import json
import os

import pytest
from winsim import core  # noqa: E402  (puts the lab's ansible.windows and kubewin.nodes on sys.path)
from winsim.ps.winhost import run_kubewin_script as run_ps  # noqa: E402  (the real script text, interpreted)
from winsim.testing import Lab  # noqa: E402

SIM = core.COLLECTIONS  # the imports below need core first

from ansible_collections.ansible.windows.plugins.module_utils import winsim_files  # noqa: E402

from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import files as host_files  # noqa: E402

USER = "S-1-5-21-1004336348-1177238915-682003330-1001"  # a local user's SID
RESTRICTED = "O:BA" + host_files.RESTRICTED_DIR_SDDL


@pytest.fixture
def lab(tmp_path):
    return Lab(tmp_path / "winsim", nodes=1)


def _task(name="files", **args):
    return "- name: %s\n  kubewin.nodes.win_host_files: %s\n" % (name, json.dumps(args))


INSTALL = dict(directories=[{"path": "C:\\k"}],
               files=[{"path": "C:\\k\\kubewin-join.yaml", "content": "token: abc", "restricted": True,
                       "secret": True}])


def _plant_user_dir(lab, path, sddl=None, files=(), owner=USER):
    """What a local user can do under C:\\ (BUILTIN\\Users may create folders there): make the directory,
    owned by them, maybe with their own access rules, maybe with files in it (``owner``: who owns the directory
    itself, e.g. BA once an administrator took it over and left its rules)."""
    with core.Host(lab.root, "win-1").open() as h:
        os.makedirs(h.local_path(path), exist_ok=True)
        winsim_files.set_owner(h, path, owner)
        if sddl:
            winsim_files.set_sddl(h, path, sddl)
        for name in files:
            with open(h.local_path(path + "\\" + name), "w") as f:
                f.write("planted")
            winsim_files.set_owner(h, path + "\\" + name, USER)


def _security(lab, path):
    with core.Host(lab.root, "win-1").open(save=False) as h:
        return winsim_files.security_sddl(h, path)


def test_a_directory_a_user_made_first_is_refused_and_taken_over_once_an_administrator_owns_it(lab):
    """Review R2: a directory another user owns is never secured by its name (they could swap in a junction
    meanwhile): the run names it and the takeown fix; once Administrators own it, it is secured."""
    _plant_user_dir(lab, "C:\\k")
    assert _security(lab, "C:\\k").startswith("O:%sD:AI" % USER)
    rc, _, res = lab.play(_task(**INSTALL))
    r = res["files"]["win-1"]
    assert rc != 0 and "C:\\k belongs to %s" % USER in r["msg"] and 'takeown /F "C:\\k" /A' in r["msg"], r
    assert _security(lab, "C:\\k").startswith("O:%sD:AI" % USER)
    with core.Host(lab.root, "win-1").open() as h:
        winsim_files.set_owner(h, "C:\\k", "BA")  # takeown /F C:\k /A
    rc, _, res = lab.play(_task(**INSTALL), extra=["--diff"])
    r = res["files"]["win-1"]
    assert rc == 0 and r["changed"], r
    assert r["diff"]["before"]["C:\\k"].startswith("owner: BA")
    assert _security(lab, "C:\\k") == RESTRICTED
    # the secret file has its final owner and access rules; nothing in C:\k belongs to the user
    assert _security(lab, "C:\\k\\kubewin-join.yaml") == "O:BA" + host_files.RESTRICTED_FILE_SDDL
    rc, _, res = lab.play(_task(**INSTALL))
    assert rc == 0 and not res["files"]["win-1"]["changed"]


def test_what_a_user_left_in_a_directory_they_owned_stops_the_run_before_anything_is_written_into_it(lab):
    _plant_user_dir(lab, "C:\\k", files=["version.dll"], owner="BA")  # taken over (takeown), rules left
    rc, _, res = lab.play(_task(**INSTALL))
    r = res["files"]["win-1"]
    assert rc != 0 and r["failed"]
    assert "win_host_files on win-1" in r["msg"] and "C:\\k\\version.dll (owner %s)" % USER in r["msg"]
    assert "delete them" in r["msg"]
    # C:\k was secured first (then nobody else can add to it) and listed: the user's file is neither adopted nor
    # deleted, and nothing is written (issue 20 N4: the scan is node_sync's, after Set-Security)
    assert _security(lab, "C:\\k") == RESTRICTED
    with core.Host(lab.root, "win-1").open(save=False) as h:
        assert winsim_files.owner_of(h, "C:\\k\\version.dll") == USER
    assert not os.path.exists(os.path.join(lab.root, "hosts", "win-1", "C", "k", "kubewin-join.yaml"))


def test_a_directory_whose_owner_locked_administrators_out_fails_with_the_fix(lab):
    _plant_user_dir(lab, "C:\\k", sddl="D:PAI(A;OICI;FA;;;%s)" % USER)
    rc, _, res = lab.play(_task(**INSTALL))
    r = res["files"]["win-1"]
    assert rc != 0 and "takeown /F" in r["msg"] and "C:\\k" in r["msg"], r


def test_access_rules_that_drifted_are_repaired_and_shown_in_the_diff(lab):
    rc, _, _ = lab.play(_task(**INSTALL))
    assert rc == 0
    # someone adds Users: write (an explicit ACE on the protected directory)
    drifted = host_files.RESTRICTED_DIR_SDDL + "(A;OICI;0x100116;;;BU)"
    with core.Host(lab.root, "win-1").open() as h:
        winsim_files.set_sddl(h, "C:\\k", drifted)
    rc, _, res = lab.play(_task(**INSTALL), extra=["--diff"])
    r = res["files"]["win-1"]
    assert rc == 0 and r["changed"] and r["directories"] == ["C:\\k"], r
    assert r["diff"]["before"]["C:\\k"] == "owner: BA, access: %s" % drifted
    assert r["diff"]["after"]["C:\\k"] == "directory, owner: BA, access: %s" % host_files.RESTRICTED_DIR_SDDL
    assert _security(lab, "C:\\k") == RESTRICTED
    rc, _, res = lab.play(_task(**INSTALL))
    assert rc == 0 and not res["files"]["win-1"]["changed"]


def test_a_missing_directory_and_its_parents_are_created_protected(lab):
    rc, _, _ = lab.play(_task(directories=[{"path": "C:\\run\\flannel"}]))
    assert rc == 0
    # Directory.CreateDirectory(path, DirectorySecurity) creates C:\run with the same descriptor
    assert _security(lab, "C:\\run") == RESTRICTED and _security(lab, "C:\\run\\flannel") == RESTRICTED


def test_a_parent_a_user_owns_is_refused(lab):
    _plant_user_dir(lab, "C:\\etc")
    rc, _, res = lab.play(_task(directories=[{"path": "C:\\etc\\kubernetes"}]))
    r = res["files"]["win-1"]
    assert rc != 0 and "C:\\etc belongs to %s" % USER in r["msg"]
    assert not os.path.exists(os.path.join(lab.root, "hosts", "win-1", "C", "etc", "kubernetes"))


def _plant_junction(lab, link, target, files):
    with core.Host(lab.root, "win-1").open() as h:
        os.makedirs(h.local_path(target), exist_ok=True)
        for name in files:
            with open(h.local_path(target + "\\" + name), "w") as f:
                f.write("bob's")
        os.makedirs(os.path.dirname(h.local_path(link)), exist_ok=True)
        os.symlink(h.local_path(target), h.local_path(link), target_is_directory=True)
        return h.local_path(target)


def test_reset_deletes_a_planted_junction_not_what_it_points_at(lab):
    rc, _, _ = lab.play(_task(**INSTALL))
    assert rc == 0
    target = _plant_junction(lab, "C:\\k\\logs", "C:\\Users\\bob\\data", ["thesis.docx", "notes.txt"])
    rc, _, res = lab.play(_task("reset", absent=["C:\\k"]))
    assert rc == 0 and res["reset"]["win-1"]["removed"] == ["C:\\k"]
    assert not os.path.lexists(os.path.join(lab.root, "hosts", "win-1", "C", "k"))
    assert sorted(os.listdir(target)) == ["notes.txt", "thesis.docx"]


def test_a_restricted_directory_that_is_a_junction_is_refused(lab):
    _plant_junction(lab, "C:\\k", "C:\\Users\\bob\\k", [])
    rc, _, res = lab.play(_task(**INSTALL))
    r = res["files"]["win-1"]
    assert rc != 0 and "C:\\k is a junction or symbolic link" in r["msg"], r


def test_the_simulated_remove_item_recurse_follows_junctions_like_windows_powershell_5_1(tmp_path):
    """The lab is no more lenient than Windows PowerShell 5.1 (PowerShell/PowerShell#621): a plain
    Remove-Item -Recurse walks into the junction; the collection's Remove-Tree does not."""
    host = core.create_host(str(tmp_path), "w")
    with host.open():
        os.makedirs(host.local_path("C:\\Users\\bob\\data"))
        with open(host.local_path("C:\\Users\\bob\\data\\a.txt"), "w") as f:
            f.write("x")
        os.makedirs(host.local_path("C:\\k"))
        os.symlink(host.local_path("C:\\Users\\bob\\data"), host.local_path("C:\\k\\link"))
        winsim_files.remove_item(host, "C:\\k", recurse=True)
        assert os.listdir(host.local_path("C:\\Users\\bob\\data")) == []
        with open(host.local_path("C:\\Users\\bob\\data\\a.txt"), "w") as f:
            f.write("x")
        os.makedirs(host.local_path("C:\\k"))
        os.symlink(host.local_path("C:\\Users\\bob\\data"), host.local_path("C:\\k\\link"))
        run_ps(host, "node_sync", {"Remove": ["C:\\k"], "Owners": ["BA", "SY"]}, False)
        assert os.listdir(host.local_path("C:\\Users\\bob\\data")) == ["a.txt"]


def test_a_parent_whose_owner_denies_administrators_reading_it_stops_the_run_with_takeown(lab):
    """ACL review finding 1: the owner (a user) of C:\\var grants only themselves access, so Administrators
    cannot read its security descriptor; that is never taken for 'C:\\var does not exist'."""
    _plant_user_dir(lab, "C:\\var", sddl="D:PAI(A;OICI;FA;;;%s)" % USER)
    rc, _, res = lab.play(_task(directories=[{"path": "C:\\var\\lib\\kubelet"}]))
    r = res["files"]["win-1"]
    assert rc != 0 and "C:\\var cannot be read by Administrators" in r["msg"], r
    assert 'takeown /F "C:\\var" /A' in r["msg"]
    assert not os.path.exists(os.path.join(lab.root, "hosts", "win-1", "C", "var", "lib"))


def test_a_dangling_file_link_at_a_file_destination_is_replaced_by_the_file_never_followed(lab):
    """ACL review findings 3 and 5: a user's symbolic link where a configuration file goes, pointing nowhere
    (yet): the link itself is removed and the file written in its place; nothing appears at its target."""
    conf = "C:\\etc\\cni\\net.d\\10-flannel.conf"
    with core.Host(lab.root, "win-1").open() as h:
        os.makedirs(h.local_path("C:\\etc\\cni\\net.d"))
        os.makedirs(h.local_path("C:\\Users\\bob"))
        os.symlink(h.local_path("C:\\Users\\bob\\stolen.conf"), h.local_path(conf))
        target, local = h.local_path("C:\\Users\\bob\\stolen.conf"), h.local_path(conf)
    task = _task(files=[{"path": conf, "content": '{"name": "cbr0"}'}])
    rc, _, res = lab.play(task, extra=["--diff"])
    r = res["files"]["win-1"]
    assert rc == 0 and r["changed"], r
    assert r["diff"]["before"][conf].startswith("link")
    assert not os.path.islink(local) and open(local).read() == '{"name": "cbr0"}'
    assert not os.path.lexists(target)
    rc, _, res = lab.play(task)
    assert rc == 0 and not res["files"]["win-1"]["changed"]


# --- issue 20 (powershell-2.md N1-N4): simulator-level, the real scripts interpreted, no playbook run ---------------
def _sync(host, directories=(), downloads=(), files=(), absent=(), prune=()):
    """What win_host_files does: files_state, host_files.plan, node_sync (same parameters)."""
    directories = [dict({"restricted": True}, **d) for d in directories]
    files = [dict({"restricted": False, "secret": False}, **f) for f in files]
    state = run_ps(host, "files_state", host_files.state_query(directories, list(downloads), files, absent, prune))
    params, report = host_files.plan(directories, list(downloads), files, state["result"], absent, prune)
    if params:
        run_ps(host, "node_sync", dict(params, Proxy="", ProxyBypass=[]))
    return params is not None, report


def _put(host, path, text):
    os.makedirs(os.path.dirname(host.local_path(path)), exist_ok=True)
    with open(host.local_path(path), "w") as f:
        f.write(text)


@pytest.mark.parametrize("policy", [winsim_files.POLICY_ADMINISTRATORS, winsim_files.POLICY_CREATOR])
def test_downloads_and_files_converge_under_either_default_owner_policy_with_kubelet_running(tmp_path, policy):
    """N2: without a security descriptor a file gets the token's default owner (Microsoft Learn, TOKEN_OWNER); under
    "Object creator" that is the connecting account, which the next run took for another user's file, discarded and
    fetched again, failing on the running kubelet.exe. Every temporary file now gets owner Administrators."""
    import hashlib
    host = core.create_host(str(tmp_path), "w")
    with host.open():
        host.state["default_owner_policy"] = policy
        _put(host, "C:\\src\\kubelet.exe", "kubelet")
        sha = hashlib.sha512(b"kubelet").hexdigest()
        task = dict(directories=[{"path": "C:\\k"}],
                    downloads=[{"url": "C:\\src\\kubelet.exe", "dest": "C:\\k\\kubelet.exe", "sha512": sha,
                                "extract_dir": ""}],
                    files=[{"path": "C:\\k\\net-conf.json", "content": "{}"}])
        assert _sync(host, **task)[0]
        assert winsim_files.owner_of(host, "C:\\k\\kubelet.exe") == "BA"
        assert winsim_files.owner_of(host, "C:\\k\\net-conf.json") == "BA"
        host.state["processes"] = {"kubelet": {"application": "C:\\k\\kubelet.exe", "state": "running"}}
        changed, report = _sync(host, **task)
        assert not changed, report


def test_a_pre_created_folder_under_c_is_taken_over_and_what_the_user_added_between_two_operations_stops_the_run(
        tmp_path):
    """N4: C:\\k made by an administrator with C:\\'s rules before the first run (Users may add files below it), and a
    local user who adds a DLL after files_state read it and before node_sync secures it: it is listed once C:\\k is
    secured (nobody else can add to it then) and stops the run; nothing is written, the user's file is neither
    adopted nor deleted."""
    host = core.create_host(str(tmp_path), "w")
    with host.open():
        # an administrator made C:\k (owner BA), inheriting C:\'s rules (review R2: one a user owns is refused
        # before it is secured)
        winsim_files.set_sddl(host, "C:\\", SERVER_DRIVE_SDDL)
        os.makedirs(host.local_path("C:\\k"))
        directories = [{"path": "C:\\k", "restricted": True}]
        files = [{"path": "C:\\k\\kubewin-join.yaml", "content": "token: abc", "restricted": True, "secret": True}]
        state = run_ps(host, "files_state", host_files.state_query(directories, [], files))["result"]
        params, _ = host_files.plan(directories, [], files, state)
        _put(host, "C:\\k\\version.dll", "planted")  # between the two remote operations
        winsim_files.set_owner(host, "C:\\k\\version.dll", USER)
        with pytest.raises(Exception) as e:
            run_ps(host, "node_sync", dict(params, Proxy="", ProxyBypass=[]))
        assert "C:\\k\\version.dll (owner %s)" % USER in str(e.value) and "delete them" in str(e.value)
        assert not os.path.exists(host.local_path("C:\\k\\kubewin-join.yaml"))
        assert winsim_files.owner_of(host, "C:\\k\\version.dll") == USER
        assert winsim_files.security_sddl(host, "C:\\k") == RESTRICTED


def test_a_restricted_directory_a_user_creates_just_before_create_directory_is_refused(tmp_path):
    """N4 (b): between node_sync's Test-Path and Directory.CreateDirectory a local user creates C:\\var\\log\\kubelet
    (C:\\var inherits C:\\'s rules: Users may create folders). CreateDirectory returns the existing directory without
    applying the descriptor (Microsoft Learn); the read-back refuses it before anything is written into it."""
    host = core.create_host(str(tmp_path), "w")
    with host.open():
        os.makedirs(host.local_path("C:\\var\\log"))
        winsim_files.set_sddl(host, "C:\\var", SERVER_DRIVE_SDDL)
        host.state["local_user_acts"] = [{"when_creating": "C:\\var\\log\\kubelet", "user": USER}]
        with pytest.raises(Exception, match=r"C:\\var\\log\\kubelet is not owned by Administrators"):
            _sync(host, directories=[{"path": "C:\\var\\log\\kubelet"}],
                  files=[{"path": "C:\\var\\log\\kubelet\\x.conf", "content": "x"}])
        assert host.state["local_user_log"] == ["created: C:\\var\\log\\kubelet"]
        assert os.listdir(host.local_path("C:\\var\\log\\kubelet")) == []


SERVER_DRIVE_SDDL = ("D:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICI;0x1200a9;;;BU)(A;CI;0x4;;;BU)(A;CIIO;0x2;;;BU)"
                     "(A;OICIIO;FA;;;CO)")  # C:\ on Windows Server 2022 (moby/buildkit#4731's icacls listing)


def test_a_junction_swapped_in_mid_reset_deletes_nothing_outside_the_collections_files(tmp_path):
    """N3: a folder a local user owns inside a tree reset walks, swapped for a junction to the user's victim
    directory while reset lists it (googleprojectzero/symboliclink-testing-tools; a junction is resolved on every
    open: "Hard Links and Junctions"). Reset makes the root the collection's, refuses the user's folder and deletes
    nothing; the victim's files stay."""
    host = core.create_host(str(tmp_path), "w")
    with host.open():
        os.makedirs(host.local_path("C:\\var\\lib\\cni\\cache"))
        winsim_files.set_sddl(host, "C:\\var", SERVER_DRIVE_SDDL)  # an admin made C:\var: it inherits C:\'s rules
        _put(host, "C:\\var\\lib\\cni\\cache\\results.json", "{}")
        os.makedirs(host.local_path("C:\\var\\lib\\cni\\bob"))
        winsim_files.set_owner(host, "C:\\var\\lib\\cni\\bob", USER)
        _put(host, "C:\\Windows\\System32\\config\\SAM", "victim")
        host.state["local_user_acts"] = [{"when_listing": "C:\\var\\lib\\cni\\bob", "swap": "C:\\var\\lib\\cni\\bob",
                                          "target": "C:\\Windows\\System32\\config", "user": USER}]
        with pytest.raises(Exception) as e:
            _sync(host, absent=["C:\\var\\lib\\cni"])
        assert "C:\\var\\lib\\cni\\bob (owner %s)" % USER in str(e.value)
        assert os.path.exists(host.local_path("C:\\Windows\\System32\\config\\SAM"))
        assert os.path.exists(host.local_path("C:\\var\\lib\\cni\\cache\\results.json"))


def test_a_folder_made_after_the_scan_cannot_be_swapped_for_a_junction_mid_walk(tmp_path):
    """N3: the walk makes each directory the collection's before it lists it: a BA-owned folder whose own rules let
    Users write (what the pods directory grants) cannot be swapped for a junction while reset walks it."""
    host = core.create_host(str(tmp_path), "w")
    with host.open():
        os.makedirs(host.local_path("C:\\var\\lib\\kubelet\\pods\\uid\\volumes"))
        winsim_files.set_sddl(host, "C:\\var\\lib\\kubelet\\pods", host_files.PODS_DIR_SDDL)
        winsim_files.set_sddl(host, "C:\\var\\lib\\kubelet\\pods\\uid", SERVER_DRIVE_SDDL + "(A;OICI;FA;;;BU)")
        _put(host, "C:\\Users\\bob\\victim.txt", "x")
        host.state["local_user_acts"] = [{"when_listing": "C:\\var\\lib\\kubelet\\pods\\uid\\volumes",
                                          "swap": "C:\\var\\lib\\kubelet\\pods\\uid\\volumes",
                                          "target": "C:\\Users\\bob", "user": USER, "skip": 1}]
        _sync(host, absent=["C:\\var\\lib\\kubelet"])  # skip: the scan's listing; the walk's is the one raced
        assert host.state["local_user_log"] == ["denied: C:\\var\\lib\\kubelet\\pods\\uid\\volumes"]
        assert os.path.exists(host.local_path("C:\\Users\\bob\\victim.txt"))
        assert not os.path.exists(host.local_path("C:\\var\\lib\\kubelet"))


def test_a_pod_running_as_container_user_reads_its_token_and_writes_its_empty_dir(tmp_path):
    """N1: the pods directory the node role makes lets ContainerUser (a member of Users) read what the kubelet puts
    in its volumes and write its emptyDir, checked against the effective host DACL (containerd#6183,
    windows-testing#35), while the kubelet's directory and its pki stay Administrators and SYSTEM only."""
    host = core.create_host(str(tmp_path), "w")
    with host.open():
        _sync(host, directories=[{"path": "C:\\var\\lib\\kubelet"}, {"path": "C:\\var\\lib\\kubelet\\pods"}])
        vol = "C:\\var\\lib\\kubelet\\pods\\u1\\volumes\\"
        # what the kubelet (SYSTEM) writes: no security descriptor of its own (KEP-5502: mode ignored on Windows)
        _put(host, vol + "kubernetes.io~projected\\kube-api-access\\token", "jwt")
        os.makedirs(host.local_path(vol + "kubernetes.io~empty-dir\\cache"))
        _put(host, "C:\\var\\lib\\kubelet\\pki\\kubelet.key", "key")
        assert winsim_files.container_can_read(host, vol + "kubernetes.io~projected\\kube-api-access\\token")
        winsim_files.container_writes(host, vol + "kubernetes.io~empty-dir\\cache", "data.bin")
        assert not winsim_files.container_can_read(host, "C:\\var\\lib\\kubelet\\pki\\kubelet.key")


CONTAINER_USER = "S-1-5-93-2-2"  # ContainerUser (moby pkg/idtools/idtools_windows.go)


def _pods_tree(host):
    """What the kubelet and a pod leave in the pods directory: the AtomicWriter's ..data link to the timestamped
    directory and a link per key (pkg/volume/util/atomic_writer.go, createUserVisibleFiles), and a file a container
    wrote into its emptyDir, owned by ContainerUser (containerd/containerd#8171)."""
    vol = "C:\\var\\lib\\kubelet\\pods\\uid\\volumes\\kubernetes.io~projected\\kube-api-access"
    _put(host, vol + "\\..2026_11_27_10_00_00.1\\token", "jwt")
    os.symlink("..2026_11_27_10_00_00.1", host.local_path(vol) + "/..data", target_is_directory=True)
    os.symlink("..data/token", host.local_path(vol) + "/token")
    empty = "C:\\var\\lib\\kubelet\\pods\\uid\\volumes\\kubernetes.io~empty-dir\\scratch\\out.log"
    _put(host, empty, "written by the pod")
    winsim_files.set_owner(host, empty, CONTAINER_USER)
    return vol


@pytest.mark.parametrize("kubelet_sddl", [None, SERVER_DRIVE_SDDL])
def test_a_node_upgraded_with_pods_converges_without_scanning_the_pods_directory(tmp_path, kubelet_sddl):
    """Review R1: the pods directory of a node joined with the previous version inherits the kubelet directory's
    rules; it holds the kubelet's ..data links and containers' files, which the scan took for planted ones and
    stopped the run. It is never scanned (nor entered by the kubelet directory's scan, on a taken-over node whose
    kubelet directory has C:\\'s rules): it converges, the links and the pod's file stay."""
    host = core.create_host(str(tmp_path), "w")
    with host.open():
        os.makedirs(host.local_path("C:\\var\\lib\\kubelet"))
        winsim_files.set_sddl(host, "C:\\var\\lib\\kubelet", kubelet_sddl or host_files.RESTRICTED_DIR_SDDL)
        vol = _pods_tree(host)
        dirs = [{"path": "C:\\var\\lib\\kubelet"}, {"path": "C:\\var\\lib\\kubelet\\pods"}]
        changed, report = _sync(host, directories=dirs)
        assert changed and "C:\\var\\lib\\kubelet\\pods" in report["directories"], report
        assert winsim_files.security_sddl(host, "C:\\var\\lib\\kubelet\\pods") == "O:BA" + host_files.PODS_DIR_SDDL
        assert winsim_files.is_link(host, vol + "\\..data") and winsim_files.is_link(host, vol + "\\token")
        assert not _sync(host, directories=dirs)[0]


def test_a_restricted_directory_a_user_owns_is_refused_and_a_junction_swapped_in_redirects_nothing(tmp_path):
    """Review R2: SetAccessControl writes by name (SetNamedSecurityInfo), which follows a junction the directory's
    owner swaps in after the reparse-point check. A directory another user owns is refused before any descriptor
    is set: System32 keeps its owner and rules, and the user never got the moment to swap."""
    host = core.create_host(str(tmp_path), "w")
    with host.open():
        winsim_files.set_sddl(host, "C:\\", SERVER_DRIVE_SDDL)
        os.makedirs(host.local_path("C:\\k"))
        winsim_files.set_owner(host, "C:\\k", USER)
        _put(host, "C:\\Windows\\System32\\kernel32.dll", "x")
        winsim_files.set_owner(host, "C:\\Windows\\System32", "S-1-5-80-956008885-3418522649-1831038044-"
                                                              "1853292631-2271478464")
        before = winsim_files.security_sddl(host, "C:\\Windows\\System32")
        host.state["local_user_acts"] = [{"when_securing": "C:\\k", "swap": "C:\\k",
                                          "target": "C:\\Windows\\System32", "user": USER}]
        with pytest.raises(Exception, match=r"C:\\k belongs to S-1-5-21-.*takeown /F \"C:\\k\" /A"):
            _sync(host, directories=[{"path": "C:\\k"}])
        assert winsim_files.security_sddl(host, "C:\\Windows\\System32") == before
        assert "local_user_log" not in host.state
        # reset's root: the same refusal
        with pytest.raises(Exception, match=r"C:\\k belongs to S-1-5-21-"):
            _sync(host, absent=["C:\\k"])
        assert winsim_files.security_sddl(host, "C:\\Windows\\System32") == before


def test_a_restricted_directory_a_user_makes_after_files_state_is_refused(tmp_path):
    """Review R3: C:\\k absent when files_state read it, made by a local user (with a file in it) before node_sync:
    node_sync's Test-Path finds it; it is refused as another user's, not secured and adopted unscanned."""
    host = core.create_host(str(tmp_path), "w")
    with host.open():
        winsim_files.set_sddl(host, "C:\\", SERVER_DRIVE_SDDL)
        directories = [{"path": "C:\\k", "restricted": True}]
        files = [{"path": "C:\\k\\kubewin-join.yaml", "content": "token: abc", "restricted": True, "secret": True}]
        state = run_ps(host, "files_state", host_files.state_query(directories, [], files))["result"]
        params, _ = host_files.plan(directories, [], files, state)
        _put(host, "C:\\k\\kubelet.exe.kubewin-download", "planted")  # between the two remote operations
        winsim_files.set_owner(host, "C:\\k", USER)
        winsim_files.set_owner(host, "C:\\k\\kubelet.exe.kubewin-download", USER)
        with pytest.raises(Exception, match=r"C:\\k belongs to S-1-5-21-.*takeown"):
            run_ps(host, "node_sync", dict(params, Proxy="", ProxyBypass=[]))
        assert winsim_files.owner_of(host, "C:\\k") == USER
        assert not os.path.exists(host.local_path("C:\\k\\kubewin-join.yaml"))


def test_a_directory_administrators_cannot_list_in_a_scanned_tree_is_named_with_the_fix(tmp_path):
    """Review R10: the scan of a directory that was not protected meets a subdirectory whose rules let only SYSTEM
    list it; the run names it and the takeown fix instead of stopping on PowerShell's "Access ... is denied"."""
    host = core.create_host(str(tmp_path), "w")
    with host.open():
        winsim_files.set_sddl(host, "C:\\", SERVER_DRIVE_SDDL)
        os.makedirs(host.local_path("C:\\k\\cache"))
        winsim_files.set_sddl(host, "C:\\k\\cache", "D:PAI(A;OICI;FA;;;SY)")
        winsim_files.set_owner(host, "C:\\k\\cache", "SY")  # a service made it
        with pytest.raises(Exception, match=r"C:\\k\\cache \(unreadable: run takeown /F \"C:\\k\\cache\" /A"):
            _sync(host, directories=[{"path": "C:\\k"}])


def test_what_tar_unpacks_under_object_creator_is_owned_by_administrators(tmp_path):
    """Review R9: tar.exe passes no security descriptor, so under "Object creator" what it unpacks (NSSM in
    C:\\k\\nssm) is owned by the connecting account, and a reset by another administrator refused it as another
    user's. node_sync makes Administrators its owner."""
    import hashlib
    import io
    import zipfile
    host = core.create_host(str(tmp_path), "w")
    with host.open():
        host.state["default_owner_policy"] = winsim_files.POLICY_CREATOR
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("nssm-2.24/win64/nssm.exe", "nssm")
        os.makedirs(host.local_path("C:\\src"))
        with open(host.local_path("C:\\src\\nssm.zip"), "wb") as f:
            f.write(buf.getvalue())
        sha = hashlib.sha512(buf.getvalue()).hexdigest()
        _sync(host, directories=[{"path": "C:\\k"}],
              downloads=[{"url": "C:\\src\\nssm.zip", "dest": "C:\\k\\nssm\\.kubewin-archive", "sha512": sha,
                          "extract_dir": "C:\\k\\nssm"}])
        for path in ("C:\\k\\nssm\\nssm-2.24", "C:\\k\\nssm\\nssm-2.24\\win64\\nssm.exe"):
            assert winsim_files.owner_of(host, path) == "BA", path
