"""playbooks/patch.yml's plays (all but discover.yml) and roles/patch, run by ansible-playbook on the controller with
fake Windows and Kubernetes modules (tests/unit/patch_fakes: win_updates, win_reboot, win_service, k8s_node,
win_node_health keep their state in one JSON file). What the role decides, in order: nothing to install leaves a
node alone; a node is labelled, drained, updated, rebooted, checked and uncordoned; the first failure leaves it
cordoned and labelled failed, stops the later nodes and says how to resume; the resumed run finishes; --check only
searches; a node cordoned before the run stays cordoned; serial 2 lets the failing batch's other node finish.
The real modules' behaviour is not shown here (tests/lab/test_patch.py runs them against the lab)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1].parent
FAKES = Path(__file__).resolve().parent / "patch_fakes"
HOSTS = ["win-1", "win-2", "win-3"]
INVENTORY = """[kube_control_plane]
cp
[kube_windows_nodes]
win-1
win-2
win-3
[all:vars]
ansible_connection=local
ansible_python_interpreter=%s
""" % sys.executable
DISCOVERED = {"_kubewin_api_kubeconfig": "/nonexistent/admin.conf", "kubewin_deployment_mode": "services",
              "kubewin_container_runtime": "containerd",
              "_kubewin_flannel": {"network_name": "flannel.4096", "external": {"name": "External"}}}


def _collections(tmp_path):
    """kubewin.nodes as it is (patch_rollout its own), with k8s_node and win_node_health faked; ansible.windows
    and kubernetes.core's k8s_info faked."""
    base = tmp_path / "collections" / "ansible_collections"
    ours = base / "kubewin" / "nodes"
    (ours / "plugins" / "action").mkdir(parents=True)
    for name in ("roles", "meta", "galaxy.yml"):
        (ours / name).symlink_to(ROOT / name)
    for name in ("filter", "module_utils", "plugin_utils", "modules", "doc_fragments"):
        (ours / "plugins" / name).symlink_to(ROOT / "plugins" / name)
    for name in ("k8s_node", "win_node_health"):
        (ours / "plugins" / "action" / ("%s.py" % name)).symlink_to(FAKES / ("%s.py" % name))
    (ours / "plugins" / "action" / "patch_rollout.py").symlink_to(ROOT / "plugins" / "action" / "patch_rollout.py")
    windows = base / "ansible" / "windows"
    (windows / "plugins" / "action").mkdir(parents=True)
    (windows / "meta").mkdir()
    (windows / "meta" / "runtime.yml").write_text('requires_ansible: ">=2.15"\n')
    for name in ("win_updates", "win_reboot", "win_service"):
        (windows / "plugins" / "action" / ("%s.py" % name)).symlink_to(FAKES / ("%s.py" % name))
    kubernetes = base / "kubernetes" / "core"
    (kubernetes / "plugins" / "action").mkdir(parents=True)
    (kubernetes / "meta").mkdir()
    (kubernetes / "meta" / "runtime.yml").write_text('requires_ansible: ">=2.15"\n')
    (kubernetes / "plugins" / "action" / "k8s_info.py").symlink_to(FAKES / "k8s_info.py")
    return tmp_path / "collections"


class Rollout(object):
    def __init__(self, tmp_path, updates, **state):
        self.tmp = tmp_path
        self.collections = _collections(tmp_path)
        plays = yaml.safe_load((ROOT / "playbooks" / "patch.yml").read_text())
        assert plays[0] == {"name": "Read the cluster", "ansible.builtin.import_playbook": "discover.yml"}
        (tmp_path / "patch.yml").write_text(yaml.safe_dump(plays[1:]))
        (tmp_path / "hosts.ini").write_text(INVENTORY)
        (tmp_path / "discovered.json").write_text(json.dumps(DISCOVERED))
        data = {"nodes": {h: {"unschedulable": False, "labels": {}} for h in HOSTS}, "updates": updates}
        data.update(state)
        self.write(data)

    def write(self, data):
        (self.tmp / "state.json").write_text(json.dumps(data))

    def read(self):
        return json.loads((self.tmp / "state.json").read_text())

    def run(self, *args):
        env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(self.collections), ANSIBLE_NOCOLOR="1",
                   ANSIBLE_LOCAL_TEMP=str(self.tmp / "tmp"), ANSIBLE_HOME=str(self.tmp / "home"),
                   PATCH_FAKE_STATE=str(self.tmp / "state.json"), PYTHONPATH=str(FAKES),
                   ANSIBLE_COLLECTIONS_SCAN_SYS_PATH="False", ANSIBLE_DEPRECATION_WARNINGS="0")
        command = [str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(self.tmp / "hosts.ini"),
                   str(self.tmp / "patch.yml"), "-e", "@" + str(self.tmp / "discovered.json")] + list(args)
        proc = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=300, check=False)
        return proc.returncode, proc.stdout


def _node(data, host):
    return data["nodes"][host]["unschedulable"], data["nodes"][host]["labels"]


@pytest.fixture
def rollout(tmp_path):
    return Rollout(tmp_path, {"win-1": [["5000001"]], "win-2": [["5000002"]], "win-3": [["5000003"]]},
                   unhealthy=["win-2"])


