#!/usr/bin/python
# -*- coding: utf-8 -*-
# Test-lab stand-in for ansible.windows.win_command: only stand-in binaries on the simulated drive run.
from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.ansible.windows.plugins.module_utils.winsim_module import run
from ansible_collections.ansible.windows.plugins.module_utils.winsim_cmdline import split_command_line
from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError
from ansible_collections.ansible.windows.plugins.module_utils import winsim_exec


def body(sim):
    p = sim.params
    cmd = p.get("cmd") or p.get("_raw_params")
    if p.get("argv"):
        if cmd:
            raise SimError("parameters are mutually exclusive: cmd, argv")
        argv = [str(a) for a in p["argv"]]
    elif cmd:
        argv = split_command_line(cmd)
    else:
        raise SimError("one of the following is required: cmd, argv")
    winsim_exec.execute(sim, argv, cmd or " ".join(argv), shell="cmd")


def main():
    run("win_command", body, check_mode="none")


if __name__ == "__main__":
    main()
