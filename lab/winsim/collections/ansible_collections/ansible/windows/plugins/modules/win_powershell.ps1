#!/usr/bin/python
# -*- coding: utf-8 -*-
# Test-lab stand-in for ansible.windows.win_powershell: the kubewin.nodes scripts listed in INTERPRETED
# (all eight) run as written, through the lab's PowerShell interpreter (lab/winsim/ps, found
# through KUBEWIN_SIM_LIB set by the winsim connection); any other script fails loudly
# (module_utils/winsim_scripts.py).
from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import re
import sys

# The state layer the interpreter (lab/winsim/ps) runs the scripts over: imported here so that
# Ansible ships these module_utils with the module.
from ansible_collections.ansible.windows.plugins.module_utils import (  # noqa: F401
    winsim_binaries,
    winsim_files,
    winsim_hns,
    winsim_scm,
)
from ansible_collections.ansible.windows.plugins.module_utils.winsim_module import run
from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError
from ansible_collections.ansible.windows.plugins.module_utils.winsim_scripts import run_script, script_id

# Scripts the lab runs as written (their Python re-implementations are gone).
INTERPRETED = frozenset(["hns_state", "hns_calls", "service_state", "service_apply", "node_facts", "files_state",
                         "node_sync", "node_health", "node_bundle", "docker_state", "docker_apply", "containerd_state",
                         "containerd_apply", "image_pull"])
# win_powershell's error_action option -> $ErrorActionPreference
_ERROR_ACTION = {"stop": "Stop", "continue": "Continue", "silently_continue": "SilentlyContinue"}

# Same test the real module uses when it cannot parse the script's AST.
SHOULD_PROCESS = re.compile(r"\[CmdletBinding\((?:[\w=\$]+,\s*)?SupportsShouldProcess(?:=\$true)?(?:,\s*[\w=\$]+)?\)\]",
                            re.I)


def _streams(result):
    for key in ("host_out", "host_err"):
        result.setdefault(key, "")
    for key in ("output", "error", "warning", "verbose", "debug", "information"):
        result.setdefault(key, [])
    result.setdefault("result", {})


def body(sim):
    p = sim.params
    if p.get("executable"):
        raise SimError("winsim: win_powershell with executable= is not simulated")
    if p.get("path"):
        raise SimError("winsim: win_powershell with path= (a script file on the host) is not simulated")
    if p.get("creates") and os.path.exists(sim.host.local_path(p["creates"])):
        sim.result.update(changed=False, msg="skipped, since %s exists" % p["creates"])
        _streams(sim.result)
        return
    if p.get("removes") and not os.path.exists(sim.host.local_path(p["removes"])):
        sim.result.update(changed=False, msg="skipped, since %s does not exist" % p["removes"])
        _streams(sim.result)
        return
    script = p["script"] or ""
    if sim.check_mode and not SHOULD_PROCESS.search(script):
        sim.result["changed"] = True  # the real module reports changed without running the script
        _streams(sim.result)
        return
    if script_id(script) in INTERPRETED:
        _interpret(sim, script, script_id(script))
        _streams(sim.result)
        return
    try:
        answer = run_script(sim.host, script, p.get("parameters") or {}, sim.check_mode)
    except SimError as e:
        # A terminating error: the real module returns the error record and fails.
        sim.result.update(changed=True, failed=True, error=[{
            "exception": {"message": str(e), "type": "System.Management.Automation.RuntimeException"},
            "output": str(e), "fully_qualified_error_id": "RuntimeException", "category_info": {},
            "error_details": None, "target_object": None, "script_stack_trace": ""}])
        _streams(sim.result)
        return
    sim.result.update(changed=bool(answer.get("changed", True)), result=answer.get("result", {}))
    _streams(sim.result)


def _interpret(sim, script, sid):
    """Run the script text through the lab's interpreter (lab/winsim/ps/winhost.execute)."""
    lib = os.environ.get("KUBEWIN_SIM_LIB")
    if not lib:
        raise SimError("winsim: KUBEWIN_SIM_LIB is not set (the winsim connection sets it)")
    if lib not in sys.path:
        sys.path.insert(0, lib)
    from ps import winhost

    p = sim.params
    answer = winhost.execute(sim.host, script, sid, p.get("parameters") or {},
                             error_action=_ERROR_ACTION[p.get("error_action") or "continue"],
                             depth=int(p.get("depth") or 2), check_mode=bool(sim.check_mode))
    sim.result.update(answer)
    if not sim.result["failed"]:
        sim.result.pop("failed")


def main():
    run("win_powershell", body, check_mode="partial")


if __name__ == "__main__":
    main()
