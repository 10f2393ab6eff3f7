"""Fake kubewin.nodes.win_node_health: a host listed in ``unhealthy`` has no pod network; its first check asks for
the flanneld repair, later ones find nothing repairable left (so the health role's wait ends at once)."""

from ansible.plugins.action import ActionBase
from fake_state import op, state


class ActionModule(ActionBase):
    def run(self, tmp=None, task_vars=None):
        host = task_vars["inventory_hostname"]
        with state() as data:
            op(data, host, "win_node_health")
            unhealthy = host in data.get("unhealthy", [])
            seen = data.setdefault("health_checks", {})
            seen[host] = seen.get(host, 0) + 1
            first = seen[host] == 1
        status = "fail" if unhealthy else "ok"
        checks = [{"check": "pod network flannel.4096", "status": status,
                   "detail": "missing from HNS" if unhealthy else "present", "fix": None},
                  {"check": "service kubelet", "status": "ok", "detail": "Running", "fix": None}]
        return {"changed": False, "healthy": not unhealthy, "checks": checks, "node_name": self._task.args["node_name"],
                "repair": ["flanneld"] if unhealthy and first else [], "runtime_services": ["containerd"]}