def test_the_first_failure_stops_the_rollout_and_the_resumed_run_finishes(rollout):
    rc, out = rollout.run()
    assert rc != 0, out
    data = rollout.read()
    assert data["ops"]["win-1"] == ["win_updates searched", "win_updates installed", "win_reboot",
                                    "win_updates installed", "win_node_health"]
    assert _node(data, "win-1") == (False, {})
    assert data["api"][:2] == [["win-1", "win-1", "present"], ["win-1", "win-1", "drained"]]
    assert _node(data, "win-2") == (True, {"kubewin.nodes/patch-state": "failed",
                                           "kubewin.nodes/patch-cordoned": "true"})
    assert data["ops"]["win-2"][-3:] == ["win_node_health", "win_service flanneld restarted",
                                         "win_node_health"]  # one repair
    assert "win-3" not in data["ops"] and _node(data, "win-3") == (False, {})
    assert 'win-2 (win-2) stopped at \\"health check\\": the node is unhealthy after its updates and a repair ' \
           "(flanneld): pod network flannel.4096: missing from HNS" in out
    assert "It stays cordoned" in out and "--limit 'cp,win-2,win-3'" in out
    assert "win-1  win-1  KB5000001      1        " in out and "failed at health check" in out  # the table so far

    data["unhealthy"] = []
    rollout.write(data)
    rc, out = rollout.run("--limit", "cp,win-2,win-3")
    assert rc == 0, out
    data = rollout.read()
    assert _node(data, "win-2") == (False, {}) and _node(data, "win-3") == (False, {})
    assert data["installed"] == {"win-1": ["5000001"], "win-2": ["5000002"], "win-3": ["5000003"]}
    assert "win-2  win-2  -              0        " in out  # resumed: nothing left to install, checked, uncordoned
    assert "win-3  win-3  KB5000003      1        " in out

    rc, out = rollout.run()
    assert rc == 0, out
    assert out.count("nothing to install") == 3 and "changed=0" in out and "changed=1" not in out


def test_check_mode_only_searches_and_lists_the_updates(rollout):
    rc, out = rollout.run("--check")
    assert rc == 0, out
    data = rollout.read()
    assert data["ops"] == {h: ["win_updates searched"] for h in HOSTS}
    assert all(_node(data, h) == (False, {}) for h in HOSTS)
    assert "win-1  win-1  KB5000001  Update (KB5000001)" in out


def test_a_node_cordoned_before_the_run_stays_cordoned(tmp_path):
    rollout = Rollout(tmp_path, {"win-1": [["5000001"]]})
    data = rollout.read()
    data["nodes"]["win-1"]["unschedulable"] = True
    rollout.write(data)
    rc, out = rollout.run()
    assert rc == 0, out
    assert _node(rollout.read(), "win-1") == (True, {})


def test_a_failed_update_is_named(tmp_path):
    rollout = Rollout(tmp_path, {"win-1": [["5000001", "5000009"]]}, failing=["5000009"])
    rc, out = rollout.run()
    assert rc != 0
    assert 'stopped at \\"install the updates\\": 1 update(s) did not install: Update (KB5000009) ' \
           "(WU_E_INSTALL_FAILED)" in out
    assert _node(rollout.read(), "win-1") == (True, {"kubewin.nodes/patch-state": "failed",
                                                     "kubewin.nodes/patch-cordoned": "true"})


def test_serial_two_lets_the_failing_batch_finish_and_stops_the_next(rollout):
    rc, out = rollout.run("-e", "kubewin_patch_serial=2")
    assert rc != 0
    data = rollout.read()
    assert _node(data, "win-1") == (False, {}) and _node(data, "win-2")[0] is True
    assert "win-3" not in data["ops"]


def test_serial_set_in_the_inventory_is_the_rollout_s_serial(tmp_path):
    """kubewin_patch_serial in group_vars: a play keyword sees no inventory variable of a host, so the playbook
    reads the first Windows host's. win-1 fails; with 2 at a time win-2, in its batch, finishes its turn."""
    rollout = Rollout(tmp_path, {"win-1": [["5000001"]], "win-2": [["5000002"]], "win-3": [["5000003"]]},
                      unhealthy=["win-1"])
    (tmp_path / "group_vars").mkdir()
    (tmp_path / "group_vars" / "kube_windows_nodes.yml").write_text("kubewin_patch_serial: 2\n")
    rc, out = rollout.run()
    assert rc != 0
    data = rollout.read()
    assert _node(data, "win-1")[0] is True and _node(data, "win-2") == (False, {}) and "win-2" in data["ops"]
    assert "win-3" not in data["ops"]


def test_serial_differing_between_hosts_is_refused_before_any_change(rollout):
    (rollout.tmp / "host_vars").mkdir()
    (rollout.tmp / "host_vars" / "win-3.yml").write_text("kubewin_patch_serial: 3\n")
    rc, out = rollout.run()
    assert rc != 0
    assert "kubewin_patch_serial is 3 on win-3 but 1 on win-1" in out, out
    assert rollout.read().get("ops", {}) == {}
