"""Every restricted file the node role writes lands in a directory it restricts first; the network role writes no
credential (kube-proxy and flanneld run with the kubelet's kubeconfig)."""

import ntpath

import yaml
from role_tasks import ROOT, walk


def _restricted_files():
    tasks = yaml.safe_load((ROOT / "roles" / "node" / "tasks" / "main.yml").read_text())
    node_vars = yaml.safe_load((ROOT / "roles" / "node" / "vars" / "main.yml").read_text())
    for task in walk(tasks):
        args = task.get("kubewin.nodes.win_host_files") or {}
        files = args.get("files")
        for f in files if isinstance(files, list) else []:
            path = f.get("path", "")
            # a path that is one of the role's own variables ("{{ _kubewin_join_config }}") is that variable's value
            path = node_vars.get(path.strip("{} "), path) if path.startswith("{{") else path
            if f.get("restricted") and "{{" not in path:
                yield path


def test_secret_files_go_into_directories_restricted_beforehand():
    role_vars = yaml.safe_load((ROOT / "roles" / "node" / "vars" / "main.yml").read_text())
    assert "_kubewin_credential_directories" in role_vars["_kubewin_directories"]
    restricted = {d["path"].lower() for d in role_vars["_kubewin_base_directories"]
                  + role_vars["_kubewin_credential_directories"] if d.get("restricted", True)}
    files = list(_restricted_files())
    assert "C:\\k\\kubewin-join.yaml" in files, "the JoinConfiguration (holds the token) not found: update this test"
    for path in files:
        assert ntpath.dirname(path).lower() in restricted, path


def test_the_network_role_writes_no_credential_kube_proxy_runs_with_the_kubelets_kubeconfig():
    """kube-proxy and flanneld have no token or kubeconfig of their own (issue 21 point 2): the network role writes
    none, and kube-proxy's --kubeconfig is the kubelet's."""
    from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import network as nn

    text = (ROOT / "roles" / "network" / "tasks" / "main.yml").read_text()
    assert "  credentials:" not in text and "tokens:" not in text
    # the role has win_host_service make kube-proxy's command line (kube_proxy), whose kubeconfig is the kubelet's
    proxy = next(t for t in walk(yaml.safe_load(text)) if t.get("name") == "Run kube-proxy as a native Windows service")
    task = proxy["kubewin.nodes.win_host_service"]
    assert "args" not in task and "kubeconfig" not in task["kube_proxy"]
    args = nn.kube_proxy_argv("win-1", "10.244.0.0/16", "vxlan", 4096, "10.244.3.0/24", "v1.37.2")
    assert "--kubeconfig=C:\\etc\\kubernetes\\kubelet.conf" in args
