"""The simulator's model of other tokens than the remote session's (issue 20 item 2): a container's ContainerUser
and a local user checked against the effective host DACL, the token's default-owner policy, and a local user who
acts while a remote command lists a directory. Each is no more lenient than Windows (sources in winsim_files)."""

import os

import pytest
from winsim import core
from winsim.ps.winhost import run_kubewin_script as run_ps  # the real script text, interpreted

# isort: split
from ansible_collections.ansible.windows.plugins.module_utils import winsim_files as wf
from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError

USER = "S-1-5-21-1004336348-1177238915-682003330-1001"


@pytest.fixture
def host(tmp_path):
    h = core.create_host(str(tmp_path), "w")
    with h.open():
        yield h


def _mkdir(host, path, sddl=None, owner=None):
    os.makedirs(host.local_path(path), exist_ok=True)
    if sddl:
        wf.set_sddl(host, path, sddl)
    if owner:
        wf.set_owner(host, path, owner)


def test_container_user_is_denied_where_only_administrators_and_system_are_allowed(host):
    _mkdir(host, "C:\\var\\lib\\kubelet", "D:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)")
    _mkdir(host, "C:\\var\\lib\\kubelet\\pods\\u\\volumes\\empty")
    with open(host.local_path("C:\\var\\lib\\kubelet\\pods\\u\\token"), "w") as f:
        f.write("jwt")
    assert not wf.container_can_read(host, "C:\\var\\lib\\kubelet\\pods\\u\\token")
    with pytest.raises(SimError, match="denied"):
        wf.container_writes(host, "C:\\var\\lib\\kubelet\\pods\\u\\volumes\\empty", "x")


def test_inherited_creator_owner_gives_the_creator_full_control_and_inherit_only_aces_do_not_apply(host):
    _mkdir(host, "C:\\data", "D:PAI(A;OICI;FA;;;BA)(A;OICI;0x1200a9;;;BU)(A;CIIO;0x6;;;BU)(A;OICIIO;FA;;;CO)")
    # C:\data itself: Users may read, not add (the add ACE is inherit-only)
    assert wf.container_can_read(host, "C:\\data")
    with pytest.raises(SimError, match="denied"):
        wf.container_writes(host, "C:\\data", "x")
    _mkdir(host, "C:\\data\\sub")
    path = wf.container_writes(host, "C:\\data\\sub", "x")
    assert wf.owner_of(host, path) == wf.CONTAINER_USER
    # a deny ACE wins over an allow ACE
    _mkdir(host, "C:\\deny", "D:PAI(D;OICI;0x1;;;BU)(A;OICI;FA;;;BU)")
    with open(host.local_path("C:\\deny\\f"), "w") as f:
        f.write("x")
    assert not wf.container_can_read(host, "C:\\deny\\f")


@pytest.mark.parametrize("policy, owner", [(wf.POLICY_ADMINISTRATORS, "BA"), (wf.POLICY_CREATOR, wf.REMOTE_ACCOUNT)])
def test_what_the_remote_session_creates_without_a_descriptor_gets_the_policys_default_owner(host, policy, owner):
    """Microsoft Learn, TOKEN_OWNER and "System objects: Default owner for objects created by members of the
    Administrators group"."""
    from winsim.ps.winhost import execute
    host.state["default_owner_policy"] = policy
    script = ("New-Item -ItemType Directory -Path 'C:\\a\\b' -Force | Out-Null\n"
              "[System.IO.File]::WriteAllText('C:\\a\\b\\f.txt', 'x')\n"
              "$Ansible.Result = @{}\n")
    answer = execute(host, script, "t", {}, error_action="Stop", depth=2)
    assert not answer["failed"], answer
    assert [wf.owner_of(host, p) for p in ("C:\\a", "C:\\a\\b", "C:\\a\\b\\f.txt")] == [owner] * 3


def test_an_owner_only_descriptor_changes_the_owner_and_leaves_the_access_rules(host):
    from winsim.ps.winhost import execute
    _mkdir(host, "C:\\k", "D:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)")
    with open(host.local_path("C:\\k\\f"), "w") as f:
        f.write("x")
    wf.set_owner(host, "C:\\k\\f", USER)
    script = ("$s = New-Object System.Security.AccessControl.FileSecurity\n"
              "$s.SetSecurityDescriptorSddlForm('O:BA', 'Owner')\n"
              "(Get-Item -LiteralPath 'C:\\k\\f' -Force).SetAccessControl($s)\n"
              "$Ansible.Result = @{}\n")
    answer = execute(host, script, "t", {}, error_action="Stop", depth=2)
    assert not answer["failed"], answer
    assert wf.security_sddl(host, "C:\\k\\f") == "O:BAD:AI(A;ID;FA;;;SY)(A;ID;FA;;;BA)"


