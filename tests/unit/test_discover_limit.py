"""A --limit that leaves out the first kube_control_plane host stops in playbooks/discover.yml's first play with a
sentence saying what to add (issue 20 item 4), instead of a raw templating error in a later play. Runs
ansible-playbook on the controller only: the check connects to no host."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1].parent
PLAYBOOK = ROOT / "playbooks" / "discover.yml"
INVENTORY = """[kube_control_plane]
cp1 ansible_connection=local
cp2 ansible_connection=local
[kube_windows_nodes]
win1 ansible_connection=local
win2 ansible_connection=local
"""


def playbook(tmp_path, limit, inventory=INVENTORY):
    (tmp_path / "hosts.ini").write_text(inventory)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".build" / "collections"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), ANSIBLE_HOME=str(tmp_path / "home"))
    exe = Path(sys.executable).parent / "ansible-playbook"
    proc = subprocess.run([str(exe), "-i", str(tmp_path / "hosts.ini"), str(PLAYBOOK), "--limit", limit],
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300,
                          check=False)
    return proc.returncode, proc.stdout


@pytest.mark.parametrize("limit", ["kube_windows_nodes", "win2", "win1:cp2"])
def test_a_limit_without_the_first_control_plane_host_says_what_to_add(tmp_path, limit):
    rc, out = playbook(tmp_path, limit)
    assert rc != 0
    assert ("--limit '%s' leaves out cp1, the first kube_control_plane host" % limit) in out, out
    assert ("add it to the limit, e.g. --limit '%s:kube_control_plane[0]'" % limit) in out, out
    # it stops there: no later play runs
    assert "PLAY [Read the cluster]" not in out, out


def test_a_limit_with_it_passes_the_check(tmp_path):
    rc, out = playbook(tmp_path, "kube_windows_nodes:kube_control_plane[0]")
    # The next play reads the cluster (it fails here, with no cluster): the check itself was skipped.
    assert "the first kube_control_plane host, which reads" not in out and "PLAY [Read the cluster]" in out, out


def test_an_inventory_without_control_plane_hosts_is_named(tmp_path):
    rc, out = playbook(tmp_path, "all", inventory="[kube_windows_nodes]\nwin1 ansible_connection=local\n")
    assert rc != 0 and "The inventory has no host in the kube_control_plane group" in out, out
