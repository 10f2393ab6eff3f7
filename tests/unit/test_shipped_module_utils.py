"""What each module ships to the host it runs on, computed by ansible-core's own AnsiballZ finder.

module_utils/ holds only what runs where a module runs (the control-plane host, or the doc stubs' specs):
controller-only code lives in plugin_utils/. A file in module_utils that no module ships is controller-only
and in the wrong folder; a module that ships more than it needs is slower and exposes more on the host.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODULE_UTILS = ROOT / "plugins" / "module_utils"

# Runs in its own interpreter: installing ansible's collection finder must not leak into other tests.
FINDER = r"""
import datetime, inspect, io, json, sys, zipfile
collections, modules_dir = sys.argv[1], sys.argv[2]
sys.path.insert(0, collections)
from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder
_AnsibleCollectionFinder(paths=[collections])._install()
from ansible.executor import module_common

def shipped(name):
    with open("%s/%s.py" % (modules_dir, name), "rb") as f:
        data = f.read()
    zf = zipfile.ZipFile(io.BytesIO(), "w")
    kwargs = {}
    if "extension_manager" in inspect.signature(module_common.recursive_finder).parameters:  # ansible-core 2.19+
        from ansible._internal._ansiballz._builder import ExtensionManager
        kwargs = {"extension_manager": ExtensionManager(), "date_time": datetime.datetime(2026, 1, 1)}
    module_common.recursive_finder(name, "ansible_collections.kubewin.nodes.plugins.modules." + name, data, zf,
                                   **kwargs)
    prefix = "ansible_collections/kubewin/nodes/plugins/module_utils/"
    return sorted(n[len(prefix):] for n in zf.namelist() if n.startswith(prefix))

print(json.dumps({name: shipped(name) for name in sys.argv[3:]}))
"""


@pytest.fixture(scope="module")
def shipped():
    """{module: [module_utils files it ships, relative to plugins/module_utils]}, real files only (AnsiballZ
    adds an empty module_utils/__init__.py of its own)."""
    names = sorted(p.stem for p in (ROOT / "plugins" / "modules").glob("*.py") if p.stem != "__init__")
    out = subprocess.run([sys.executable, "-c", FINDER, str(ROOT / ".build" / "collections"),
                          str(ROOT / "plugins" / "modules")] + names,
                         capture_output=True, text=True, check=True)
    return {m: [f for f in files if (MODULE_UTILS / f).is_file()] for m, files in json.loads(out.stdout).items()}


def test_every_module_utils_file_is_shipped_by_some_module(shipped):
    on_hosts = {f for files in shipped.values() for f in files}
    present = {str(p.relative_to(MODULE_UTILS)) for p in MODULE_UTILS.rglob("*.py")}
    assert present - on_hosts == set(), "controller-only code in module_utils/: move it to plugin_utils/"


def test_the_credentials_module_ships_only_the_kubernetes_side(shipped):
    # its node-side files (kubeconfig, token files) are the controller's (plugin_utils/_host/credential_files.py)
    assert shipped["k8s_node_credentials"] == [
        "_k8s/__init__.py", "_k8s/client.py", "_k8s/runner.py", "_node_credentials.py"]


def test_windows_doc_stubs_ship_only_their_argument_specs(shipped):
    # the win_* modules run as action plugins; their .py files are documentation and argument specs
    stubs = [m for m in shipped if m.startswith("win_") or m == "node_preflight"]
    assert stubs and all(shipped[m] == ["_windows_args.py", "_windows_paths.py"] for m in stubs)


def test_module_utils_are_private():
    """Nothing here is a public API (as community.general's and ansible.windows' private utils)."""
    public = [str(p.relative_to(MODULE_UTILS)) for p in MODULE_UTILS.rglob("*.py")
              if not str(p.relative_to(MODULE_UTILS)).startswith("_")]
    plugin_utils = ROOT / "plugins" / "plugin_utils"
    public += [str(p.relative_to(plugin_utils)) for p in plugin_utils.rglob("*.py")
               if not str(p.relative_to(plugin_utils)).startswith("_")]
    assert public == []


def test_no_python_file_in_plugins_is_over_400_lines():
    long = {str(p.relative_to(ROOT)): n for p in (ROOT / "plugins").rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 400}
    assert long == {}
