"""The node's subnet (host-gw's OutBoundNAT exception), other CNI configurations in the runtime's directory, the
vxlan warning for Windows Server 2019 and the firewall rules' remote addresses, from the facts read through preflight
to the roles (realnode F4, F7, F8; security-2 N10)."""

import json
import re
from pathlib import Path

import pytest
import yaml
from test_preflight import VALID

from ansible_collections.kubewin.nodes.plugins.plugin_utils import _preflight as preflight
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import facts as host_facts
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import firewall, runtime_cni

ROOT = Path(__file__).resolve().parents[4]

DUMP_V2 = ('version = 2\n[plugins."io.containerd.grpc.v1.cri".cni]\n'
           '  bin_dir = "C:\\\\Program Files\\\\containerd\\\\cni\\\\bin"\n'
           '  conf_dir = "C:\\\\Program Files\\\\containerd\\\\cni\\\\conf"\n  max_conf_num = 1\n')
DUMP_V3 = ("version = 3\n[plugins.'io.containerd.cri.v1.runtime'.cni]\n  bin_dirs = ['c:/opt/cni/bin']\n"
           "  conf_dir = 'c:/etc/cni/net.d'\n  max_conf_num = 0\n")


def _answer(dump, listing, adapters=None):
    return {"version": {"major": 10, "minor": 0, "build": "20348", "ubr": 1},
            "services": {"containerd": {"exists": True, "config_dump": dump}},
            "adapters": adapters or [], "cni_conf_files": listing}


# --- F4: the runtime's conf directory is listed in the facts read ----------------------------------------------

def test_the_facts_read_lists_the_runtimes_conf_directories():
    params = host_facts.script_parameters()
    assert runtime_cni.CONTAINERD_DEFAULT_CONF_DIR in params["CniConfDirs"]
    assert runtime_cni.CRI_DOCKERD_DEFAULT_CONF_DIR in params["CniConfDirs"]
    # the pattern finds conf_dir in both dump formats (the script applies it with .NET's regex, same syntax)
    m = re.search(params["ConfDirPattern"], DUMP_V2)
    assert m.group(2).replace("\\\\", "\\") == runtime_cni.CONTAINERD_DEFAULT_CONF_DIR and m.group(1) is None
    m = re.search(params["ConfDirPattern"], DUMP_V3)
    assert m.group(1) == "c:/etc/cni/net.d"


def test_conf_files_of_the_runtimes_conf_dir_reach_the_facts():
    facts = host_facts.node_facts(_answer(DUMP_V3, {"c:/etc/cni/net.d": ["0-containerd-nat.json", "10-flannel.conf"],
                                                    runtime_cni.CRI_DOCKERD_DEFAULT_CONF_DIR: []}))
    cni = facts["cni"]["containerd"]
    assert cni["conf_files"] == ["0-containerd-nat.json", "10-flannel.conf"] and cni["max_conf_num"] == 0
    # a directory the read did not list is unknown (None), not empty
    assert host_facts.node_facts(_answer(DUMP_V2, {}))["cni"]["containerd"]["conf_files"] is None


def test_preflight_stops_on_a_cni_configuration_that_sorts_before_flannels():
    cni = host_facts.node_facts(_answer(DUMP_V2, {runtime_cni.CONTAINERD_DEFAULT_CONF_DIR: [
        "0-containerd-nat.json", "10-flannel.conf"]}))["cni"]["containerd"]
    failures, dummy, dummy2 = preflight.run_checks(dict(VALID, cni_dirs=cni))
    assert [f["check"] for f in failures] == ["cni_dirs"], failures
    msg = failures[0]["message"]
    assert "C:\\Program Files\\containerd\\cni\\conf\\0-containerd-nat.json" in msg and "remove or rename" in msg
    # 10-flannel.conf alone (a re-run) and files that sort after it with max_conf_num = 1 pass
    ok = dict(cni, conf_files=["10-flannel.conf", "99-later.conflist", "notes.txt"])
    assert preflight.run_checks(dict(VALID, cni_dirs=ok))[0] == []
    # with max_conf_num = 0 containerd loads every configuration: the later one is named too
    failures = preflight.run_checks(dict(VALID, cni_dirs=dict(ok, max_conf_num=0)))[0]
    assert "99-later.conflist" in failures[0]["message"] and "max_conf_num = 1" in failures[0]["message"]


