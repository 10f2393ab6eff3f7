"""Each role variable is declared once (issue 9): the kubewin role's argument spec documents every option with
its type, choices and default, the derived values live in its vars/ and are no options, and the other roles
declare none of the collection's options again."""

import re
from pathlib import Path

import pytest
import yaml

from ansible_collections.kubewin.nodes.plugins.module_utils import _daemonset_os as daemonset_os
from ansible_collections.kubewin.nodes.plugins.plugin_utils import _preflight as preflight
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import runtimes

ROOT = Path(__file__).resolve().parents[2]
ROLES = ROOT / "roles"


def _load(*parts):
    return yaml.safe_load((ROLES.joinpath(*parts)).read_text()) or {}


SPEC = _load("kubewin", "meta", "argument_specs.yml")["argument_specs"]["main"]["options"]
DEFAULTS = _load("kubewin", "defaults", "main.yml")
DERIVED = _load("kubewin", "vars", "main.yml")


def test_every_default_is_an_option_and_every_literal_default_is_documented_as_it_is():
    assert set(DEFAULTS) <= set(SPEC)
    for name, value in DEFAULTS.items():
        if isinstance(value, str) and "{{" in value:
            assert "default" not in SPEC[name], name  # a template is described in words, not shown as a default
        elif value is None:
            assert "default" not in SPEC[name] and "Unset" in SPEC[name]["description"], name
        else:
            assert SPEC[name].get("default") == value, name


def test_derived_values_are_no_options_and_no_defaults():
    assert not set(DERIVED) & set(SPEC)
    assert not set(DERIVED) & set(DEFAULTS)


@pytest.mark.parametrize("option, choices", [
    ("kubewin_deployment_mode", list(preflight.DEPLOYMENT_MODES)),
    ("kubewin_container_runtime", list(runtimes.NAMES)),
    ("flannel_backend_type", ["vxlan", "host-gw"]),
])
def test_choices_are_the_ones_preflight_knows(option, choices):
    assert SPEC[option]["choices"] == choices


def test_the_other_roles_declare_no_option_again():
    for spec_file in ROLES.glob("*/meta/argument_specs.yml"):
        if spec_file.parts[-3] == "kubewin":
            continue
        for entry, spec in yaml.safe_load(spec_file.read_text())["argument_specs"].items():
            assert spec.get("options") == {}, "%s %s" % (spec_file, entry)


def test_every_option_and_derived_value_is_used():
    """Nothing declared and never read (e.g. a register nobody uses)."""
    text = "\n".join(p.read_text() for p in list(ROLES.rglob("*.yml")) + list((ROOT / "playbooks").glob("*.yml"))
                     if "argument_specs" not in p.name)
    for name in list(DEFAULTS) + list(DERIVED):
        uses = len(re.findall(r"(?<![\w.])%s(?![\w])" % re.escape(name), text))
        assert uses >= 2, "%s is declared but never read" % name


def test_unset_lists_fall_back_to_the_collections_one_home():
    """kubewin_supported_windows_builds and kubewin_pin_daemonsets unset: preflight's and k8s_daemonset_os_pin's own."""
    assert DEFAULTS["kubewin_supported_windows_builds"] is None and DEFAULTS["kubewin_pin_daemonsets"] is None
    for build in preflight.SUPPORTED_BUILDS:
        assert str(build) in SPEC["kubewin_supported_windows_builds"]["description"]
    for ref in daemonset_os.DEFAULT_DAEMONSETS:
        assert ref in SPEC["kubewin_pin_daemonsets"]["description"]


def test_no_credentials_by_list_position():
    """Tokens and credentials are looked up by component, never as results[0]."""
    for path in list(ROLES.rglob("*.yml")) + list((ROOT / "playbooks").glob("*.yml")):
        assert not re.search(r"results\[\d+\]", path.read_text()), path


def test_derived_values_are_marked_as_internal():
    """Options are kubewin_* (or kubespray's names); what the roles work out is _kubewin_*, so a name says whether
    a user may set it (linux-system-roles' __network_* convention)."""
    assert [name for name in DERIVED if not name.startswith("_kubewin_")] == []
