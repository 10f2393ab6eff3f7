#!/usr/bin/python
# -*- coding: utf-8 -*-
# Test-lab stand-in for ansible.windows.win_stat (Python over a simulated host; see lab/winsim).
from __future__ import absolute_import, division, print_function
__metaclass__ = type

import hashlib
import os

from ansible_collections.ansible.windows.plugins.module_utils.winsim_module import run


def body(sim):
    path = sim.params["path"]
    local = sim.host.local_path(path)
    stat = {"exists": os.path.exists(local)}
    if stat["exists"]:
        isdir = os.path.isdir(local)
        name = os.path.basename(local)
        stat.update(path=sim.host.win_path(local), filename=name, isdir=isdir, isreg=not isdir, islnk=False,
                    isshared=False, ishidden=False, isreadonly=False, isarchive=not isdir,
                    extension=os.path.splitext(name)[1] if not isdir else None,
                    lastwritetime=os.path.getmtime(local), owner="BUILTIN\\Administrators")
        if not isdir:
            stat["size"] = os.path.getsize(local)
            if sim.params["get_checksum"]:
                algo = sim.params["checksum_algorithm"] or "sha1"
                with open(local, "rb") as f:
                    stat["checksum"] = hashlib.new(algo, f.read()).hexdigest()
        elif sim.params.get("get_size"):
            stat["size"] = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(local) for f in fs)
    sim.result["stat"] = stat


def main():
    run("win_stat", body, check_mode="full")


if __name__ == "__main__":
    main()
