"""Every module's DOCUMENTATION, EXAMPLES and RETURN are YAML that ansible-doc can read, and the options of the
modules that run through an action plugin are exactly the keys of the argument spec they share with it (a plain
description line holding ': ' becomes a mapping and breaks ansible-doc and the docs site)."""

import ast
from pathlib import Path

import pytest
import yaml

from ansible_collections.kubewin.nodes.plugins.module_utils import _windows_args as wa

MODULE_DIR = Path(__file__).resolve().parents[4] / "plugins" / "modules"
MODULES = [p.stem for p in sorted(MODULE_DIR.glob("*.py")) if p.stem != "__init__"]


def _docs(name):
    tree = ast.parse((MODULE_DIR / ("%s.py" % name)).read_text())
    return {t.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
            for t in node.targets if isinstance(t, ast.Name) and t.id in ("DOCUMENTATION", "EXAMPLES", "RETURN")}


@pytest.mark.parametrize("name", MODULES)
def test_documentation_examples_and_return_parse(name):
    docs = _docs(name)
    assert set(docs) == {"DOCUMENTATION", "EXAMPLES", "RETURN"}, name
    doc = yaml.safe_load(docs["DOCUMENTATION"])
    yaml.safe_load(docs["EXAMPLES"])
    yaml.safe_load(docs["RETURN"])

    def descriptions(options):
        for opt in (options or {}).values():
            text = opt.get("description")
            for item in text if isinstance(text, list) else [text]:
                assert isinstance(item, str), "%s: a description item parsed as %r (quote it or drop ': ')" % (
                    name, item)
            yield from descriptions(opt.get("suboptions"))
    list(descriptions(doc.get("options")))
    for item in doc.get("description") or []:
        assert isinstance(item, str), "%s: a description item parsed as %r" % (name, item)


def test_win_host_files_documents_exactly_its_argument_spec():
    doc = yaml.safe_load(_docs("win_host_files")["DOCUMENTATION"])
    assert set(doc["options"]) == set(wa.FILES_ARGSPEC)
    assert doc["options"]["forget_transport_key"]["default"] is False
