"""The sample inventory can be copied into a kubespray inventory without replacing any of kubespray's files or
settings (issue 19, N7): no file of inventory/sample has the relative path of a file in kubespray's own sample
(kubespray v2.31.0's, read from ../shared/fixtures beside the repository); and the sample sets only this
collection's variables and Ansible's connection variables, none that kubespray's sample or defaults name."""

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "inventory" / "sample"
KUBESPRAY = ROOT.parent / "shared" / "fixtures" / "kubespray" / "v2.31.0"
KUBESPRAY_SAMPLE = KUBESPRAY / "inventory" / "sample"

# a variable kubespray's files set or show commented out: "name:" or "# name:" at the start of a line
_YAML_NAME = re.compile(r"^#?\s?([a-z_][a-z0-9_]*):", re.MULTILINE)


def _files(root):
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def _kubespray_sample():
    if not KUBESPRAY_SAMPLE.is_dir():
        pytest.skip("kubespray v2.31.0's sample inventory is not at %s: these tests read kubespray's own files from "
                    "../shared/fixtures beside the repository (present in CI, absent in a plain clone)"
                    % KUBESPRAY_SAMPLE)
    return KUBESPRAY_SAMPLE


def _ini_variables(text):
    """Variables an INI inventory sets: key=value after a host name, and the lines of [group:vars] sections."""
    names, in_vars = set(), False
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("["):
            in_vars = line.rstrip("]").endswith(":vars")
            continue
        tokens = line.split() if not in_vars else [None, line]
        names.update(t.split("=", 1)[0].strip() for t in tokens[1:] if t and "=" in t)
    return names


def _sample_variables():
    """variable -> the sample files that set it."""
    found = {}
    for rel in _files(SAMPLE):
        path = SAMPLE / rel
        if path.suffix in (".yml", ".yaml"):
            names = set(yaml.safe_load(path.read_text()) or {})
        elif path.suffix == ".ini":
            names = _ini_variables(path.read_text())
        else:
            continue
        for name in names:
            found.setdefault(name, []).append(rel)
    return found


def test_the_sample_has_files_to_check():
    files = _files(SAMPLE)
    assert "group_vars/all/kubewin.yml" in files and "group_vars/kube_windows_nodes.yml" in files
    assert _sample_variables()


def test_no_sample_file_has_the_name_of_a_file_in_kubesprays_sample():
    kubespray = {name.lower() for name in _files(_kubespray_sample())}
    clashes = [rel for rel in _files(SAMPLE) if rel.lower() in kubespray]
    assert not clashes, (
        "inventory/sample has files of kubespray's own sample: copying them into a kubespray inventory replaces "
        "kubespray's: %s" % clashes)


def test_the_sample_sets_only_this_collections_and_ansibles_connection_variables():
    others = {name: files for name, files in _sample_variables().items()
              if not name.startswith(("kubewin_", "ansible_"))}
    assert not others, "the sample sets variables that are not this collection's: %s" % others


def test_the_sample_sets_no_variable_kubespray_names():
    root = _kubespray_sample()
    kubespray = set()
    for path in list(root.rglob("*.yml")) + list((KUBESPRAY / "roles").rglob("defaults/**/*.yml")):
        kubespray.update(_YAML_NAME.findall(path.read_text()))
    assert {"kube_network_plugin", "http_proxy", "files_repo", "flannel_vxlan_vni"} <= kubespray  # the reading works
    shared = {name: files for name, files in _sample_variables().items() if name in kubespray}
    assert not shared, "the sample sets kubespray's variables, which copying it would change: %s" % shared
