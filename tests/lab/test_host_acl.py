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


def _plant_user_dir(lab, path, sddl=None, files=()):
    """What a local user can do under C:\\ (BUILTIN\\Users may create folders there): make the directory,
    owned by them, maybe with their own access rules, maybe with files in it."""
    with core.Host(lab.root, "win-1").open() as h:
        os.makedirs(h.local_path(path), exist_ok=True)
        winsim_files.set_owner(h, path, USER)
        if sddl:
            winsim_files.set_sddl(h, path, sddl)
        for name in files:
            with open(h.local_path(path + "\\" + name), "w") as f:
                f.write("planted")
            winsim_files.set_owner(h, path + "\\" + name, USER)


def _security(lab, path):
    with core.Host(lab.root, "win-1").open(save=False) as h:
        return winsim_files.security_sddl(h, path)


def test_a_directory_a_user_made_first_is_taken_over_before_the_first_write(lab):
    _plant_user_dir(lab, "C:\\k")
    assert _security(lab, "C:\\k").startswith("O:%sD:AI" % USER)
    rc, _, res = lab.play(_task(**INSTALL), extra=["--diff"])
    r = res["files"]["win-1"]
    assert rc == 0 and r["changed"], r
    assert r["diff"]["before"]["C:\\k"].startswith("owner: %s" % USER)
    assert _security(lab, "C:\\k") == RESTRICTED
    # the secret file has its final owner and access rules; nothing in C:\k belongs to the user
    assert _security(lab, "C:\\k\\kubewin-join.yaml") == "O:BA" + host_files.RESTRICTED_FILE_SDDL
    rc, _, res = lab.play(_task(**INSTALL))
    assert rc == 0 and not res["files"]["win-1"]["changed"]


def test_what_a_user_left_in_a_directory_they_owned_stops_the_run_before_anything_is_written(lab):
    _plant_user_dir(lab, "C:\\k", files=["version.dll"])
    rc, _, res = lab.play(_task(**INSTALL))
    r = res["files"]["win-1"]
    assert rc != 0 and r["failed"]
    assert "win_host_files on win-1" in r["msg"] and "C:\\k\\version.dll (owner %s)" % USER in r["msg"]
    assert "delete them" in r["msg"]
    assert _security(lab, "C:\\k").startswith("O:%s" % USER)  # nothing done
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
        run_ps(host, "node_sync", {"Remove": ["C:\\k"]}, False)
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
