"""The simulated Windows nodes' kubelet flag list (lab/_cache/<version>/kubelet-flags.txt, read by
winsim_kube.kubelet_flag_spec: which flags take a value, and which are unknown where the lab has no kubelet.exe) is the
Windows kubelet's: lab/bin/lab-build saves the lab's kubelet.exe --help and --version under Wine
(lab/kubelet_flags/save_help.py) and builds no Linux kubelet for it (issue 22: a cold `make setup` within 20 min).
Needs lab/bin/lab-build's outputs; no control plane."""

import json
import os
import sys

import pytest
from winsim import core  # noqa: E402

# isort: split
# winsim.core has put the stand-in ansible.windows collection on sys.path.
from ansible_collections.ansible.windows.plugins.module_utils import winsim_kube  # noqa: E402

LAB = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(LAB)
CACHE = os.path.join(LAB, "_cache")
sys.path.insert(0, os.path.join(LAB, "kubelet_flags"))
import save_help  # noqa: E402


def _read(name):
    with open(os.path.join(LAB, "controlplane", name)) as f:
        return f.read().strip()


VERSIONS = [_read("VERSION"), _read("UPGRADE_FROM")]


@pytest.fixture
def host(tmp_path):
    with open(os.path.join(str(tmp_path), "winsim.json"), "w") as f:
        json.dump({"lab_cache": CACHE}, f)
    return core.create_host(str(tmp_path), "w")


@pytest.mark.parametrize("version", VERSIONS)
def test_the_flag_list_is_the_windows_kubelets(host, version):
    path = os.path.join(CACHE, version, "kubelet-flags.txt")
    assert os.path.exists(path), "no %s: run lab/bin/lab-build" % path
    spec = winsim_kube.kubelet_flag_spec(host, version)
    # cmd/kubelet/app/options/osflags_windows.go registers these two; globalflags_linux.go's cAdvisor flags
    # (--housekeeping-interval, and on 1.36 the storage-driver ones) exist only in a Linux build
    assert spec["windows-service"] is False and spec["windows-priorityclass"] is True
    assert "housekeeping-interval" not in spec and "storage-driver-db" not in spec
    assert spec["config"] is True and spec["node-labels"] is True and spec["anonymous-auth"] is False
    with open(path) as f:
        assert f.read().splitlines()[-1] == "Kubernetes %s" % version
    # the collection's flag set of that minor, generated from the Windows kubelet's sources (every flag, hidden
    # ones included): the list names only flags in it, each with the same arity
    with open(os.path.join(ROOT, "plugins", "plugin_utils", "_preflight", "kubelet_flags.json")) as f:
        entry = json.load(f)["minors"][version[1:].rsplit(".", 1)[0]]
    if entry["version"] != version:
        pytest.skip("kubelet_flags.json has %s for that minor, not %s" % (entry["version"], version))
    # except --seccomp-default: a boolean whose usage has `RuntimeDefault` in backquotes, which pflag prints as a value
    # name (UnquoteUsage), so the list's parser takes it for a flag with a value (as it did the Linux list's)
    assert {name: entry["flags"].get(name) for name in spec} == dict(spec, **{"seccomp-default": False})


def test_save_help_refuses_a_list_that_is_not_the_windows_kubelets(monkeypatch, tmp_path):
    exe = tmp_path / "v1.37.2" / "win" / "kubelet.exe"
    exe.parent.mkdir(parents=True)
    exe.write_bytes(b"MZ")
    linux = ("Usage:\n  kubelet [flags]\n\nFlags:\n      --config string        The Kubelet will load its initial "
             "configuration\n      --housekeeping-interval duration   Interval between container housekeepings\n")
    windows = linux + "      --windows-service        Enable Windows Service Control Manager API integration\n"
    answers = {}
    monkeypatch.setattr(save_help.generate, "wine", lambda exe, args, cache: (0, answers[args[0]], ""))
    answers.update({"--help": linux, "--version": "Kubernetes v1.37.2\n"})
    with pytest.raises(SystemExit, match="missing: windows-service"):
        save_help.flag_list(str(tmp_path), "v1.37.2")
    answers.update({"--help": windows, "--version": "Kubernetes v1.36.3\n"})
    with pytest.raises(SystemExit, match="not Kubernetes v1.37.2"):
        save_help.flag_list(str(tmp_path), "v1.37.2")
    answers["--version"] = "Kubernetes v1.37.2\n"
    assert save_help.flag_list(str(tmp_path), "v1.37.2") == windows + "Kubernetes v1.37.2\n"
