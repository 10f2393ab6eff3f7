"""The integration targets of tests/integration run with ``ansible-test windows-integration``, unchanged,
against a simulated Windows host, one target at a time, and leave the host as they found it.

ansible-test wants the collection at ansible_collections/kubewin/nodes and sets ANSIBLE_COLLECTIONS_PATH
to the root above it, so the test builds that root: a copy of this checkout (as tests/sanity/run.sh
does), the lab's stand-in ansible.windows and its winsim connection next to it (found before the real
ansible.windows in site-packages), and tests/integration/inventory.winrm pointing at the simulated host.
No control plane needed.
"""

import glob
import importlib
import os
import re
import subprocess
import sys
import time

import pytest
from winsim import core, make_inventory  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WINSIM = os.path.join(REPO, "lab", "winsim")
TARGETS_DIR = os.path.join(REPO, "tests", "integration", "targets")
TARGETS = sorted(os.path.basename(os.path.dirname(os.path.dirname(p)))
                 for p in glob.glob(os.path.join(TARGETS_DIR, "*", "tasks", "main.yml")))
BIN = os.path.dirname(sys.executable)
# The simulated host of each target: a containerd host, unless the module needs another runtime.
PROFILES = {"win_docker_network": "ws2022-docker", "win_containerd": "ws2022-containerd-unpacked",
            "win_image_pull": "ws2022-containerd-crictl"}

# ansible-test reads ansible_host and ansible_user of every [windows] host (host_profiles.py
# WindowsInventoryProfile), even when the connection is not WinRM.
INVENTORY = """[windows]
win-1 ansible_host=10.0.0.11 ansible_user=Administrator ansible_connection=kubewin_lab.winsim.winsim \
ansible_shell_type=sh ansible_pipelining=True ansible_python_interpreter={python} winsim_root={root}
"""


def windows_modules():
    """Modules whose action plugin opens a connection to the Windows host."""
    names = []
    for path in glob.glob(os.path.join(REPO, "plugins", "action", "*.py")):
        name = os.path.splitext(os.path.basename(path))[0]
        plugin = importlib.import_module("ansible_collections.kubewin.nodes.plugins.action." + name)
        if plugin.ActionModule._requires_connection:  # the Windows action base class sets it
            names.append(name)
    return sorted(names)


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """<tmp>/collections/ansible_collections/{kubewin/nodes (copy), ansible (stand-in), kubewin_lab} and
    <tmp>/ps: the winsim connection finds the lab's PowerShell interpreter six directories above itself."""
    top = tmp_path_factory.mktemp("ansible-test")
    collections = top / "collections" / "ansible_collections"
    work = collections / "kubewin" / "nodes"
    work.mkdir(parents=True)
    files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z", "--", ".",
                            ":!lab", ":!tests/lab"], cwd=REPO, check=True, capture_output=True).stdout
    tar = subprocess.run(["tar", "-c", "--null", "-T", "-"], cwd=REPO, input=files, check=True,
                         capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(work)], input=tar, check=True)
    stand_ins = os.path.join(WINSIM, "collections", "ansible_collections")
    os.symlink(os.path.join(stand_ins, "ansible"), str(collections / "ansible"))
    os.symlink(os.path.join(stand_ins, "kubewin_lab"), str(collections / "kubewin_lab"))
    os.symlink(os.path.join(WINSIM, "ps"), str(top / "ps"))
    return top, work


def test_every_windows_module_has_a_target(tree):
    assert windows_modules() and TARGETS == windows_modules()
    for target in TARGETS:
        with open(os.path.join(TARGETS_DIR, target, "aliases")) as f:
            aliases = f.read().split()
        # windows-integration runs only targets with a windows/ alias (target.py walk_windows_integration_targets;
        # a name starting with win_ gets one too), and CI groups them by shippable/windows/groupN.
        assert "windows" in aliases and any(re.match(r"shippable/windows/group\d+$", a) for a in aliases), target
    listed = subprocess.run([os.path.join(BIN, "ansible-test"), "windows-integration", "--list-targets"],
                            cwd=str(tree[1]), capture_output=True, text=True, timeout=600)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.split() == TARGETS


@pytest.mark.parametrize("target", TARGETS)
def test_target_passes_and_leaves_the_host_as_found(tree, tmp_path, target):
    top, work = tree
    root = make_inventory.build(str(tmp_path / "winsim"), nodes=1, python=sys.executable,
                                profile=PROFILES.get(target, "ws2022-containerd"))
    with open(str(work / "tests" / "integration" / "inventory.winrm"), "w") as f:
        f.write(INVENTORY.format(python=sys.executable, root=root))
    before = core.dump(root, "win-1")
    started = time.monotonic()
    p = subprocess.run([os.path.join(BIN, "ansible-test"), "windows-integration", "--color", "no", target],
                       cwd=str(work), capture_output=True, text=True, timeout=1200,
                       env=dict(os.environ, ANSIBLE_NOCOLOR="1"))
    elapsed = time.monotonic() - started
    out = p.stdout + p.stderr
    assert p.returncode == 0, "target %s failed:\n%s" % (target, out[-6000:])
    assert "Running %s integration test role" % target in out
    recap = re.search(r"win-1\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=0\s+failed=0", out)
    assert recap, out[-3000:]
    # Each target asserts, changes the host on the way (or reads what it created) and cleans up.
    assert len(re.findall(r"TASK \[%s : Assert" % target, out)) >= 3, "target %s asserts too little" % target
    assert int(recap.group(2)) > 0, "target %s never changed the host" % target
    assert core.dump(root, "win-1") == before, "target %s left the host changed" % target
    print("%s: ok=%s changed=%s in %.1fs" % (target, recap.group(1), recap.group(2), elapsed))
