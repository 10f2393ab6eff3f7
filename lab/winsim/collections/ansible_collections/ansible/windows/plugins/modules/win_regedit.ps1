#!/usr/bin/python
# -*- coding: utf-8 -*-
# Test-lab stand-in for ansible.windows.win_regedit (values kept in the host state by key path).
from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.ansible.windows.plugins.module_utils.winsim_module import run


def body(sim):
    p = sim.params
    reg = sim.state.setdefault("registry", {})
    key = p["path"].replace("/", "\\").rstrip("\\")
    kid = next((k for k in reg if k.lower() == key.lower()), key)
    values = reg.get(kid)
    name = p.get("name") or "(Default)"
    if p["state"] == "absent":
        if p.get("name") is None and p.get("delete_key", True):
            if values is not None:
                sim.result["changed"] = True
                if not sim.check_mode:
                    del reg[kid]
        elif values and name in values:
            sim.result["changed"] = True
            if not sim.check_mode:
                del values[name]
        return
    want = {"type": p.get("type") or "string", "data": p.get("data")}
    if values is None:
        sim.result["changed"] = True
        if sim.check_mode:
            return
        values = reg.setdefault(kid, {})
    if p.get("name") is None and p.get("data") is None:
        return
    have = values.get(name)
    if have != want:
        sim.result.update(changed=True, data_changed=(have or {}).get("data") != want["data"],
                          data_type_changed=have is not None and have["type"] != want["type"])
        if not sim.check_mode:
            values[name] = want


def main():
    run("win_regedit", body, check_mode="full")


if __name__ == "__main__":
    main()
