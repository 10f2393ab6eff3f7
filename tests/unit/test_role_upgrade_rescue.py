"""review-s9 W1: a failure after the upgrade role stopped the node's services (the containerd unpack or its verify, the
node's binaries, kubeadm upgrade node) starts again the services the run stopped, only those that were running, and
fails naming the host, the task and how to resume. Fails on the old code (the block had no rescue)."""

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar
from role_tasks import ROOT

try:  # ansible-core 2.19 renders only trusted templates (data tagging); 2.18 every string
    from ansible.template import trust_as_template
except ImportError:  # pragma: no cover - ansible-core 2.18
    def trust_as_template(text):
        return text


def _upgrade_block():
    tasks = yaml.safe_load((ROOT / "roles" / "upgrade" / "tasks" / "main.yml").read_text())
    return [t for t in tasks if "block" in t and any(s.get("name") == "Stop the kubelet" for s in t["block"])][0]


def _render(text, **variables):
    return Templar(loader=DataLoader(), variables=variables).template(trust_as_template(text))


def test_every_stop_of_the_block_registers_what_the_rescue_starts_again():
    block = _upgrade_block()
    stops = [t for t in block["block"] if t.get("name", "").startswith("Stop ")]
    assert [t["register"] for t in stops] == ["_kubewin_upgrade_stopped_network", "_kubewin_upgrade_stopped_kubelet",
                                              "_kubewin_upgrade_stopped_containerd"]
    start, fail = block["rescue"]
    assert start["ansible.windows.win_service"]["state"] == "started" and start["ignore_errors"] is True
    assert "ansible.builtin.fail" in fail
    for stop in stops:
        assert stop["register"] in start["loop"]


@pytest.mark.parametrize("containerd, kubelet, network, expected", [
    # every service was running: containerd first (the kubelet depends on it), then flanneld before kube-proxy
    ({"changed": True}, {"changed": True, "run": "stop"}, [True, True],
     ["containerd", "kubelet", "flanneld", "kube-proxy"]),
    # containerd not upgraded (its stop skipped), kube-proxy was stopped already before the run
    ({"changed": False, "skipped": True}, {"changed": True, "run": "stop"}, [False, True], ["kubelet", "flanneld"]),
    # a kubelet that was stopped already: its task may still change its definition (the new version's flags)
    ({"changed": True}, {"changed": True, "run": "none", "definition": "update"}, [True, True],
     ["containerd", "flanneld", "kube-proxy"]),
    # the drain failed: nothing was stopped yet
    (None, None, None, []),
])
def test_the_rescue_starts_only_what_the_run_stopped(containerd, kubelet, network, expected):
    start = _upgrade_block()["rescue"][0]
    variables = {}
    if containerd is not None:
        variables["_kubewin_upgrade_stopped_containerd"] = containerd
        variables["_kubewin_upgrade_stopped_kubelet"] = kubelet
        variables["_kubewin_upgrade_stopped_network"] = {"changed": any(network), "results": [
            {"item": i, "changed": c} for i, c in zip(["kube-proxy", "flanneld"], network, strict=True)]}
    assert _render(start["loop"], **variables) == expected


def test_the_failure_names_the_host_the_task_what_started_and_how_to_resume():
    fail = _upgrade_block()["rescue"][1]["ansible.builtin.fail"]["msg"]
    msg = _render(fail, inventory_hostname="win-1", ansible_failed_task={"name": "The containerd archives"},
                  ansible_failed_result={"msg": "tar failed"}, _kubewin_upgrade_restarted={"results": [
                      {"item": "containerd", "failed": True, "msg": "1053"}, {"item": "kubelet", "changed": True}]})
    assert msg.startswith('The upgrade of win-1 failed at "The containerd archives": tar failed.'), msg
    assert "Started again: kubelet." in msg and "Not started (see the task above): containerd." in msg
    assert "stays cordoned" in msg and "run playbooks/upgrade.yml again (--limit win-1" in msg
