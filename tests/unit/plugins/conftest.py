"""Filters and templates run the way a role runs them: through Ansible's templating, by their FQCN."""

import sys
from pathlib import Path

import pytest
from ansible.parsing.dataloader import DataLoader
from ansible.plugins.loader import init_plugin_loader
from ansible.template import Templar
from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder

try:  # ansible-core 2.19 templates only trusted text (data tagging)
    from ansible.template import trust_as_template
except ImportError:  # ansible-core 2.18
    def trust_as_template(text):
        return text

COLLECTIONS = Path(__file__).resolve().parents[3] / ".build" / "collections"  # made by tests/unit/conftest.py


@pytest.fixture(scope="module")
def render():
    """Ansible's collection loader for the tests of one module, then the plain imports the other tests use again
    (the loader cannot take over modules those already imported from sys.path)."""
    def ours(name):
        return name == "ansible_collections" or name.startswith("ansible_collections.")

    saved = {name: module for name, module in sys.modules.items() if ours(name)}
    for name in saved:
        del sys.modules[name]
    init_plugin_loader([str(COLLECTIONS)])

    def render(expression, **variables):
        return Templar(loader=DataLoader(), variables=variables).template(trust_as_template(expression))

    try:
        yield render
    finally:
        _AnsibleCollectionFinder._remove()
        for name in [name for name in sys.modules if ours(name)]:
            del sys.modules[name]
        sys.modules.update(saved)
