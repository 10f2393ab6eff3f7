#!/usr/bin/python
# -*- coding: utf-8 -*-
# Test-lab stand-in for ansible.windows.win_file (Python over a simulated host; see lab/winsim).
from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import shutil

from ansible_collections.ansible.windows.plugins.module_utils.winsim_module import run
from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError


def body(sim):
    path, state = sim.params["path"], sim.params["state"]
    local = sim.host.local_path(path)
    exists = os.path.exists(local)
    if state is None:
        state = "directory" if os.path.isdir(local) else "file"
    if state == "absent":
        if exists:
            sim.result["changed"] = True
            if not sim.check_mode:
                shutil.rmtree(local) if os.path.isdir(local) else os.remove(local)
    elif state == "directory":
        if exists and not os.path.isdir(local):
            raise SimError("path %s is not a directory" % path)
        if not exists:
            sim.result["changed"] = True
            if not sim.check_mode:
                os.makedirs(local)
    elif state == "file":
        if not exists:
            raise SimError("path %s will not be created" % path)
        if os.path.isdir(local):
            raise SimError("path %s exists but is not a file" % path)
    elif state == "touch":
        sim.result["changed"] = True
        if not sim.check_mode:
            if not os.path.isdir(os.path.dirname(local)):
                raise SimError("Could not find a part of the path '%s'." % path)
            with open(local, "a"):
                os.utime(local, None)


def main():
    run("win_file", body, check_mode="full")


if __name__ == "__main__":
    main()
