#!/usr/bin/python
# -*- coding: utf-8 -*-
# Test-lab stand-in for ansible.windows.win_environment (machine scope is kept in the host state).
from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.ansible.windows.plugins.module_utils.winsim_module import run
from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError


def body(sim):
    p = sim.params
    scope = sim.state.setdefault("env" if p["level"] == "machine" else "env_" + p["level"], {})
    variables = dict(p.get("variables") or {})
    if p.get("name"):
        variables[p["name"]] = None if p.get("state") == "absent" else p.get("value")
        if p.get("state") != "absent" and not p.get("value"):
            raise SimError("When state=present, value must be defined and not an empty string, if you wish to remove "
                           "the envvar, set state=absent")
    before, after = {}, {}
    for name, value in variables.items():
        key = next((k for k in scope if k.lower() == name.lower()), name)
        before[name] = scope.get(key)
        if value in (None, ""):
            if key in scope:
                sim.result["changed"] = True
                if not sim.check_mode:
                    del scope[key]
        elif scope.get(key) != value:
            sim.result["changed"] = True
            if not sim.check_mode:
                scope[key] = value
        after[name] = value or None
    if p.get("name"):
        sim.result.update(before_value=before[p["name"]], value=after[p["name"]])
    else:
        sim.result.update(before=before, after=after)


def main():
    run("win_environment", body, check_mode="full")


if __name__ == "__main__":
    main()
