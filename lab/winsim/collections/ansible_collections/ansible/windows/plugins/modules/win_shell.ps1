#!/usr/bin/python
# -*- coding: utf-8 -*-
# Test-lab stand-in for ansible.windows.win_shell: no PowerShell runs; only a plain invocation of a
# stand-in binary ("C:\k\kubeadm.exe reset -f" or "& 'C:\k\kubeadm.exe' reset -f") is understood.
from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.ansible.windows.plugins.module_utils.winsim_module import run
from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError
from ansible_collections.ansible.windows.plugins.module_utils import winsim_exec


def body(sim):
    p = sim.params
    if p.get("executable") and p["executable"].lower() not in ("powershell", "powershell.exe", "pwsh", "pwsh.exe"):
        raise SimError("winsim: win_shell executable=%s is not simulated" % p["executable"])
    text = (p.get("_raw_params") or "").strip()
    if not text:
        raise SimError("no command given")
    argv = winsim_exec.parse_powershell_invocation(text)
    winsim_exec.execute(sim, argv, text, shell="powershell")


def main():
    run("win_shell", body, check_mode="none", internal={"_raw_params": {"type": "str"}})


if __name__ == "__main__":
    main()
