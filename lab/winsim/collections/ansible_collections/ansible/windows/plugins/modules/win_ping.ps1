#!/usr/bin/python
# -*- coding: utf-8 -*-
# Test-lab stand-in for ansible.windows.win_ping (Python over a simulated host; see lab/winsim).
from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.ansible.windows.plugins.module_utils.winsim_module import run
from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError


def body(sim):
    if sim.params["data"] == "crash":
        raise SimError("boom")
    sim.result["ping"] = sim.params["data"]


def main():
    run("win_ping", body, check_mode="full")


if __name__ == "__main__":
    main()
