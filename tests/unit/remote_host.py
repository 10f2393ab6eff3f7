"""A fake Windows host at the _execute_module boundary, shared by the action plugin tests."""

import base64
import struct


class ScriptFailed(Exception):
    """Raised by a handler: the script stopped with this error (a terminating error on the host)."""


class RemoteHost:
    """Records every module execution on the (fake) Windows host and answers win_powershell
    calls by script identifier through ``handlers`` (name -> callable(parameters) -> result)."""

    def __init__(self, handlers):
        self.handlers = handlers
        self.calls = []

    def execute(self, module_name=None, module_args=None, task_vars=None, **_):
        from ansible_collections.kubewin.nodes.plugins.plugin_utils._win_scripts import script_id

        assert module_name == "ansible.windows.win_powershell"
        name = script_id(module_args["script"])
        self.calls.append((name, module_args.get("parameters")))
        try:
            return {"changed": False, "result": self.handlers[name](module_args.get("parameters") or {})}
        except ScriptFailed as e:  # how win_powershell reports a terminating error of the script
            return {"changed": False, "failed": True, "result": {}, "error": [{"exception": {"message": str(e)}}]}

    def names(self):
        return [c[0] for c in self.calls]


class FakeScm:
    """A service table and a file, answering the service_state / service_apply contracts."""

    def __init__(self, flags_env=None):
        self.services = {}
        self.flags_env = flags_env
        # what the watch of a start reports (None: the service stays Running, one process)
        self.watch_answer = None
        self.host = RemoteHost({"service_state": self.state, "service_apply": self.apply})

    def watch(self, params):
        if self.watch_answer is not None:
            return self.watch_answer
        status = (self.services.get(params["Name"]) or {}).get("status")
        # the wrapped program the watch samples too (service_apply's WatchChild): one process all along
        child = 4300 if params.get("Child") else 0
        return {"samples": [{"ms": ms, "status": status, "pid": 4242, "child": child}
                            for ms in range(0, params["Seconds"] * 1000 + 1, params["IntervalMs"])],
                "exit_code": 0, "service_exit_code": 0, "log_tail": {p: "" for p in params["LogFiles"]}}

    def state(self, params):
        svc = self.services.get(params["Name"])
        answer = {"exists": svc is not None, "flags_file_content": self.flags_env if params["FlagsFile"] else None}
        if svc:
            answer.update(svc)
        return answer

    def apply(self, p):
        if p["Action"] == "remove":
            return {"status": "Absent", "removed": self.services.pop(p["Name"], None) is not None}
        svc = self.services.setdefault(p["Name"], {"status": "Stopped"})
        if p["Action"] in ("create", "update"):
            actions = [(1, int(d)) for d in p["FailureActions"].split("/")[1::2]]
            blob = struct.pack("<5I", p["FailureResetSeconds"], 0, 0, len(actions), 20)
            blob += b"".join(struct.pack("<2I", *a) for a in actions)
            svc.update(image_path=p["CommandLine"], start=2, delayed_autostart=0, dependencies=p["Dependencies"],
                       display_name=p["DisplayName"], description=p["Description"],
                       failure_actions=base64.b64encode(blob).decode(), failure_actions_on_non_crash=1,
                       environment=p["Environment"])
            # Set-ItemProperty -Type <ParameterTypes[name]>; GetValue reads a DWORD back as a signed Int32
            for name, value in p["Parameters"].items():
                kind = p["ParameterTypes"][name]
                svc.setdefault("parameters", {})[name] = (
                    (value - 2 ** 32 if value >= 2 ** 31 else value) if kind == "DWord"
                    else [str(v) for v in value] if kind == "MultiString" else str(value))
        if p["Run"] in ("start", "restart"):
            if getattr(self, "start_error", None):
                svc["status"] = "Stopped"
                raise ScriptFailed(self.start_error)
            svc["status"] = getattr(self, "after_start", "Running")
            svc["restarts"] = svc.get("restarts", 0) + 1
        elif p["Run"] == "stop":
            svc["status"] = "Stopped"
        reply = {"status": svc["status"]}
        if p["Run"] in ("start", "restart") and p.get("WatchSeconds", 0) > 0:
            # service_apply watches what it started in the same call (its Watch* parameters)
            reply["watch"] = self.watch({"Name": p["Name"], "Seconds": p["WatchSeconds"],
                                         "IntervalMs": p["WatchIntervalMs"], "Child": p["WatchChild"],
                                         "LogFiles": p["WatchLogFiles"], "TailLines": p["WatchTailLines"]})
        return reply
