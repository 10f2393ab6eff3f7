"""The control_plane role names the DaemonSets to pin itself (discover reads them, prepare pins them only when
that read found something to do, issue 22): its default list is k8s_daemonset_os_pin's own."""

import os

import yaml

from ansible_collections.kubewin.nodes.plugins.module_utils import _daemonset_os as dso

ROLE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                    "roles", "control_plane")


def test_the_roles_default_pin_list_is_the_modules():
    with open(os.path.join(ROLE, "vars", "main.yml")) as f:
        text = yaml.safe_load(f)["_kubewin_pin_daemonsets"]
    listed = yaml.safe_load(text.split("default(", 1)[1].rsplit(", true)", 1)[0])
    assert listed == dso.DEFAULT_DAEMONSETS


def test_prepare_pins_only_what_discover_found_and_with_the_same_list():
    with open(os.path.join(ROLE, "tasks", "prepare.yml")) as f:
        pin = yaml.safe_load(f)[0]["block"][0]
    with open(os.path.join(ROLE, "tasks", "discover.yml")) as f:
        info = yaml.safe_load(f)[0]["block"][0]
    assert pin["kubewin.nodes.k8s_daemonset_os_pin"]["daemonsets"] == "{{ _kubewin_pin_daemonsets }}"
    assert info["kubewin.nodes.k8s_join_info"]["pin_daemonsets"] == "{{ _kubewin_pin_daemonsets }}"
    for key in ("to_pin", "conflicts", "landing_on_windows"):
        assert "daemonset_pins.%s" % key in pin["when"]
