"""Fake kubewin.nodes.k8s_node: the Nodes in the shared state (unschedulable, labels); every state succeeds."""

from ansible.plugins.action import ActionBase
from fake_state import state


class ActionModule(ActionBase):
    def run(self, tmp=None, task_vars=None):
        args = self._task.args
        name, wanted = args["name"], args.get("state", "present")
        with state() as data:
            node = data["nodes"].get(name)
            if node is None:
                return {"failed": True, "msg": "Node %s does not exist." % name}
            before = dict(node, labels=dict(node["labels"]))
            if not self._task.check_mode:
                for key, value in (args.get("labels") or {}).items():
                    if value is None:
                        node["labels"].pop(key, None)
                    else:
                        node["labels"][key] = value
                if wanted in ("cordoned", "drained", "uncordoned"):
                    node["unschedulable"] = wanted != "uncordoned"
                data.setdefault("api", []).append([task_vars["inventory_hostname"], name, wanted])
            summary = {"exists": True, "name": name, "ready": True, "unschedulable": node["unschedulable"],
                       "labels": dict(node["labels"]), "conditions": []}
            return {"changed": before != node, "node": summary, "owned": True}
