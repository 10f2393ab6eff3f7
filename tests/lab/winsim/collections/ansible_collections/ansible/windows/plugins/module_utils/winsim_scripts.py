# -*- coding: utf-8 -*-
# Test-lab only: Python implementations of kubewin.nodes' PowerShell scripts.
"""kubewin.nodes scripts, dispatched by the id in their header line
(``# kubewin.nodes script: <id>``, see kubewin.nodes win_scripts.script_id).

To add one: write ``def my_id(host, params, check_mode): ... return result_dict`` honouring the
script's documented contract, and register it with ``@script("my_id")``. Raise SimError for what
would be a terminating PowerShell error. ``check_mode`` is only ever true for scripts that declare
SupportsShouldProcess (win_powershell skips the others); such a script must change nothing then.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json

from ansible_collections.ansible.windows.plugins.module_utils import winsim_hns, winsim_scm
from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError

HEADER_PREFIX = "# kubewin.nodes script: "
IMPLEMENTATIONS = {}


def script(script_id):
    def register(fn):
        IMPLEMENTATIONS[script_id] = fn
        return fn
    return register


def script_id(text):
    first = text.lstrip().splitlines()[0] if text.strip() else ""
    return first[len(HEADER_PREFIX):].strip() if first.startswith(HEADER_PREFIX) else None


@script("hns_state")
def hns_state(host, params, check_mode):
    return {"changed": False, "result": {
        "networks": winsim_hns.call(host.state, "GET", "/networks/", ""),
        "endpoints": winsim_hns.call(host.state, "GET", "/endpoints/", ""),
        "policylists": winsim_hns.call(host.state, "GET", "/policylists/", ""),
    }}


@script("hns_calls")
def hns_calls(host, params, check_mode):
    calls = params.get("Calls")
    if not calls:
        raise SimError("Cannot bind argument to parameter 'Calls' because it is an empty array.")
    responses = []
    for c in calls:
        answer = winsim_hns.call(host.state, c["method"], c["path"], c.get("request") or "")
        responses.append(answer)
        if not json.loads(answer)["Success"]:
            break
    return {"changed": True, "result": {"responses": responses}}


@script("service_state")
def service_state(host, params, check_mode):
    name = _mandatory(params, "Name")
    result = {"exists": False, "flags_file_content": None}
    flags_file = params.get("FlagsFile") or ""
    if flags_file:
        path = host.local_path(flags_file)
        import os
        if os.path.isfile(path):
            with open(path, "rb") as f:
                result["flags_file_content"] = f.read().decode("utf-8-sig")
    svc = winsim_scm.find(host.state, name)
    if svc:
        result.update(
            exists=True, status=svc["status"], image_path=svc["image_path"], start=svc["start"],
            delayed_autostart=svc["delayed_autostart"], dependencies=list(svc["dependencies"]),
            display_name=svc["display_name"], description=svc["description"], object_name=svc["object_name"],
            failure_actions=svc["failure_actions"], failure_actions_on_non_crash=svc["failure_actions_on_non_crash"])
    return {"changed": False, "result": result}


@script("service_apply")
def service_apply(host, params, check_mode):
    state = host.state
    name = _mandatory(params, "Name")
    action = _mandatory(params, "Action")
    if action not in ("create", "update", "remove", "none"):
        raise SimError("Cannot validate argument on parameter 'Action'. The argument \"%s\" does not belong to the "
                       "set \"create,update,remove,none\"" % action)
    run = params.get("Run") or "none"
    if action == "remove":
        if winsim_scm.find(state, name):
            winsim_scm.stop(host, name, force=True)
            if winsim_scm.find(state, name):
                winsim_scm.delete(state, name)
        return {"changed": True, "result": {"status": "Absent"}}
    if run in ("stop", "restart") and winsim_scm.find(state, name):
        winsim_scm.stop(host, name, force=True)
    deps = params.get("Dependencies") or []
    if isinstance(deps, str):
        deps = [deps]
    if action == "create":
        winsim_scm.create(state, name, params.get("CommandLine") or "", params.get("DisplayName") or "",
                          start=2, dependencies=deps)
    elif action == "update":
        svc = winsim_scm.require(state, name)  # Win32_Service.Change
        svc.update(image_path=params.get("CommandLine") or "", display_name=params.get("DisplayName") or svc["name"],
                   start=2, dependencies=list(deps), delayed_autostart=0)
    if action != "none":
        winsim_scm.require(state, name)["description"] = params.get("Description") or ""
        if params.get("FailureActions"):
            svc = winsim_scm.require(state, name)
            actions = winsim_scm.parse_sc_actions(params["FailureActions"])
            svc["failure_actions"] = winsim_scm.encode_failure_actions(int(params.get("FailureResetSeconds", 86400)),
                                                                      actions)
            svc["failure_actions_on_non_crash"] = 1
    if run in ("start", "restart"):
        winsim_scm.start(host, name)
    return {"changed": True, "result": {"status": winsim_scm.require(state, name)["status"]}}


def _mandatory(params, name):
    value = params.get(name)
    if value in (None, ""):
        raise SimError("Cannot bind argument to parameter '%s' because it is an empty string." % name)
    return value


def run_script(host, text, params, check_mode):
    """Dispatch a win_powershell script; an unknown script fails loudly (the lab cannot run PowerShell)."""
    sid = script_id(text)
    if sid is None:
        raise SimError("winsim cannot run this PowerShell script: it has no '%s<id>' header line, so no Python "
                       "implementation can be chosen. First line: %r" % (HEADER_PREFIX, text.strip()[:80]))
    impl = IMPLEMENTATIONS.get(sid)
    if impl is None:
        raise SimError("winsim has no implementation of kubewin.nodes script %r (known: %s); add one to "
                       "tests/lab/winsim/.../module_utils/winsim_scripts.py"
                       % (sid, ", ".join(sorted(IMPLEMENTATIONS))))
    host.fault("script:" + sid)
    return impl(host, params or {}, check_mode)


def b64(data):
    return base64.b64encode(data).decode("ascii")
