"""win_node_bundle (issue 25 point 4): one read of the host with the bundle's selection, the answer redacted before it
is returned; bad limits refused naming the variable."""

from remote_host import RemoteHost

from ansible_collections.kubewin.nodes.plugins.action.win_node_bundle import ActionModule

TOKEN = "abcdef.0123456789abcdef"


def _answer(params):
    return {"files": {p: {"text": "--token %s" % TOKEN, "lines": 1} for p in params["Files"]}, "dirs": {},
            "listings": {}, "services": {}, "hns": {}, "hns_error": "stopped", "events": {}}


def test_one_read_with_the_selection_and_nothing_unredacted_returned(make_action):
    host = RemoteHost({"node_bundle": _answer})
    result = make_action(ActionModule, {"container_runtime": "containerd", "max_lines": 50}, host).run(task_vars={})
    assert host.names() == ["node_bundle"] and result["changed"] is False and not result.get("failed")
    params = host.calls[0][1]
    assert params["Services"] == ["containerd", "kubelet", "flanneld", "kube-proxy"]
    assert params["EventLogs"] == ["System", "Application"] and params["MaxLines"] == 50
    assert params["MaxChars"] == 1024 * 1024 and "C:\\var\\log\\kube-proxy\\kube-proxy.log" in params["Files"]
    assert TOKEN not in repr(result)
    assert any(f["file"] == "node/var/log/kubelet/kubelet.log" and f["redacted"] == 1 for f in result["files"])


def test_a_limit_below_one_is_refused_before_the_host_is_read(make_action):
    host = RemoteHost({"node_bundle": _answer})
    result = make_action(ActionModule, {"container_runtime": "docker", "max_kib": 0}, host).run(task_vars={})
    assert result["failed"] and host.calls == []
    assert "kubewin_support_bundle_max_kib" in result["msg"] and "positive" in result["msg"]
