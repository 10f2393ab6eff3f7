#!/usr/bin/python
# -*- coding: utf-8 -*-
# Test-lab stand-in for community.windows.win_scheduled_task over the simulated Task Scheduler (winsim_tasks: what
# is simulated and the real module's rules it follows). Its options come from the real module's documentation; as
# the real win_scheduled_task.ps1 (a legacy Parse-Args module) it returns only changed (and diff.prepared in diff
# mode); check mode reports without changing.
from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

# What the lab's PowerShell interpreter runs a task's script over (a registration trigger starts it here): imported
# so that Ansible ships these module_utils with the module.
from ansible_collections.ansible.windows.plugins.module_utils import (  # noqa: F401
    winsim_binaries,
    winsim_docker,
    winsim_files,
    winsim_firewall,
    winsim_hns,
    winsim_scm,
)
from ansible_collections.ansible.windows.plugins.module_utils import winsim_tasks as wt
from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError
from ansible_collections.ansible.windows.plugins.module_utils.winsim_module import run

SIMULATED = {"name", "path", "state", "actions", "triggers", "username", "logon_type", "run_level",
             "execution_time_limit", "description", "enabled", "update_password"}
TRIGGER_OPTIONS = {"type", "enabled", "delay", "repetition"}
# a trigger's repetition (the real module's trigger option ``repetition``: interval, duration, stop_at_duration_end;
# Microsoft Learn, RepetitionPattern: an interval from 1 minute to 31 days, no duration = indefinitely)
REPETITION_OPTIONS = {"interval", "duration", "stop_at_duration_end"}
INVALID_NAME = re.compile(r'[\\/:*?"<>|]')


def _clean(entries, allowed, what):
    out = []
    for entry in entries or []:
        given = {k: v for k, v in entry.items() if v is not None}
        extra = sorted(set(given) - allowed)
        if extra:
            raise SimError("winsim: win_scheduled_task %s option(s) %s not simulated" % (what, ", ".join(extra)))
        out.append(given)
    return out


def _wanted(p):
    """The task's properties the task passes, in the stored form (the user as its SID)."""
    if p.get("username") is not None and p.get("logon_type") == "service_account" \
            and wt.sid(p["username"]) not in wt.SERVICE_ACCOUNTS.values():
        raise SimError("username must be SYSTEM, LOCAL SERVICE or NETWORK SERVICE when logon_type=service_account")
    if p.get("logon_type") not in (None, "service_account"):
        raise SimError("winsim: win_scheduled_task logon_type %s is not simulated" % p["logon_type"])
    wanted = {}
    if p.get("actions") is not None:
        wanted["actions"] = _clean(p["actions"], {"path", "arguments", "working_directory"}, "action")
    if p.get("triggers") is not None:
        triggers = _clean(p["triggers"], TRIGGER_OPTIONS, "trigger")
        for t in triggers:
            if t["type"] not in ("boot", "registration"):
                raise SimError("winsim: win_scheduled_task trigger type %s is not simulated" % t["type"])
            wt.check_duration("delay", t.get("delay"))
            if t.get("repetition") is not None:
                rep = {k: v for k, v in t["repetition"].items() if v is not None}
                if set(rep) - REPETITION_OPTIONS:
                    raise SimError("winsim: win_scheduled_task repetition option(s) %s not simulated"
                                   % ", ".join(sorted(set(rep) - REPETITION_OPTIONS)))
                wt.check_duration("interval", rep.get("interval"))
                wt.check_duration("duration", rep.get("duration"))
                if rep.get("interval") and not 60 <= wt.seconds(rep["interval"]) <= 31 * 86400:
                    raise SimError("winsim: a repetition interval outside 1 minute to 31 days (Task Scheduler refuses "
                                   "it: RepetitionPattern.Interval)")
                t["repetition"] = rep
        wanted["triggers"] = triggers
    wt.check_duration("execution_time_limit", p.get("execution_time_limit"))
    for option in ("logon_type", "run_level", "execution_time_limit", "description", "enabled"):
        if p.get(option) is not None:
            wanted[option] = p[option]
    if p.get("username") is not None:
        wanted["sid"] = wt.sid(p["username"])
    return wanted


def body(sim):
    p = sim.params
    extra = sorted(k for k, v in p.items() if v is not None and k not in SIMULATED)
    if extra:
        raise SimError("winsim: win_scheduled_task option(s) %s not simulated" % ", ".join(extra))
    if INVALID_NAME.search(p["name"]):
        raise SimError("Invalid task name '%s'. The following characters are not valid: \\/:*?\"<>|" % p["name"])
    store = wt.tasks(sim.state)
    task_key = wt.key(p["path"], p["name"])
    task = store.get(task_key)
    diff = None
    if p["state"] == "absent":
        if task is not None:
            if not sim.check_mode:
                del store[task_key]
            diff = "-[Task]\n-%s\n" % task_key
            sim.result["changed"] = True
    else:
        wanted = _wanted(p)
        if task is None:
            if not wanted.get("actions"):
                raise SimError("cannot create a task with no actions, set at least one action with a path to an "
                               "executable")
            task = {"key": task_key, "name": p["name"], "path": p["path"], "triggers": []}
            diff = "+[Task]\n+%s\n" % task_key
            sim.result["changed"] = True
        changed = {k: v for k, v in wanted.items() if task.get(k) != v}
        if changed:
            sim.result["changed"] = True
            diff = (diff or "") + "".join("-%s=%s\n+%s=%s\n" % (k, task.get(k), k, v) for k, v in sorted(
                changed.items()))
        if sim.result["changed"] and not sim.check_mode:
            task.update(changed)
            store[task_key] = task
            # the real module calls RegisterTaskDefinition only then: its registration triggers start the task
            wt.registered(sim.host, task)
    if sim.module._diff and diff is not None:
        sim.result["diff"] = {"prepared": diff}


if __name__ == "__main__":
    # The real module is a legacy Parse-Args one: its documentation's trigger suboption repetition has suboptions but
    # no type (so a spec made from it would turn the dictionary into a string), and the module reads the dictionary
    # as given (win_scheduled_task.ps1: a list there is deprecated, "repetition is a list, should be defined as a
    # dict"). So the triggers are taken as dictionaries, checked by _clean.
    run("win_scheduled_task", body, collection="community.windows",
        internal={"triggers": {"type": "list", "elements": "dict"}})
