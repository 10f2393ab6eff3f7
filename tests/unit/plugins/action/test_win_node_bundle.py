"""win_node_bundle (issue 25 point 4): one read of the host with the bundle's selection, the answer redacted and staged
on the controller, the result without any text (review-s7 B4); bad limits refused naming the variable."""

import os
import stat

from remote_host import RemoteHost

from ansible_collections.kubewin.nodes.plugins.action.win_node_bundle import ActionModule

TOKEN = "abcdef.0123456789abcdef"


def _answer(params):
    return {"files": {p: {"text": "I1128 log line\n--token %s" % TOKEN, "lines": 2} for p in params["Files"]},
            "dirs": {},
            "listings": {}, "services": {}, "hns": {}, "hns_error": "stopped", "events": {}}


def test_one_read_with_the_selection_and_no_text_in_the_result(make_action, tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    host = RemoteHost({"node_bundle": _answer})
    result = make_action(ActionModule, {"container_runtime": "containerd", "max_lines": 50}, host).run(
        task_vars={"inventory_hostname": "win-1"})
    assert host.names() == ["node_bundle"] and result["changed"] is False and not result.get("failed")
    params = host.calls[0][1]
    assert params["Services"] == ["containerd", "kubelet", "flanneld", "kube-proxy"]
    assert params["EventLogs"] == ["System", "Application"] and params["MaxLines"] == 50
    assert params["MaxChars"] == 1024 * 1024 and "C:\\var\\log\\kube-proxy\\kube-proxy.log" in params["Files"]
    assert params["RuntimeService"] == "containerd" and params["RuntimeEventSource"] == ""
    # the result (what -v, AWX and ARA keep) holds no log text, redacted or not: the texts are staged on the controller
    assert TOKEN not in repr(result) and "I1128" not in repr(result) and "text" not in repr(result)
    (log,) = [f for f in result["files"] if f["file"] == "node/var/log/kubelet/kubelet.log"]
    assert log["redacted"] == 1 and log["size"] > 0
    assert os.path.dirname(result["staging"]) == str(tmp_path)
    assert stat.S_IMODE(os.stat(result["staging"]).st_mode) == 0o700
    with open(os.path.join(result["staging"], log["staged"])) as f:
        assert f.read() == "I1128 log line\n--token [REDACTED]\n"


def test_a_limit_below_one_is_refused_before_the_host_is_read(make_action):
    host = RemoteHost({"node_bundle": _answer})
    result = make_action(ActionModule, {"container_runtime": "docker", "max_kib": 0}, host).run(task_vars={})
    assert result["failed"] and host.calls == []
    assert "kubewin_support_bundle_max_kib" in result["msg"] and "positive" in result["msg"]


def test_the_archive_takes_the_staged_texts_and_removes_them(make_action, tmp_path, monkeypatch):
    import tarfile

    from ansible_collections.kubewin.nodes.plugins.action.bundle_archive import ActionModule as Archive

    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    host = RemoteHost({"node_bundle": _answer})
    staged = make_action(ActionModule, {"container_runtime": "containerd"}, host).run(
        task_vars={"inventory_hostname": "win-1"})
    forged = dict(staged, staging=str(tmp_path))  # a result that names another directory is not read
    dest = tmp_path / "out"
    dest.mkdir()
    result = make_action(Archive, {"hosts": {"win-1": staged, "win-2": forged}, "dest": str(dest)}, host).run(
        task_vars={})
    assert not result.get("failed"), result
    with tarfile.open(result["path"]) as tar:
        texts = {m.name.split("/", 1)[1]: tar.extractfile(m).read().decode() for m in tar.getmembers()}
    assert texts["win-1/node/var/log/kubelet/kubelet.log"] == "I1128 log line\n--token [REDACTED]\n"
    assert not [name for name in texts if name.startswith("win-2/")]
    assert any(line.startswith("win-2: win-2 (not collected: its staged files could not be read: ")
               for line in result["not_collected"]), result["not_collected"]
    assert not os.path.exists(staged["staging"])
