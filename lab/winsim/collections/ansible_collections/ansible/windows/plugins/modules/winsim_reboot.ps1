#!/usr/bin/python
# Test-lab only: what a reboot does to the simulated host (called by the win_reboot stand-in action;
# takes the options of the real win_reboot). The model is winsim_boot's, shared with core.reboot.
from __future__ import annotations

from ansible_collections.ansible.windows.plugins.module_utils import winsim_boot
from ansible_collections.ansible.windows.plugins.module_utils.winsim_module import run


def body(sim):
    _gone, failed = winsim_boot.reboot(sim.host)
    sim.result.update(changed=True, rebooted=True, elapsed=1, services_failed_at_boot=failed)


def main():
    run("winsim_reboot", body, check_mode="full", doc_module="win_reboot")


if __name__ == "__main__":
    main()
