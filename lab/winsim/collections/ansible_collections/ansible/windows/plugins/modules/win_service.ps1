#!/usr/bin/python
# -*- coding: utf-8 -*-
# Test-lab stand-in for ansible.windows.win_service over the simulated Service Control Manager.
from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.ansible.windows.plugins.module_utils.winsim_module import run
from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError
from ansible_collections.ansible.windows.plugins.module_utils import winsim_scm as scm

MODES = {2: "auto", 3: "manual", 4: "disabled"}


def _report(sim, svc):
    if svc is None:
        sim.result.update(exists=False)
        return
    mode = MODES.get(svc["start"], str(svc["start"]))
    if svc["start"] == 2 and svc["delayed_autostart"]:
        mode = "delayed"
    sim.result.update(exists=True, name=svc["name"], display_name=svc["display_name"],
                      description=svc["description"], path=svc["image_path"], start_mode=mode,
                      state=svc["status"].lower(), username=svc["object_name"],
                      dependencies=list(svc["dependencies"]),
                      depended_by=[s["name"] for s in scm.dependents(sim.state, svc["name"])],
                      can_pause_and_continue=False, desktop_interact=False)


def body(sim):
    p = sim.params
    st = sim.state
    svc = scm.find(st, p["name"])
    if p["state"] == "absent":
        if svc:
            sim.result["changed"] = True
            if not sim.check_mode:
                scm.stop(sim.host, svc["name"], force=bool(p.get("force_dependent_services")))
                if scm.find(st, svc["name"]):
                    scm.delete(st, svc["name"])
        _report(sim, scm.find(st, p["name"]))
        return
    if svc is None:
        if not p.get("path"):
            if p["state"] is None and not any(p.get(k) for k in ("start_mode", "display_name", "description")):
                _report(sim, None)
                return
            raise SimError("Service '%s' is not installed, need to set 'path' to create a new service" % p["name"])
        sim.result["changed"] = True
        if sim.check_mode:
            return
        svc = scm.create(st, p["name"], p["path"], p.get("display_name") or "", start=2)
    want = {}
    if p.get("path") is not None:
        want["image_path"] = p["path"]
    if p.get("display_name") is not None:
        want["display_name"] = p["display_name"]
    if p.get("description") is not None:
        want["description"] = p["description"]
    if p.get("start_mode"):
        want["start"] = scm.START_MODES[p["start_mode"]]
        want["delayed_autostart"] = 1 if p["start_mode"] == "delayed" else 0
    if p.get("dependencies") is not None:
        deps = list(p["dependencies"])
        action = p.get("dependency_action") or "set"
        cur = list(svc["dependencies"])
        if action == "add":
            deps = cur + [d for d in deps if d.lower() not in [c.lower() for c in cur]]
        elif action == "remove":
            deps = [c for c in cur if c.lower() not in [d.lower() for d in deps]]
        want["dependencies"] = deps
    for k, v in want.items():
        if svc.get(k) != v:
            sim.result["changed"] = True
            if not sim.check_mode:
                svc[k] = v
    state = p["state"]
    if state == "started" and svc["status"] != "Running":
        sim.result["changed"] = True
        if not sim.check_mode:
            scm.start(sim.host, svc["name"])
    elif state == "stopped" and svc["status"] != "Stopped":
        sim.result["changed"] = True
        if not sim.check_mode:
            scm.stop(sim.host, svc["name"], force=bool(p.get("force_dependent_services")))
    elif state == "restarted":
        sim.result["changed"] = True
        if not sim.check_mode:
            scm.stop(sim.host, svc["name"], force=bool(p.get("force_dependent_services")))
            scm.start(sim.host, svc["name"])
    elif state == "paused":
        raise SimError("winsim: pausing services is not simulated")
    _report(sim, scm.find(st, svc["name"]))


def main():
    run("win_service", body, check_mode="full")


if __name__ == "__main__":
    main()
