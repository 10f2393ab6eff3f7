"""A fake Windows host at the _execute_module boundary, shared by the action plugin tests."""


class RemoteHost:
    """Records every module execution on the (fake) Windows host and answers win_powershell
    calls by script identifier through ``handlers`` (name -> callable(parameters) -> result)."""

    def __init__(self, handlers):
        self.handlers = handlers
        self.calls = []

    def execute(self, module_name=None, module_args=None, task_vars=None, **_):
        from ansible_collections.kubewin.nodes.plugins.module_utils.win_scripts import script_id

        assert module_name == "ansible.windows.win_powershell"
        name = script_id(module_args["script"])
        self.calls.append((name, module_args.get("parameters")))
        return {"changed": False, "result": self.handlers[name](module_args.get("parameters") or {})}

    def names(self):
        return [c[0] for c in self.calls]
