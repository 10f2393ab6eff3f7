"""The support bundle on the controller (issue 25 point 4): the redaction of every credential kind, plain and in
base64, the selection that never names a credential file, the files made of the node_bundle answer, and the one
archive with its index."""

import base64
import datetime
import json
import os
import tarfile

import pytest

from ansible_collections.kubewin.nodes.plugins.plugin_utils import _bundle as bundle
from ansible_collections.kubewin.nodes.plugins.plugin_utils._redact import MARK, redact

BOOTSTRAP = "abcdef.0123456789abcdef"
JWT = "eyJhbGciOiJSUzI1NiIsImtpZCI6IngifQ.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6a3ViZS1zeXN0ZW06eCJ9.c2lnbmF0dXJl"
KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n" \
      "-----END RSA PRIVATE KEY-----\n"
SECRETS = (BOOTSTRAP, JWT, "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun", "hunter2pass")


def _b64(text):
    return base64.b64encode(text.encode()).decode()


@pytest.mark.parametrize("text", [
    "I1128 kubeadm join 10.0.0.1:6443 --token %s --discovery-token-ca-cert-hash sha256:00" % BOOTSTRAP,
    "token: %s" % BOOTSTRAP,
    '{"token": "%s"}' % JWT,
    "Authorization: Bearer %s" % JWT,
    "users:\n- name: x\n  user:\n    client-key-data: %s\n" % _b64(KEY),
    KEY,
    KEY[:80],  # a key cut by a log's tail: no END line
    '[plugins."io.containerd.grpc.v1.cri".registry.configs."r".auth]\n  password = "hunter2pass"\n',
    "HTTPS_PROXY=http://user:hunter2pass@proxy:3128",
    "HTTPS_PROXY=user:hunter2pass@proxy:3128",  # review-s7 B3: Go takes a proxy without a scheme as http://
    '"http_proxy": "user:hunter2pass@10.0.0.1:8080"',
    "--bootstrap-token=%s" % BOOTSTRAP,
    "data: %s" % _b64(JWT),
    "twice %s" % _b64(_b64(KEY)),
    "a line with %s inside" % _b64("token: " + BOOTSTRAP),
])
def test_each_credential_is_redacted_plain_and_in_base64(text):
    out, count = redact(text)
    assert count >= 1 and MARK in out
    for secret in SECRETS:
        assert secret not in out and _b64(secret) not in out, out


def test_what_is_no_credential_is_kept_and_json_stays_json():
    text = ("authentication:\n  x509:\n    clientCAFile: C:\\etc\\kubernetes\\pki\\ca.crt\nauthorization:\n"
            "  mode: Webhook\nfeatureGates:\n  NodeLogQuery: true\n")
    assert redact(text) == (text, 0)
    line = 'E1128 "Failed to get token" err="context deadline exceeded" path=/var/lib/kubelet/pki/x'
    assert redact(line) == (line, 0)
    image = "image: mcr.microsoft.com/oss/kubernetes/pause:3.10@sha256:0123abcd"  # a name:tag@digest, no userinfo
    assert redact(image) == (image, 0)
    doc = json.loads(redact(json.dumps({"token": JWT, "name": "n"}))[0])
    assert doc == {"token": MARK, "name": "n"}


def test_the_selection_never_reads_a_credential_file():
    for runtime in ("containerd", "docker"):
        for services in (True, False):
            params = bundle.script_parameters(runtime, services, 10, 1, 5)
            assert not [p for p in params["Files"] if bundle.is_credential(p)]
    for path in ("C:\\etc\\kubernetes\\kubelet.conf", "C:\\etc\\kubernetes\\bootstrap-kubelet.conf",
                 "C:\\etc\\kube-proxy\\kubeconfig", "C:\\etc\\kube-flannel\\token",
                 "C:\\var\\lib\\kubelet\\pki\\kubelet-client-current.pem", "C:\\etc\\kubernetes\\pki\\ca.crt",
                 "C:\\k\\x.key", "C:\\Program Files\\containerd\\cni\\conf\\token.json"):
        assert bundle.is_credential(path), path
    for path in ("C:\\var\\lib\\kubelet\\config.d\\50-kubewin-node-log-query.conf",
                 "C:\\Program Files\\containerd\\cni\\conf\\10-flannel.conf", "C:\\var\\lib\\kubelet\\config.yaml"):
        assert not bundle.is_credential(path), path


