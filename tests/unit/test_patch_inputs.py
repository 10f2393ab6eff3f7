"""playbooks/patch.yml's input check (its second play, taken from the playbook as it is) refuses bad inputs of any
host before any change, naming the variable and the fix, and passes good ones to the rollout. The Windows hosts
point at an unreachable address over SSH: the play must not connect to them, so a connection would fail the test."""

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1].parent
INVENTORY = """[kube_control_plane]
cp1 ansible_connection=local
[kube_windows_nodes]
win1
win2
[kube_windows_nodes:vars]
ansible_connection=ssh
ansible_host=192.0.2.1
ansible_ssh_common_args=-o ConnectTimeout=1
"""


def run_check(tmp_path, extra_vars=None, host_vars=None):
    check_play = yaml.safe_load((ROOT / "playbooks" / "patch.yml").read_text())[1]
    assert check_play["hosts"] == "kube_windows_nodes" and check_play["any_errors_fatal"] is True
    shown = {"name": "Show the settings", "hosts": "kube_windows_nodes", "gather_facts": False,
             "tasks": [{"ansible.builtin.copy": {"content": "{{ _kubewin_patch | to_json }}",
                                                 "dest": str(tmp_path / "{{ inventory_hostname }}.json")},
                        "delegate_to": "localhost"}]}
    (tmp_path / "play.yml").write_text(yaml.safe_dump([check_play, shown]))
    (tmp_path / "hosts.ini").write_text(INVENTORY)
    (tmp_path / "host_vars").mkdir()
    for host, values in (host_vars or {}).items():
        (tmp_path / "host_vars" / ("%s.yml" % host)).write_text(yaml.safe_dump(values))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".build" / "collections"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), ANSIBLE_HOME=str(tmp_path / "home"),
               ANSIBLE_HOST_KEY_CHECKING="False")
    command = [str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(tmp_path / "hosts.ini"),
               str(tmp_path / "play.yml")]
    if extra_vars:
        command += ["-e", json.dumps(extra_vars)]
    proc = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300,
                          check=False)
    return proc.returncode, proc.stdout


def test_good_inputs_reach_the_rollout_normalised(tmp_path):
    rc, out = run_check(tmp_path, {"kubewin_patch_categories": ["SecurityUpdates"],
                                   "kubewin_patch_reject_kbs": ["kb5044281"]})
    assert rc == 0, out
    settings = json.loads((tmp_path / "win2.json").read_text())
    assert settings["categories"] == ["Security Updates"]
    assert settings["reject_kbs"] == ["KB5044281", "KB5040437"] and settings["drain_timeout"] == 300


def test_bad_inputs_of_one_host_stop_every_host_before_any_change(tmp_path):
    rc, out = run_check(tmp_path, host_vars={"win2": {"kubewin_patch_categories": ["Securty Updates"],
                                                      "kubewin_patch_accept_kbs": ["KB50404"]}})
    assert rc != 0
    assert "UNREACHABLE" not in out
    assert "kubewin_patch_categories: unknown category 'Securty Updates'" in out
    assert "kubewin_patch_accept_kbs: 'KB50404' is not a KB id" in out
    assert not list(tmp_path.glob("*.json"))  # the next play ran on no host, win1's good inputs included
