"""The network role retires the ServiceAccounts older releases made for kube-proxy and flanneld (which revokes their
tokens) only after both services run with the kubelet's kubeconfig (review-s5 C1): a run that stops in between
leaves them with a token that still works, not a revoked one."""

import yaml
from role_tasks import ROOT, walk


def _tasks():
    return list(walk(yaml.safe_load((ROOT / "roles" / "network" / "tasks" / "main.yml").read_text())))


def _index(tasks, predicate, what):
    found = [i for i, t in enumerate(tasks) if predicate(t)]
    assert found, "no task %s in roles/network/tasks/main.yml: update this test" % what
    return found


def test_the_old_service_accounts_are_deleted_after_the_services_are_switched():
    tasks = _tasks()
    creds = "kubewin.nodes.k8s_node_credentials"
    retiring = _index(tasks, lambda t: creds in t and t[creds].get("retire", True), "that retires accounts")
    keeping = _index(tasks, lambda t: creds in t and t[creds].get("retire", True) is False, "that keeps accounts")
    services = _index(tasks, lambda t: t.get("kubewin.nodes.win_host_service", {}).get("name") in (
        "flanneld", "kube-proxy"), "that registers flanneld or kube-proxy")
    files = _index(tasks, lambda t: "absent" in t.get("kubewin.nodes.win_host_files", {}), "that removes token files")
    # the RBAC as the node comes first (kube-proxy reads its pod subnet from that answer), the accounts go last
    assert keeping[0] < min(services), "the first k8s_node_credentials call must keep the old accounts"
    assert min(retiring) > max(services), "an older ServiceAccount is deleted before a service stops using its token"
    assert min(files) > max(services) and min(files) > min(retiring)