def _answer():
    logs = "I1128 started\nI1128 Authorization: Bearer %s" % JWT
    return {
        "files": {"C:\\var\\log\\kubelet\\kubelet.log": {"text": logs, "lines": 2, "truncated": True, "error": None},
                  "C:\\var\\lib\\kubelet\\config.yaml": {"text": None, "error": "Cannot find path"}},
        "dirs": {"C:\\Program Files\\containerd\\cni\\conf": {"entries": {
            "10-flannel.conf": {"text": '{"type": "flannel"}', "lines": 1},
            "creds-token.json": {"text": "token: %s" % BOOTSTRAP, "lines": 1}}, "error": None},
            "C:\\var\\lib\\kubelet\\config.d": {"entries": {}, "error": "Cannot find path"}},
        "listings": {"C:\\var\\log": {"names": ["kubelet"], "error": None}},
        "services": {"kubelet": {"exists": True, "status": "Running", "environment": ["X_TOKEN=" + BOOTSTRAP]}},
        "hns": {"networks": json.dumps({"Success": True, "Output": [{"Name": "flannel.4096"}]}), "endpoints": None,
                "policylists": None},
        "hns_error": "HNS call GET /endpoints/ failed",
        "events": {"System": {"records": [{"id": 7036, "message": "The kubelet service entered the running state."},
                                          {"id": 1, "message": "Cannot retrieve event message text."}],
                              "error": None, "note": "read with errors, the first: The locale specific resource"},
                   "Application": {"records": [], "error": None, "note": None}},
        "runtime": {"events": {"records": [], "error": None,
                               "note": 'There is not an event provider on the localhost computer that matches "x".'},
                    "log_file": "C:\\ProgramData\\containerd\\containerd.log",
                    "log": {"text": "level=info msg=started\ntoken: " + BOOTSTRAP, "lines": 2, "truncated": False,
                            "error": None},
                    "config_file": "D:\\containerd\\config.toml",
                    "config": {"text": "version = 3", "lines": 1, "truncated": False, "error": None}},
    }


def _files():
    params = bundle.script_parameters("containerd", True, 10, 1, 5)
    cluster = {"node": {"resources": [{"metadata": {"name": "n"}, "status": {"conditions": [{"type": "Ready"}]}}]},
               "events": {"failed": True, "msg": "Unauthorized"}}
    return {f["source"] if f["file"] is None else f["file"]: f for f in bundle.host_files(_answer(), params, cluster)}


def test_the_files_of_a_host_say_what_was_read_and_why_not():
    files = _files()
    log = files["node/var/log/kubelet/kubelet.log"]
    assert log["what"] == "log (last lines)" and log["truncated"] and log["redacted"] == 1 and JWT not in log["text"]
    assert files["C:\\var\\lib\\kubelet\\config.yaml"]["error"] == "Cannot find path"
    assert files["node/Program Files/containerd/cni/conf/10-flannel.conf"]["text"] == '{"type": "flannel"}\n'
    assert files["C:\\Program Files\\containerd\\cni\\conf\\creds-token.json"]["error"] == \
        "not collected: may hold a credential"
    assert BOOTSTRAP not in files["node/services.json"]["text"]
    assert json.loads(files["node/hns/networks.json"]["text"])["Output"] == [{"Name": "flannel.4096"}]
    assert files["HNS"]["error"] == "not collected: HNS call GET /endpoints/ failed"
    system = json.loads(files["node/events/System.json"]["text"])
    assert [r["id"] for r in system["records"]] == [7036, 1] and system["note"].startswith("read with errors")
    # a log without records is an empty list, not "not collected" (review-s7 B2)
    assert json.loads(files["node/events/Application.json"]["text"]) == {"records": [], "note": None}
    assert files["node/events/Application.json"]["error"] is None
    # the runtime's log: containerd has no event source, so no events are read for it (review-s8 W3); its --log-file,
    # redacted
    assert "node/runtime/events.json" not in files
    log = files["node/runtime/containerd.log"]
    assert log["source"] == "C:\\ProgramData\\containerd\\containerd.log (containerd --log-file)"
    assert log["text"].startswith("level=info msg=started\n") and BOOTSTRAP not in log["text"]
    assert json.loads(files["cluster/node.json"]["text"])[0]["status"]["conditions"] == [{"type": "Ready"}]
    assert files["Kubernetes API"]["error"] == "not collected: Unauthorized"


def test_the_runtimes_own_config_file_from_its_service_command_line_is_collected():
    """The configuration file the service runs with (containerd --config in its ImagePath), not only the default path;
    a name that may hold a credential is not collected; the default path is not collected twice. Fails on the old code
    (no such entry)."""
    files = _files()
    config = files["node/runtime/config.toml"]
    assert config["text"] == "version = 3\n" and config["what"] == "configuration"
    assert config["source"] == "D:\\containerd\\config.toml (the containerd service's --config)"
    params = bundle.script_parameters("containerd", True, 10, 1, 5)
    answer = dict(_answer(), runtime=dict(_answer()["runtime"], config_file="D:\\c\\token.toml"))
    got = {f["source"]: f for f in bundle.host_files(answer, params, {})}
    assert got["D:\\c\\token.toml"]["error"] == "not collected: may hold a credential"
    answer["runtime"]["config_file"] = params["Files"][-1]
    assert not [f for f in bundle.host_files(answer, params, {}) if "--config" in (f["source"] or "")]


