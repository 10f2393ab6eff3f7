"""Every role task that registers or starts the kubelet service passes the --config-dir the node role makes: the
module has no default (a kubelet given a --config-dir that does not exist does not start), and a task that left it out
would drop the node log query's drop-in from the service, or change the service on every run."""

import yaml
from role_tasks import ROOT, walk

from ansible_collections.kubewin.nodes.plugins.module_utils import _windows_paths as wp

MODULE = "kubewin.nodes.win_kubelet_service"


def test_each_kubelet_service_task_passes_the_config_dir_the_node_role_makes():
    calls = []
    for path in sorted((ROOT / "roles").glob("*/*/main.yml")):
        if path.parent.name not in ("tasks", "handlers"):
            continue
        for task in walk(yaml.safe_load(path.read_text())):
            args = task.get(MODULE)
            if isinstance(args, dict) and args.get("state") != "absent":
                calls.append((str(path.relative_to(ROOT)), task["name"], args.get("config_dir")))
    assert len(calls) >= 4, calls  # node (task, handler), upgrade (stop, start)
    assert all(config_dir == "{{ _kubewin_kubelet_config_dir }}" for dummy, dummy2, config_dir in calls), calls
    role_vars = yaml.safe_load((ROOT / "roles" / "kubewin" / "vars" / "main.yml").read_text())
    node_vars = yaml.safe_load((ROOT / "roles" / "node" / "vars" / "main.yml").read_text())
    # the directory the node role makes, and where preflight's drop-in goes (node_config_files)
    assert {"path": role_vars["_kubewin_kubelet_config_dir"]} in node_vars["_kubewin_base_directories"]
    assert role_vars["_kubewin_kubelet_config_dir"] == wp.KUBELET_DROPIN_DIR
