#!/usr/bin/env python3
"""Write a lab inventory with N simulated Windows nodes (and create their state), plus an
ansible.cfg that puts the ansible.windows stand-in ahead of the real collection.

    python lab/winsim/make_inventory.py --nodes 2 [--root DIR] [--profile ws2022-containerd]

Output in ROOT (default lab/_run/winsim): inventory.yml, ansible.cfg, winsim.json, hosts/<name>/.
Then: ANSIBLE_CONFIG=ROOT/ansible.cfg ansible-playbook -i ROOT/inventory.yml playbook.yml
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import yaml  # noqa: E402

from winsim import core  # noqa: E402


def write_settings(root, lab_cache=None):
    """The lab-wide settings the simulated hosts read (winsim_host.Host.config): where lab-build put the Windows
    binaries and the Wine prefix, and the kubeadm stand-in's timeouts."""
    lab_cache = lab_cache or os.path.join(core.REPO, "lab", "_cache")
    with open(os.path.join(root, "winsim.json"), "w") as f:
        json.dump({"lab_cache": lab_cache, "discovery_timeout": 60, "csr_timeout": 60}, f, indent=1)


def _per_host(name, value, hosts):
    """A per-host setting: a dict {host: value} (hosts left out get nothing), or one value for every host."""
    if isinstance(value, dict):
        unknown = sorted(set(value) - set(hosts))
        if unknown:
            raise ValueError("%s names hosts the inventory does not have: %s (hosts: %s)"
                             % (name, ", ".join(unknown), ", ".join(hosts)))
        return dict(value)
    return {h: value for h in hosts} if value else {}


def build(root, nodes=1, profile="ws2022-containerd", python=None, prefix="win", lab_cache=None,
          extra_vars=None, second_adapter=None, profiles=None, host_vars=None):
    """profile: every host's profile, unless ``profiles`` ({host: profile}) names another for a host.
    second_adapter: the name of a second adapter on every host, or {host: name} for some hosts only.
    host_vars: {host: {variable: value}} written into the inventory's host entries (above group_vars/all);
    "localhost" (kube_control_plane) may be named too."""
    root = os.path.abspath(root)
    os.makedirs(root, exist_ok=True)
    python = python or sys.executable
    if nodes > 245:  # 10.0.0.(10+i) and the MAC's last byte %02X of 10+i
        raise ValueError("at most 245 simulated hosts (addresses 10.0.0.11-255), not %d" % nodes)
    names = ["%s-%d" % (prefix, i) for i in range(1, nodes + 1)]
    profiles = _per_host("profiles", profiles, names)
    adapters2 = _per_host("second_adapter", second_adapter, names)
    host_vars = _per_host("host_vars", host_vars, names + ["localhost"])
    unknown = sorted((set(profiles.values()) | {profile}) - set(core.winsim_host.PROFILES))
    if unknown:
        raise ValueError("unknown profile %s (winsim_host.PROFILES: %s)"
                         % (", ".join(unknown), ", ".join(sorted(core.winsim_host.PROFILES))))
    write_settings(root, lab_cache)
    win_hosts = {}
    for i, name in enumerate(names, 1):
        adapters = [{"name": "Ethernet", "ip": "10.0.0.%d" % (10 + i), "prefix": 24,
                     "mac": "00-15-5D-00-00-%02X" % (10 + i), "gateway": "10.0.0.1"}]
        if adapters2.get(name):  # a second network (e.g. storage) whose adapter carries the node's traffic
            adapters.append({"name": adapters2[name], "ip": "10.50.0.%d" % (10 + i), "prefix": 24,
                             "mac": "00-15-5D-00-01-%02X" % (10 + i)})
        core.create_host(root, name, profile=profiles.get(name, profile), adapters=adapters)
        win_hosts[name] = dict(host_vars.get(name) or {}, ansible_host=adapters[0]["ip"])
    # ip: kubespray's per-host address (its main_ip), where the lab's API server listens.
    # counted_local: ansible's local connection that also logs each module execution to ROOT/control-plane.log
    # (core.control_plane_ops; the control-plane budgets of `make bench` and test_scale_up).
    control = {"localhost": dict(host_vars.get("localhost") or {},
                                 ansible_connection="kubewin_lab.winsim.counted_local",
                                 ansible_python_interpreter=python, ip="127.0.0.1", winsim_root=root)}
    inventory = {"all": {
        "vars": dict(extra_vars or {}),
        "children": {
            "kube_control_plane": {"hosts": control},
            "etcd": {"hosts": {"localhost": {}}},
            "kube_node": {"hosts": {}},
            "k8s_cluster": {"children": {"kube_control_plane": {}, "kube_node": {}}},
            # Outside kube_node/k8s_cluster: kubespray's Linux roles must never target them.
            "kube_windows_nodes": {"hosts": win_hosts, "vars": {
                "ansible_connection": "kubewin_lab.winsim.winsim",
                "ansible_shell_type": "sh",
                "ansible_python_interpreter": python,
                "ansible_pipelining": True,
                "winsim_root": root,
            }},
        }}}
    with open(os.path.join(root, "inventory.yml"), "w") as f:
        f.write("# Generated by lab/winsim/make_inventory.py\n")
        yaml.safe_dump(inventory, f, default_flow_style=False, sort_keys=False)
    with open(os.path.join(root, "ansible.cfg"), "w") as f:
        f.write("# Generated by lab/winsim/make_inventory.py: the ansible.windows stand-in comes first.\n"
                "[defaults]\n"
                "collections_path = %s:%s\n"
                "inventory = %s\n"
                "host_key_checking = False\n"
                "retry_files_enabled = False\n"
                "interpreter_python = %s\n"
                "[connection]\npipelining = True\n"
                % (core.COLLECTIONS, core.KUBEWIN_COLLECTIONS, os.path.join(root, "inventory.yml"), python))
    return root


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=1)
    ap.add_argument("--root", default=core.DEFAULT_ROOT)
    ap.add_argument("--profile", default="ws2022-containerd", choices=sorted(core.winsim_host.PROFILES))
    ap.add_argument("--python", default=sys.executable, help="interpreter with ansible-core (a lab venv)")
    args = ap.parse_args()
    root = build(args.root, args.nodes, args.profile, args.python)
    print(os.path.join(root, "ansible.cfg"))


if __name__ == "__main__":
    main()
