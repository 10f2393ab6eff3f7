"""review-s9 W5: a joined node the runtime role cordons for its pre-pulls is uncordoned also when a pull fails (the
join play is not serial: every joined node of the run would stay unschedulable after a wrong tag or a registry
outage)."""

import yaml
from role_tasks import ROOT


def test_the_uncordon_after_the_pre_pulls_runs_whatever_the_pulls_did():
    tasks = yaml.safe_load((ROOT / "roles" / "runtime" / "tasks" / "main.yml").read_text())
    block = [t for t in tasks if t.get("name") == "Pull the images the node lacks before it takes work"][0]
    cordon = [t for t in block["block"] if t.get("kubewin.nodes.k8s_node", {}).get("state") == "cordoned"]
    uncordon = [t for t in block.get("always", []) if t.get("kubewin.nodes.k8s_node", {}).get("state") == "uncordoned"]
    assert len(cordon) == 1 and len(uncordon) == 1
    assert cordon[0]["register"] in uncordon[0]["when"] and "is changed" in uncordon[0]["when"]
    assert not any(t.get("kubewin.nodes.k8s_node", {}).get("state") == "uncordoned" for t in block["block"])