# --- F8: the node's subnet ----------------------------------------------------------------------------------

def test_the_node_subnet_comes_from_the_adapters_prefix_length():
    adapters = [{"name": "Ethernet", "ipv4": ["192.168.1.10"], "ipv4_cidr": ["192.168.1.10/24"]},
                {"name": "Storage", "ipv4": ["10.50.0.10"], "ipv4_cidr": ["10.50.0.10/16"]}]
    facts = host_facts.node_facts(_answer(DUMP_V2, {}, adapters))
    assert facts["adapters"][0] == {"name": "Ethernet", "ipv4": ["192.168.1.10/24"]}
    ident = preflight.run_checks(dict(VALID, adapters=facts["adapters"], adapter_name="Storage"))[2]
    assert ident["ip"] == "10.50.0.10" and ident["subnet"] == "10.50.0.0/16"
    # a prefix length the host did not report: unknown
    no_prefix = [{"name": "E", "ipv4": ["10.0.0.10"], "ipv4_cidr": ["10.0.0.10/"]}]
    bare = host_facts.node_facts(_answer(DUMP_V2, {}, no_prefix))
    assert bare["adapters"] == [{"name": "E", "ipv4": ["10.0.0.10"]}]
    assert preflight.run_checks(dict(VALID, adapters=bare["adapters"]))[2]["subnet"] is None


def test_the_node_role_writes_preflights_cni_config_which_has_the_subnet():
    node_vars = yaml.safe_load((ROOT / "roles" / "node" / "vars" / "main.yml").read_text())
    assert "kubewin_node_spec.config_files" in node_vars["_kubewin_config_files"]
    settings = {"pods_subnet": "10.244.0.0/16", "service_subnet": "10.96.0.0/12", "dns_server": "10.96.0.10",
                "dns_domain": "cluster.local", "flannel_backend_type": "host-gw"}
    files, dummy = preflight.node_config_files(
        dict(settings=settings, container_runtime="containerd", cni_dirs={"conf_dir": "C:\\etc\\cni\\net.d"},
             server_version="v1.37.2"), {"ip": "192.168.1.10", "subnet": "192.168.1.0/24"})
    nat = json.loads(files[0]["content"])["delegate"]["AdditionalArgs"][0]["Value"]
    assert nat["Type"] == "OutBoundNAT" and "192.168.1.0/24" in nat["Settings"]["Exceptions"]


# --- F7: Windows Server 2019 with vxlan ---------------------------------------------------------------------

def test_windows_server_2019_with_vxlan_is_warned_towards_host_gw():
    failures, warnings, dummy = preflight.run_checks(dict(VALID, windows_build="10.0.17763.6659"))
    assert failures == []
    assert [w["variable"] for w in warnings] == ["flannel_backend_type"]
    assert "18321" in warnings[0]["message"] and "host-gw" in warnings[0]["message"]
    host_gw = dict(VALID, windows_build="10.0.17763.6659", flannel_backend_type="host-gw",
                   cluster_flannel=dict(VALID["cluster_flannel"], backend_type="host-gw"))
    assert not [w for w in preflight.run_checks(host_gw)[1] if "18321" in w["message"]]


# --- N10: the firewall rules' remote addresses ----------------------------------------------------------------

def _firewall(value):
    failures, warnings, dummy = preflight.run_checks(dict(VALID, values={"kubewin_firewall_remote_addresses": value}))
    return failures, warnings


def test_any_source_is_a_warning_naming_what_to_set():
    failures, warnings = _firewall(["any"])
    assert failures == [] and [w["variable"] for w in warnings] == ["kubewin_firewall_remote_addresses"]
    assert "control-plane hosts" in warnings[0]["message"] and "10.244.0.0/16" in warnings[0]["message"]


