#!/usr/bin/python
# -*- coding: utf-8 -*-
# Test-lab stand-in for ansible.windows.slurp (Python over a simulated host; see lab/winsim).
from __future__ import absolute_import, division, print_function
__metaclass__ = type

import base64
import os

from ansible_collections.ansible.windows.plugins.module_utils.winsim_module import run
from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError


def body(sim):
    src = sim.params["src"]
    local = sim.host.local_path(src)
    if os.path.isdir(local):
        raise SimError("Path %s is a directory" % src)
    if not os.path.exists(local):
        raise SimError("Path %s is not found" % src)
    with open(local, "rb") as f:
        sim.result.update(content=base64.b64encode(f.read()).decode(), encoding="base64", source=src)


def main():
    run("slurp", body, check_mode="full")


if __name__ == "__main__":
    main()
