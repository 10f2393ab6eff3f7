#!/usr/bin/python
# -*- coding: utf-8 -*-
# Test-lab stand-in for ansible.windows.setup (facts of the simulated host).
from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.ansible.windows.plugins.module_utils.winsim_module import run

PRODUCTS = {17763: "Microsoft Windows Server 2019 Datacenter", 20348: "Microsoft Windows Server 2022 Datacenter",
            26100: "Microsoft Windows Server 2025 Datacenter"}


def body(sim):
    st = sim.state
    build = st["build"]
    version = "10.0.%d.0" % build  # the real module reports major.minor.build.revision
    name = st["hostname"]
    interfaces = []
    for i, a in enumerate(st.get("adapters") or []):
        interfaces.append({"interface_index": 4 + i, "interface_name": "Microsoft Hyper-V Network Adapter",
                           "connection_name": a["name"], "macaddress": a["mac"].replace("-", ":"),
                           "default_gateway": a.get("gateway"), "dns_domain": None,
                           "ipv4": {"address": a["ip"], "prefix": str(a.get("prefix", 24))}})
    facts = {
        "ansible_os_family": "Windows", "ansible_system": "Win32NT", "ansible_os_name": PRODUCTS.get(build, "Windows"),
        "ansible_distribution": PRODUCTS.get(build, "Microsoft Windows Server"),
        "ansible_distribution_version": version, "ansible_distribution_major_version": "10",
        "ansible_kernel": version, "ansible_architecture": "64-bit", "ansible_architecture2": "x86_64",
        "ansible_os_product_type": "server", "ansible_os_installation_type": "Server",
        "ansible_hostname": name, "ansible_netbios_name": name, "ansible_nodename": name.lower(),
        "ansible_fqdn": name.lower(), "ansible_domain": "", "ansible_windows_domain_member": False,
        "ansible_interfaces": interfaces, "ansible_ip_addresses": [a["ip"] for a in st.get("adapters") or []],
        "ansible_env": dict(st.get("env") or {}, SystemDrive="C:", SystemRoot="C:\\Windows",
                            COMPUTERNAME=name, ProgramFiles="C:\\Program Files"),
        "ansible_powershell_version": 5, "ansible_processor_count": 1, "ansible_processor_vcpus": 4,
        "ansible_memtotal_mb": 8192, "gather_subset": sim.params.get("gather_subset") or ["all"],
        "module_setup": True,
    }
    sim.result["ansible_facts"] = facts


def main():
    run("setup", body, check_mode="full")


if __name__ == "__main__":
    main()
