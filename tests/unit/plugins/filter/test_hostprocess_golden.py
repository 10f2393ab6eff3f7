"""The golden HostProcess DaemonSets (plugin_utils/hostprocess_daemonsets_golden.json): what the control_plane role's
templates render through the filter hostprocess_pinned_image and the template lookup (as hostprocess.yml reads them),
on ansible-core 2.18 and 2.19 alike, recorded before that filter goes (issue 18)."""

import json
from pathlib import Path

import pytest
from ansible.errors import AnsibleError

ROOT = Path(__file__).resolve().parents[4]
GOLDEN = json.loads((ROOT / "tests/unit/plugins/plugin_utils/hostprocess_daemonsets_golden.json").read_text())


@pytest.mark.parametrize("case", GOLDEN, ids=[c["id"] for c in GOLDEN])
def test_the_templates_render_the_golden_bytes_through_the_filter(render, case):
    c = case["inputs"]
    variables = dict(c["images"], kubewin_hostprocess_image_pins=c["pins"],
                     kubewin_join={"api_server_endpoint": c["api_server_endpoint"]},
                     _kubewin_flannel={"network_name": c["network_name"]},
                     _kubewin_flannel_namespace=c["flannel_namespace"],
                     _kubewin_flannel_configmap=c["flannel_configmap"])
    for name, text in case["rendered"].items():
        expr = "{{ lookup('ansible.builtin.template', %r) }}" % str(ROOT / "roles/control_plane/templates" / name)
        if text is None:
            with pytest.raises(AnsibleError) as err:
                render(expr, **variables)
            assert case["errors"][name] in str(err.value)
        else:
            assert render(expr, **variables) == text
