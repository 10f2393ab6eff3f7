"""Every restricted file the node and network roles write lands in a directory the node role restricts
first (the network role runs after it in scale_up.yml and upgrade.yml)."""

import ntpath
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _restricted_files():
    tasks = yaml.safe_load((ROOT / "roles" / "node" / "tasks" / "main.yml").read_text())
    for task in tasks:
        args = task.get("kubewin.nodes.win_host_files") or {}
        files = args.get("files")
        for f in files if isinstance(files, list) else []:
            if f.get("restricted") and "{{" not in f["path"]:
                yield f["path"]
    # kube-proxy's and flanneld's tokens and kubeconfigs (network role, services mode)
    network = yaml.safe_load((ROOT / "roles" / "network" / "vars" / "main.yml").read_text())
    yield from network["_kubewin_token_files"].values()
    yield from network["_kubewin_component_kubeconfigs"].values()


def test_secret_files_go_into_directories_restricted_beforehand():
    role_vars = yaml.safe_load((ROOT / "roles" / "node" / "vars" / "main.yml").read_text())
    assert "_kubewin_credential_directories" in role_vars["_kubewin_directories"]
    restricted = {d["path"].lower() for d in role_vars["_kubewin_base_directories"]
                  + role_vars["_kubewin_credential_directories"] if d.get("restricted", True)}
    files = list(_restricted_files())
    assert any(p.endswith("\\token") for p in files), "no token file found: update this test"
    for path in files:
        assert ntpath.dirname(path).lower() in restricted, path
