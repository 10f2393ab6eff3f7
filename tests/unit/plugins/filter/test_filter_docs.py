"""Every filter has the documentation ansible-doc and Galaxy show (plugins/filter/<name>.yml)."""

import inspect
import re
from pathlib import Path

import pytest
import yaml

from ansible_collections.kubewin.nodes.plugins.filter import cluster, join, kubespray, node

FILTER_DIR = Path(__file__).resolve().parents[4] / "plugins" / "filter"
FILTERS = {name: func for module in (cluster, join, kubespray, node)
           for name, func in module.FilterModule().filters().items()}


def _doc(name):
    return yaml.safe_load((FILTER_DIR / ("%s.yml" % name)).read_text())


def _target(func):
    """The function a filter calls (the plugins wrap module_utils functions to turn their errors into
    AnsibleFilterError)."""
    while func.__closure__:
        inner = [c.cell_contents for c in func.__closure__ if callable(c.cell_contents)]
        if not inner:
            break
        func = inner[0]
    return func


def test_every_documented_filter_exists_and_every_filter_is_documented():
    documented = {p.stem for p in FILTER_DIR.glob("*.yml")}
    assert documented == set(FILTERS)


@pytest.mark.parametrize("name", sorted(FILTERS))
def test_the_documented_arguments_are_the_ones_the_filter_takes(name):
    """A user writes ``_input | kubewin.nodes.<name>(positional...)`` from the docs: those must be the
    function's parameters in that order, and a parameter the docs mark required must have no default."""
    doc = _doc(name)["DOCUMENTATION"]
    assert doc["name"] == name
    params = list(inspect.signature(_target(FILTERS[name])).parameters.values())
    options = doc["options"]
    positional = [p.strip() for p in doc.get("positional", "").split(",") if p.strip()]
    assert len(params) == 1 + len(positional)
    assert set(options) == {"_input", *positional}
    own = list(inspect.signature(FILTERS[name]).parameters.values())
    if own[0].kind is not inspect.Parameter.VAR_POSITIONAL:  # not a generic wrapper: its own names count
        params = own
    for param, option in zip(params[1:], positional, strict=True):
        assert param.name == option, "%s: positional %s is the function's %s" % (name, option, param.name)
        has_default = param.default is not inspect.Parameter.empty
        assert options[option].get("required", False) is not has_default, option
        if has_default and param.default is not None:
            assert options[option]["default"] == param.default, option


@pytest.mark.parametrize("name", sorted(FILTERS))
def test_the_examples_use_the_filter_by_its_full_name(name):
    assert re.search(r"kubewin\.nodes\.%s\b" % name, _doc(name)["EXAMPLES"])


def test_the_public_filters_are_the_ones_the_docs_offer_and_the_rest_say_they_are_internal():
    """docs/filters.md is the public surface; a filter it does not offer says in its own docs that it is internal
    (so ansible-doc and the docs site do not present role plumbing as something to build on)."""
    offered = set(re.findall(r"^\| `([a-z_]+)` \|", (FILTER_DIR.parents[1] / "docs" / "filters.md").read_text(), re.M))
    assert offered and offered <= set(FILTERS)
    for name in FILTERS:
        internal = any(line.startswith("Internal to the collection's roles")
                       for line in _doc(name)["DOCUMENTATION"]["description"])
        assert internal is (name not in offered), name
