"""The lab inventory (winsim/make_inventory.py, scenario.Scenario): per-host profiles, host variables and second
adapters, and 50 hosts with distinct addresses and MACs (the bench's largest run). No lab needed."""

import json
import os

import pytest
import scenario
import yaml
from winsim import core, make_inventory


def _inventory(root):
    with open(os.path.join(root, "inventory.yml")) as f:
        return yaml.safe_load(f)["all"]["children"]


def _state(root, host):
    with core.Host(root, host).open(save=False) as h:
        return h.state


def test_existing_calls_are_unchanged(tmp_path):
    root = make_inventory.build(str(tmp_path), nodes=2, second_adapter="Storage")
    hosts = _inventory(root)["kube_windows_nodes"]["hosts"]
    assert hosts == {"win-1": {"ansible_host": "10.0.0.11"}, "win-2": {"ansible_host": "10.0.0.12"}}
    for h in hosts:
        assert [a["name"] for a in _state(root, h)["adapters"]] == ["Ethernet", "Storage"]
        assert _state(root, h)["runtime"]["name"] == "containerd"


def test_per_host_profile_vars_and_second_adapter(tmp_path):
    root = make_inventory.build(str(tmp_path), nodes=3, profiles={"win-2": "ws2022-docker"},
                                host_vars={"win-1": {"kube_version": "1.37.2"}, "localhost": {"x": 1}},
                                second_adapter={"win-3": "Storage"})
    inv = _inventory(root)
    hosts = inv["kube_windows_nodes"]["hosts"]
    assert hosts["win-1"] == {"kube_version": "1.37.2", "ansible_host": "10.0.0.11"}
    assert hosts["win-2"] == {"ansible_host": "10.0.0.12"}
    assert inv["kube_control_plane"]["hosts"]["localhost"]["x"] == 1
    assert inv["kube_control_plane"]["hosts"]["localhost"]["ip"] == "127.0.0.1"
    assert [_state(root, h)["runtime"]["name"] for h in ("win-1", "win-2", "win-3")] == \
        ["containerd", "docker", "containerd"]
    assert [len(_state(root, h)["adapters"]) for h in ("win-1", "win-2", "win-3")] == [1, 1, 2]


def test_a_setting_for_a_host_the_inventory_lacks_is_refused(tmp_path):
    with pytest.raises(ValueError, match="profiles names hosts the inventory does not have: win-3"):
        make_inventory.build(str(tmp_path), nodes=2, profiles={"win-3": "ws2022-docker"})
    with pytest.raises(ValueError, match="host_vars names hosts .*: win-9"):
        make_inventory.build(str(tmp_path), nodes=2, host_vars={"win-9": {}})


def test_fifty_hosts_have_distinct_addresses_and_macs(tmp_path):
    root = make_inventory.build(str(tmp_path), nodes=50, second_adapter="Storage")
    hosts = _inventory(root)["kube_windows_nodes"]["hosts"]
    assert len(hosts) == 50
    adapters = [a for h in hosts for a in _state(root, h)["adapters"]]
    assert len({a["ip"] for a in adapters}) == 100
    assert len({a["mac"] for a in adapters}) == 100
    assert hosts["win-50"]["ansible_host"] == "10.0.0.60"


def test_scenario_passes_per_host_settings(tmp_path, monkeypatch):
    monkeypatch.setattr(scenario, "lab_version", lambda: "v1.37.2")
    sc = scenario.Scenario(tmp_path, nodes=2, profiles={"win-2": "ws2022-docker"},
                           host_vars={"win-1": {"kube_version": "1.36.5"}}, flannel_backend_type="host-gw")
    assert sc.hosts == ["win-1", "win-2"]
    assert _inventory(sc.root)["kube_windows_nodes"]["hosts"]["win-1"]["kube_version"] == "1.36.5"
    assert _state(sc.root, "win-2")["runtime"]["name"] == "docker"
    with open(os.path.join(sc.root, "group_vars", "all.yml")) as f:
        assert json.load(f)["flannel_backend_type"] == "host-gw"
    sc.set_host_vars("win-2", kube_version="1.38.0", unset=None)
    with open(os.path.join(sc.root, "host_vars", "win-2.yml")) as f:
        assert json.load(f) == {"kube_version": "1.38.0"}


def test_an_unknown_profile_is_refused_before_any_host_is_made(tmp_path):
    with pytest.raises(ValueError, match="unknown profile ws2019-docker"):
        make_inventory.build(str(tmp_path / "r"), nodes=2, profiles={"win-2": "ws2019-docker"})
    assert not os.path.exists(tmp_path / "r" / "hosts")
