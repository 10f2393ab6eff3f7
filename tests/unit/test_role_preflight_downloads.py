"""The preflight role splits preflight's verified downloads between the node role and the metrics role: an archive
(extract_dir, no dest: CNI plugins, containerd) must not stop the split (it did on ansible-core 2.19: "object of type
'dict' has no attribute 'dest'"), and the order of the node's downloads is kept. Rendered by Ansible's templating as
the role writes it."""

from pathlib import Path

import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

try:  # ansible-core 2.19 templates only text marked trusted, as a role's own YAML is
    from ansible.template import trust_as_template
except ImportError:  # 2.18 templates any text
    def trust_as_template(text):
        return text

ROOT = Path(__file__).resolve().parents[2]
EXPORTER = "C:\\k\\windows_exporter.exe"
DOWNLOADS = [{"url": "cni", "extract_dir": "C:\\opt\\cni\\bin"}, {"url": "exporter", "dest": EXPORTER},
             {"url": "kubelet", "dest": "C:\\k\\kubelet.exe"}, {"url": "containerd", "extract_dir": "C:\\c"}]


def test_archives_stay_with_the_node_and_the_exporter_goes_to_the_metrics_role():
    tasks = yaml.safe_load((ROOT / "roles" / "preflight" / "tasks" / "main.yml").read_text())
    facts = [t for t in tasks if t.get("name", "").startswith("Remember this node")][0]["ansible.builtin.set_fact"]
    templar = Templar(loader=DataLoader(), variables={"_kubewin_preflight": {"downloads": DOWNLOADS},
                                                      "_kubewin_windows_exporter_exe": EXPORTER})
    node = templar.template(trust_as_template(facts["kubewin_node_resolved_downloads"]))
    metrics = templar.template(trust_as_template(facts["kubewin_metrics_resolved_downloads"]))
    assert [d["url"] for d in node] == ["cni", "kubelet", "containerd"]
    assert [d["url"] for d in metrics] == ["exporter"]
