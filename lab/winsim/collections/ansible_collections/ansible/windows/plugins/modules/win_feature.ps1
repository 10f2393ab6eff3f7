#!/usr/bin/python
# -*- coding: utf-8 -*-
# Test-lab stand-in for ansible.windows.win_feature: Install-WindowsFeature on the simulated host (winsim_features).
from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.ansible.windows.plugins.module_utils import winsim_features
from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError
from ansible_collections.ansible.windows.plugins.module_utils.winsim_module import run


def body(sim):
    p = sim.params
    if p["state"] != "present":
        raise SimError("winsim: win_feature state=%s is not simulated" % p["state"])
    names = p["name"] if isinstance(p["name"], list) else [p["name"]]
    sim.result.update(winsim_features.install(sim.state, names, check_mode=sim.check_mode))


def main():
    run("win_feature", body, check_mode="full")


if __name__ == "__main__":
    main()
