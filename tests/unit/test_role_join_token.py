"""The node role joins with the inventory's kubeadm_token only when kubewin_use_kubeadm_token is true (security-2 N8):
the k8s_join_token task's token, rendered by Ansible's own templating as the role writes it."""

from pathlib import Path

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

try:  # ansible-core 2.19 templates only text marked trusted, as a role's own YAML is
    from ansible.template import trust_as_template
except ImportError:  # 2.18 templates any text
    def trust_as_template(text):
        return text

ROOT = Path(__file__).resolve().parents[2]
OMIT = "__omit_place_holder__kubewin"


def token_expression():
    tasks = yaml.safe_load((ROOT / "roles" / "node" / "tasks" / "main.yml").read_text())

    def walk(items):
        for t in items:
            if "token" in (t.get("kubewin.nodes.k8s_join_token") or {}):
                yield t["kubewin.nodes.k8s_join_token"]["token"]
            for key in ("block", "rescue", "always"):
                yield from walk(t.get(key) or [])
    found = list(walk(tasks))
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize("use, cp_vars, expected", [
    (False, {"kubeadm_token": "abcdef.0123456789abcdef"}, OMIT),
    (True, {"kubeadm_token": "abcdef.0123456789abcdef"}, "abcdef.0123456789abcdef"),
    (True, {}, OMIT),
    (False, {}, OMIT),
])
def test_the_fixed_token_is_passed_only_when_asked_for(use, cp_vars, expected):
    templar = Templar(loader=DataLoader(), variables={"kubewin_use_kubeadm_token": use, "_kubewin_cp": cp_vars,
                                                      "omit": OMIT})
    assert templar.template(trust_as_template(token_expression())) == expected
