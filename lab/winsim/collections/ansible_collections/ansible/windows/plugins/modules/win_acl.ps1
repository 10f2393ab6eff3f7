#!/usr/bin/python
# -*- coding: utf-8 -*-
# Test-lab stand-in for ansible.windows.win_acl (explicit rules kept in the host state by path).
from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

from ansible_collections.ansible.windows.plugins.module_utils.winsim_module import run
from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError


def body(sim):
    p = sim.params
    path = p["path"]
    if not path.upper().startswith("HK") and not os.path.exists(sim.host.local_path(path)):
        raise SimError("%s file or directory does not exist on the host" % path)
    acls = sim.state.setdefault("acls", {})
    key = next((k for k in acls if k.lower() == path.lower()), path)
    rules = acls.get(key, [])
    rule = {"user": p["user"], "rights": sorted(r.strip() for r in (p["rights"] or "").split(",") if r.strip()),
            "type": p["type"], "inherit": p.get("inherit") or "", "propagation": p.get("propagation") or "None"}
    same = [r for r in rules if r["user"].lower() == rule["user"].lower() and r["type"] == rule["type"]
            and r["rights"] == rule["rights"] and r["inherit"] == rule["inherit"]
            and r["propagation"] == rule["propagation"]]
    if p["state"] == "present" and not same:
        sim.result["changed"] = True
        if not sim.check_mode:
            acls[key] = rules + [rule]
    elif p["state"] == "absent" and same:
        sim.result["changed"] = True
        if not sim.check_mode:
            acls[key] = [r for r in rules if r not in same]
            if not acls[key]:
                del acls[key]


def main():
    run("win_acl", body, check_mode="full")


if __name__ == "__main__":
    main()
