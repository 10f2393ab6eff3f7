#!/usr/bin/python
# Test-lab only: one run of the Windows Update Agent on the simulated host (called by the win_updates stand-in
# action, with the options of the real win_updates). The rules are winsim_updates'.
from __future__ import annotations

from ansible_collections.ansible.windows.plugins.module_utils import winsim_updates
from ansible_collections.ansible.windows.plugins.module_utils.winsim_module import run


def body(sim):
    sim.result.update(winsim_updates.run(sim.host.state, sim.params, sim.check_mode))


def main():
    run("winsim_updates", body, check_mode="full", doc_module="win_updates")


if __name__ == "__main__":
    main()
