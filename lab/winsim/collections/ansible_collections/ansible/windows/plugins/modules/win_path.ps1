#!/usr/bin/python
# -*- coding: utf-8 -*-
# Test-lab stand-in for ansible.windows.win_path (machine scope is kept in the host state's "env").
# Follows ansible.windows plugins/modules/win_path.ps1: elements compared case-insensitively with quotes
# and trailing backslashes trimmed (Get-IndexOfPathElement); missing ones appended, an element found
# before the previous one moved to the end (Add-Element); absent removes each (Remove-Element);
# result path_value. The change reaches new logons only (the module's own notes), not the processes of
# the current session: see winsim_binaries.session_path.
from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.ansible.windows.plugins.module_utils.winsim_module import run
from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError


def _key(element):
    return element.strip('"').strip("\\").lower()


def _index(elements, value):
    want = _key(value.strip('"').strip("\\"))
    for i, el in enumerate(elements):
        if _key(el) == want:
            return i
    return -1


def body(sim):
    p = sim.params
    if p["scope"] != "machine":
        raise SimError("winsim: win_path scope=%s is not simulated" % p["scope"])
    scope = sim.state.setdefault("env", {})
    name = next((k for k in scope if k.lower() == p["name"].lower()), p["name"])
    current = scope.get(name) or ""
    elements = [e for e in current.split(";") if e]
    changed = False
    if p["state"] == "absent":
        for el in p["elements"]:
            i = _index(elements, el)
            if i > -1:
                del elements[i]
                changed = True
    else:
        last = -1
        for el in p["elements"]:
            i = _index(elements, el)
            if i == -1:
                elements.append(el)
                last = len(elements) - 1
                changed = True
            elif i < last:
                del elements[i]
                elements.append(el)
                last = len(elements) - 1
                changed = True
            else:
                last = i
    value = ";".join(elements)
    sim.result.update(changed=changed, path_value=value)
    if changed and not sim.check_mode:
        scope[name] = value


def main():
    run("win_path", body, check_mode="full")


if __name__ == "__main__":
    main()
