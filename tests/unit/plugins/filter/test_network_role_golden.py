"""The network role's flanneld and kube-proxy command lines and kube-proxy's source VIP reservation, rendered from the
role's own expressions (roles/network/tasks/main.yml) through Ansible's templating with the filters
kube_log_runner, kube_proxy_args and source_vip_reservation: plugin_utils/network_services_golden.json is what they
render (the same on ansible-core 2.18 and 2.19), kept as the bytes the code that replaces them must produce."""

import json
from pathlib import Path

import pytest
import yaml
from conftest import trust_as_template

ROOT = Path(__file__).resolve().parents[4]
GOLDEN = json.loads((ROOT / "tests/unit/plugins/plugin_utils/network_services_golden.json").read_text())
TASKS = yaml.safe_load((ROOT / "roles/network/tasks/main.yml").read_text())
BLOCK = {t["name"]: t for t in next(t for t in TASKS if "block" in t)["block"]}
FLANNELD = BLOCK["Run flanneld as a Windows service (under NSSM)"]
RESERVE = BLOCK["Reserve kube-proxy's source VIP in host-local's store"]
PROXY = BLOCK["Run kube-proxy as a native Windows service"]
FLANNEL = yaml.safe_load((ROOT / "roles/kubewin/vars/main.yml").read_text())["_kubewin_flannel"]


@pytest.mark.parametrize("case", GOLDEN, ids=[c["id"] for c in GOLDEN])
def test_the_roles_expressions_render_the_golden_bytes(render, case):
    c = case["inputs"]
    variables = {
        "kubewin_node_spec": {"name": c["node_name"], "ip": c["ip"]},
        "_kubewin_settings": c["settings"], "_kubewin_inventory_settings": {},
        "_kubewin_pods_subnet": c["pods_subnet"], "_kubewin_flannel": FLANNEL,
        "_kubewin_kube_version": "{{ given | kubewin.nodes.kube_release(server) }}",
        "given": c["given"], "server": c["server"],
        "kubewin_log_file_max_size_mb": c["max_size_mb"], "kubewin_log_file_max_age_hours": c["max_age_hours"],
        "_kubewin_node_entry": {"pod_cidr": c["pod_cidr"]},
    }
    for task in (FLANNELD, RESERVE, PROXY):
        variables.update(task["vars"])
    variables = {k: trust_as_template(v) if isinstance(v, str) and "{{" in v else v for k, v in variables.items()}
    assert render("{{ _kubewin_kube_version }}", **variables) == case["kube_version"]
    assert render("{{ _kubewin_flanneld_argv }}", **variables) == case["flanneld_argv"]
    assert render("{{ _kubewin_kube_proxy_argv }}", **variables) == case["kube_proxy_argv"]
    assert render(RESERVE["kubewin.nodes.win_host_files"]["files"][0], **variables) == case["source_vip_reservation"]