def test_a_local_user_swaps_a_folder_for_a_junction_only_where_the_acls_let_them(host):
    """googleprojectzero/symboliclink-testing-tools: rename the folder away (DELETE on it) and create a junction in
    its place (FILE_ADD_SUBDIRECTORY on the parent)."""
    loose = "D:PAI(A;OICI;FA;;;BA)(A;OICI;FA;;;SY)(A;OICI;0x1200a9;;;BU)(A;CI;0x4;;;BU)(A;OICIIO;FA;;;CO)"
    _mkdir(host, "C:\\t", loose)
    _mkdir(host, "C:\\t\\mine", owner=USER)
    _mkdir(host, "C:\\victim")
    _mkdir(host, "C:\\locked", "D:PAI(A;OICI;FA;;;BA)(A;OICI;FA;;;SY)")
    _mkdir(host, "C:\\locked\\mine", owner=USER)
    host.state["local_user_acts"] = [
        {"when_listing": "C:\\t", "swap": "C:\\t\\mine", "target": "C:\\victim", "user": USER},
        {"when_listing": "C:\\locked", "swap": "C:\\locked\\mine", "target": "C:\\victim", "user": USER}]
    wf.local_user_acts(host, "C:\\t")
    wf.local_user_acts(host, "C:\\locked")
    assert host.state["local_user_log"] == ["swapped: C:\\t\\mine -> C:\\victim", "denied: C:\\locked\\mine"]
    assert wf.is_link(host, "C:\\t\\mine") and not wf.is_link(host, "C:\\locked\\mine")


def test_node_sync_removes_a_tree_the_user_cannot_touch_and_refuses_one_they_own_part_of(host):
    _mkdir(host, "C:\\var\\lib\\cni\\cache")
    run_ps(host, "node_sync", {"Remove": ["C:\\var\\lib\\cni"], "RootSddl": "O:BAD:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)",
                               "Owners": ["BA", "SY"]})
    assert not os.path.exists(host.local_path("C:\\var\\lib\\cni"))
    _mkdir(host, "C:\\var\\lib\\cni\\bob", owner=USER)
    with pytest.raises(SimError, match=r"C:\\var\\lib\\cni\\bob \(owner S-1-5-21-"):
        run_ps(host, "node_sync", {"Remove": ["C:\\var\\lib\\cni"],
                                   "RootSddl": "O:BAD:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)", "Owners": ["BA", "SY"]})
    assert os.path.isdir(host.local_path("C:\\var\\lib\\cni\\bob"))
    # the connecting account's own files are the collection's (what kubeadm.exe, run by it, wrote)
    wf.set_owner(host, "C:\\var\\lib\\cni\\bob", wf.REMOTE_ACCOUNT)
    run_ps(host, "node_sync", {"Remove": ["C:\\var\\lib\\cni"], "RootSddl": "O:BAD:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)",
                               "Owners": ["BA", "SY"]})
    assert not os.path.exists(host.local_path("C:\\var\\lib\\cni"))


def test_a_descriptor_set_by_name_lands_on_the_target_of_a_junction_swapped_in_just_before(host):
    """Review R2's model: SetAccessControl persists by name (SetNamedSecurityInfo: referencesource
    filesecurity.cs / nativeobjectsecurity.cs), and a name is resolved, junctions included, on every open: the owner
    of C:\\k swaps it for a junction to the victim right before the set, and the victim gets the descriptor."""
    _mkdir(host, "C:\\", "D:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICI;0x1200a9;;;BU)(A;CI;0x4;;;BU)(A;OICIIO;FA;;;CO)")
    _mkdir(host, "C:\\k", owner=USER)
    _mkdir(host, "C:\\victim")
    host.state["local_user_acts"] = [{"when_securing": "C:\\k", "swap": "C:\\k", "target": "C:\\victim",
                                      "user": USER}]
    wf.local_user_acts(host, "C:\\k", "when_securing")
    assert host.state["local_user_log"] == ["swapped: C:\\k -> C:\\victim"]
    assert wf.named_security_target(host, "C:\\k") == "C:\\victim"
    assert wf.named_security_target(host, "C:\\k.moved-away") == "C:\\k.moved-away"
