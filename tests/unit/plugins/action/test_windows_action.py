"""Every Windows action plugin reports a failure as '<module> on <host>: <reason>'."""

import importlib
from pathlib import Path

import pytest
from remote_host import RemoteHost, ScriptFailed

ACTION_DIR = Path(__file__).resolve().parents[4] / "plugins" / "action"

# module -> (options, what the reason starts with before the script's own words)
CASES = {
    "win_hns_cleanup": ({"networks": ["cbr0"]}, ""),
    "win_hns_network": ({"name": "cbr0", "state": "absent"}, "network cbr0: "),
    "win_docker_network": ({"name": "host"}, "Docker network host: "),
    "win_kubelet_service": ({"kubelet_version": "v1.36.4"}, "service kubelet: "),
    "win_host_service": ({"name": "kube-proxy", "path": "C:\\k\\kube-proxy.exe"}, "service kube-proxy: "),
    "win_host_facts": ({}, ""),
    "win_host_files": ({"directories": [{"path": "C:\\k"}]}, ""),
    "win_node_health": ({"node_name": "win-9", "node": {}, "pod_network": "flannel.4096",
                         "container_runtime": "containerd"}, ""),
    "win_node_bundle": ({"container_runtime": "containerd"}, ""),
    "win_containerd": ({"sandbox_image": "registry.k8s.io/pause:3.10"}, "containerd: "),
    "win_image_pull": ({"image": "registry.k8s.io/pause:3.10.2"}, "image registry.k8s.io/pause:3.10.2: "),
}


def _refuse(params):
    raise ScriptFailed("Access is denied")


@pytest.mark.parametrize("module", sorted(CASES))
def test_a_failed_script_names_module_host_and_what_the_host_said(make_action, module):
    options, subject = CASES[module]
    action_cls = importlib.import_module("ansible_collections.kubewin.nodes.plugins.action." + module).ActionModule
    scripts = ("hns_state", "service_state", "node_facts", "files_state", "node_health", "node_bundle",
               "docker_state", "containerd_state", "image_pull")
    host = RemoteHost({name: _refuse for name in scripts})
    result = make_action(action_cls, options, host).run(task_vars={"inventory_hostname": "win-9"})
    assert result["failed"] and len(host.calls) == 1
    script = host.calls[0][0]
    assert result["msg"] == "%s on win-9: %sscript %s failed: Access is denied" % (module, subject, script)


def test_every_windows_action_plugin_is_covered():
    # node_preflight and patch_rollout run nothing on the host: their failure lists every problem
    # (test_node_preflight.py, test_patch_rollout_action.py); bundle_archive runs on the controller (test_bundle.py).
    controller_only = {"node_preflight", "patch_rollout", "bundle_archive"}
    assert {p.stem for p in ACTION_DIR.glob("*.py")} - controller_only == set(CASES)