def test_the_archive_holds_every_host_and_an_index_and_no_credential(tmp_path):
    hosts = {"win-1": list(_files().values()), "win-2": [
        {"file": None, "what": "the node's files", "source": "win-2", "text": None,
         "error": "not collected: unreachable", "truncated": False, "lines": None}]}
    # a caller that hands in an unredacted text: the writer redacts it again
    hosts["win-1"].append({"file": "node/extra.txt", "what": "x", "source": "x", "text": "token: " + BOOTSTRAP,
                           "error": None, "truncated": False, "lines": 1})
    now = datetime.datetime(2026, 11, 28, 4, 30, tzinfo=datetime.timezone.utc)
    path, idx = bundle.write_archive(str(tmp_path), hosts, now)
    assert path == str(tmp_path / "kubewin-support-bundle-20261128T043000Z.tar.gz")
    assert (tmp_path / path).stat().st_mode & 0o777 == 0o600
    with tarfile.open(path) as tar:
        texts = {m.name.split("/", 1)[1]: tar.extractfile(m).read().decode() for m in tar.getmembers()}
    index = json.loads(texts["index.json"])
    assert index["schema"] == "kubewin.nodes/support-bundle/v1" and index["hosts"] == ["win-1", "win-2"]
    rows = {(r["host"], r["file"]): r for r in index["files"]}
    assert rows[("win-1", "win-1/node/var/log/kubelet/kubelet.log")]["what"] == "log (last lines)"
    assert rows[("win-2", None)]["error"] == "not collected: unreachable"
    assert "win-1/node/var/log/kubelet/kubelet.log" in texts and "win-1/cluster/node.json" in texts
    assert "unreachable" in texts["index.txt"]
    blob = "\n".join(texts.values())
    for secret in SECRETS:
        assert secret not in blob and _b64(secret) not in blob
    with pytest.raises(FileExistsError):  # one archive per run: never over another
        bundle.write_archive(str(tmp_path), hosts, now)


def test_the_runtime_log_is_asked_for_by_its_service_and_event_source():
    assert [(bundle.script_parameters(r, True, 10, 1, 5)["RuntimeService"],
             bundle.script_parameters(r, True, 10, 1, 5)["RuntimeEventSource"]) for r in ("containerd", "docker")] == \
        [("containerd", ""), ("docker", "docker")]
    # containerd's log: the rotated copies beside it are listed (the kubewin-containerd-log task's containerd-<n>.log)
    assert "C:\\var\\log\\containerd" in bundle.script_parameters("containerd", True, 10, 1, 5)["Listings"]
    assert "C:\\var\\log\\containerd" not in bundle.script_parameters("docker", True, 10, 1, 5)["Listings"]


def test_an_event_log_that_could_not_be_read_is_not_collected_with_why():
    params = bundle.script_parameters("docker", False, 10, 1, 5)
    answer = dict(_answer(), events={"System": {"records": [], "error": 'There is not an event log on the localhost '
                                                "computer that matches \"System\".", "note": None}}, runtime={})
    files = {f["what"]: f for f in bundle.host_files(answer, params, {})}
    assert files["the newest System event log records"]["error"].startswith("not collected: There is not an event log")
    assert files["the newest System event log records"]["file"] is None
    assert files["the newest Application event log records"]["error"] == "not collected: not read"
    assert files["the newest Application log records of the docker event source"]["error"] == \
        "not collected: not read"


def test_staged_files_hold_the_texts_and_the_rows_none(tmp_path):
    """review-s7 B4: the task result Ansible keeps (-v, AWX, ARA) holds no log text; the texts wait on the controller
    in a directory only this user can read."""
    entries = list(_files().values())
    directory, rows = bundle.stage("win-1", entries, parent=str(tmp_path))
    assert os.path.basename(directory).startswith("kubewin-bundle-win-1-")
    assert os.stat(directory).st_mode & 0o777 == 0o700
    assert all("text" not in r for r in rows) and "I1128" not in json.dumps(rows)
    staged = [r for r in rows if r["staged"]]
    assert len(staged) == len([e for e in entries if e["text"] is not None])
    for row in staged:
        assert os.stat(os.path.join(directory, row["staged"])).st_mode & 0o777 == 0o600
    log = next(r for r in rows if r["file"] == "node/var/log/kubelet/kubelet.log")
    assert log["size"] == len(_files()["node/var/log/kubelet/kubelet.log"]["text"].encode())
    assert bundle.unstage(directory, rows) == entries
    bundle.remove_staging(directory)
    assert not os.path.exists(directory)


def test_a_result_cannot_make_the_archive_read_another_file(tmp_path):
    directory, rows = bundle.stage("win-1", list(_files().values()), parent=str(tmp_path))
    with pytest.raises(ValueError, match="staged file's name"):
        bundle.unstage(directory, [dict(rows[0], staged="../../etc/passwd")])
    with pytest.raises(ValueError, match="not a support bundle staging directory"):
        bundle.unstage(str(tmp_path), rows)
    os.chmod(directory, 0o755)
    with pytest.raises(ValueError, match="mode 0700"):
        bundle.unstage(directory, rows)


def test_redacting_twice_keeps_what_follows_a_redacted_key():
    # the bundle redacts once before Ansible keeps the result and once as each file is written (review-s7 B4): a
    # key redacted the first time has no END line left, and must not take the rest of the log the second time
    text = "I1 key:\n-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----\nI2 marker\n"
    once = redact(text)[0]
    assert "MHcCAQEE" not in once and "I2 marker" in once
    assert redact(once)[0] == once