def test_addresses_subnets_ranges_and_localsubnet_are_taken():
    assert _firewall(["192.168.10.5", "192.168.10.0/24", "10.0.0.1-10.0.0.9", "LocalSubnet"]) == ([], [])
    assert _firewall("192.168.10.0/24, 10.1.2.3") == ([], [])


def test_entries_windows_firewall_would_not_take_are_refused_before_any_change():
    for bad in (["192.168.10.300"], ["DNS"], ["fe80::1"], ["10.0.0.9-10.0.0.1"], [], ["any", "10.0.0.1"]):
        failures, dummy = _firewall(bad)
        assert [f["variable"] for f in failures] == ["kubewin_firewall_remote_addresses"], bad


def test_the_inbound_rules_use_the_remote_addresses():
    def rules(path):
        found = []

        def walk(tasks):
            for t in tasks or []:
                walk(t.get("block"))
                if "community.windows.win_firewall_rule" in t and t["community.windows.win_firewall_rule"].get(
                        "state") == "present":
                    found.append(t["community.windows.win_firewall_rule"])
        walk(yaml.safe_load(path.read_text()))
        return found

    inbound = rules(ROOT / "roles" / "node" / "tasks" / "main.yml") + rules(
        ROOT / "roles" / "network" / "tasks" / "main.yml")
    assert len(inbound) == 2 and all(r["direction"] == "in" for r in inbound)
    assert all(r.get("remoteip") == "{{ _kubewin_firewall_remoteip }}" for r in inbound), inbound
    for role in ("node", "network"):
        role_vars = yaml.safe_load((ROOT / "roles" / role / "vars" / "main.yml").read_text())
        assert role_vars["_kubewin_firewall_remoteip"] == "{{ kubewin_node_spec.firewall_remoteip }}"


@pytest.mark.parametrize("value, read_back", [
    ("any", "*"), (["*"], ""), ("192.0.2.10/32", "192.0.2.10/255.255.255.255"),
    (["10.0.0.0/255.0.0.0", " 192.0.2.10 "], "10.0.0.0/255.0.0.0,192.0.2.10/255.255.255.255"),
    ("localsubnet, 10.0.0.1-10.0.0.5", "LocalSubnet,10.0.0.1-10.0.0.5"),
    (["10.1.0.0/16", "LocalSubnet"], "10.1.0.0/255.255.0.0,LocalSubnet")])
def test_a_rule_as_wanted_compares_equal_however_the_inventory_spells_the_addresses(value, read_back):
    """review-s5 F1': the option side was the raw inventory text, so 192.0.2.10/32 or a mask never equalled what the
    facts read back and win_firewall_rule ran on every run. The preflight's remoteip is the facts' form."""
    failures, dummy, node = preflight.run_checks(dict(VALID, values={"kubewin_firewall_remote_addresses": value}))
    assert failures == []
    assert node["firewall_remoteip"] == firewall.as_options({"remote_addresses": read_back})["remoteip"]


def test_cri_dockerds_conf_dir_flag_is_found_as_its_command_line_parser_reads_it():
    exe = '"C:\\Program Files\\cri-dockerd\\cri-dockerd.exe"'
    pattern = host_facts.script_parameters()["DockerConfDirPattern"]
    for args in ("--cni-conf-dir C:\\cni\\conf", "--cni-conf-dir=C:\\cni\\conf", '--cni-conf-dir "C:\\my cni\\conf"',
                 '"--cni-conf-dir=C:\\my cni\\conf"', "-cni-conf-dir C:\\cni\\conf --network-plugin=cni"):
        line = "%s --container-runtime-endpoint npipe:////./pipe/cri-dockerd %s" % (exe, args)
        m = re.search(pattern, line)
        assert m and m.group(1).strip('"') == runtime_cni.cri_dockerd_cni_dirs(line)["conf_dir"], line
        services = {"cri-dockerd": {"exists": True, "image_path": line}}
        answer = dict(_answer(DUMP_V2, {m.group(1).strip('"'): ["0-nat.json"]}), services=services)
        assert host_facts.node_facts(answer)["cni"]["docker"]["conf_files"] == ["0-nat.json"], line
    assert re.search(pattern, exe + " --network-plugin=cni") is None
