#!/usr/bin/python
# -*- coding: utf-8 -*-
# Test-lab only: what a reboot does to the simulated host (called by the win_reboot stand-in action;
# takes the options of the real win_reboot).
from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.ansible.windows.plugins.module_utils.winsim_module import run
from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError
from ansible_collections.ansible.windows.plugins.module_utils import winsim_binaries, winsim_scm


def body(sim):
    st = sim.state
    for svc in list(st["services"].values()):
        if svc["status"] != "Stopped":
            winsim_binaries.service_process_stop(sim.host, svc)
            svc["status"] = "Stopped"
        if svc["pending_delete"]:
            del st["services"][svc["name"].lower()]
    # HNS objects do not survive a reboot; flannel/kube-proxy recreate theirs.
    st["hns"].update(networks=[], endpoints=[], policylists=[])
    st["reboots"] = st.get("reboots", 0) + 1
    # New logons see the machine environment as it is now (winsim_binaries.session_path).
    st["env_boot"] = dict(st.get("env") or {})
    failed = {}
    for svc in sorted(st["services"].values(), key=lambda s: s["name"].lower()):
        if svc["start"] == 2 and svc["status"] != "Running":
            try:
                winsim_scm.start(sim.host, svc["name"])
            except SimError as e:
                failed[svc["name"]] = str(e)
    sim.result.update(changed=True, rebooted=True, elapsed=1, services_failed_at_boot=failed)


def main():
    run("winsim_reboot", body, check_mode="full", doc_module="win_reboot")


if __name__ == "__main__":
    main()
