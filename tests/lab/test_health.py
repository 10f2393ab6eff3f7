"""The health check and repair playbooks (issue 21 point 4) on the lab's real control plane: one node scaled up once
(services mode, containerd, flannel vxlan: the lab's defaults), checked healthy, then its Host Network Service
restarted by the simulator alone (lab/winsim/winsim_boot.py, microsoft/Windows-Containers#278: flannel's network
gone, flanneld and kube-proxy still running and recreating nothing), found by health.yml and repaired by repair.yml.
Then the support bundle (issue 25 point 4) of the same node: its index and contents, and no credential of the run in
it, plain or base64. What is shown here rests on the simulator's model; what a real host does is listed in
docs/verification.md."""

import base64
import json
import os
import re
import tarfile
import time

import pytest
import scenario
from kubernetes.client.exceptions import ApiException
from test_secrets import TokenWatcher, host_credentials, managed_secret_values, needles

HOST = "win-1"
NODE = "hc-" + HOST
SERVICES = ("containerd", "kubelet", "flanneld", "kube-proxy")
VNI_NETWORK = "flannel.4096"
LB_WAIT = 10  # kubewin_health_load_balancer_wait (60 s by default), shorter here to keep the run short


def _state(sc):
    with scenario.core.Host(sc.root, HOST).open(save=False) as h:
        return h.state


def _networks(sc):
    return {n["Name"]: n["ID"] for n in _state(sc)["hns"]["networks"]}


def _report(path):
    with open(path) as f:
        return json.load(f)


def _checks(report):
    (node,) = report["nodes"]
    return {c["check"]: c for c in node["checks"]}


def _host_tasks(doc, changed=False):
    """Names of the tasks that ran on HOST (only those that changed, with ``changed``), in order, without the role's
    prefix ('kubewin.nodes.health : ')."""
    return [task["task"]["name"].rsplit(" : ", 1)[-1] for play in doc["plays"] for task in play["tasks"]
            if HOST in task["hosts"] and not task["hosts"][HOST].get("skipped")
            and (task["hosts"][HOST].get("changed") or not changed)]


@pytest.fixture(scope="module")
def node(tmp_path_factory, api):
    sc = scenario.Scenario(tmp_path_factory.mktemp("health"), nodes=1, kubewin_node_name="hc-{{ inventory_hostname }}")
    core, _ = api
    with TokenWatcher(core) as watch:  # the bootstrap token the join made (deleted again), for the bundle's search
        rc, doc, text = sc.run("scale_up.yml")
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    sc.bootstrap_tokens = [token for token, dummy, dummy2 in watch.seen.values()]
    yield sc
    try:  # the shared cluster keeps no Node of this test (a reset run would cost a playbook run)
        core.delete_node(NODE)
    except ApiException as e:
        if e.status != 404:
            raise


def test_health_reports_a_healthy_node_in_one_remote_operation(node, tmp_path):
    node.reset_ops(HOST)
    path = str(tmp_path / "h.json")
    rc, doc, text = node.run("health.yml", "-e", "kubewin_health_report_path=" + path)
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    report = _report(path)
    assert report["schema"] == "kubewin.nodes/health/v1" and report["healthy"] is True
    assert [(n["host"], n["node"], n["healthy"], n["repaired"]) for n in report["nodes"]] == [(HOST, NODE, True, [])]
    checks = _checks(report)
    (vip,) = [k for k in checks if k.startswith("source VIP endpoint ")]  # the last address of the node's podCIDR
    assert {k: c["status"] for k, c in checks.items()} == {
        "service containerd": "ok", "service kubelet": "ok", "service flanneld": "ok", "service kube-proxy": "ok",
        "pod network " + VNI_NETWORK: "ok", "network External": "ok", vip: "ok", "kube-proxy load balancers": "ok",
        "CNI configuration": "ok",
        "kubelet client certificate": "ok", "node Ready": "ok", "node NetworkUnavailable": "ok",
        "node schedulable": "ok"}
    # the CNI configuration containerd's config dump names, and the certificate the kubelet's TLS bootstrap got
    assert checks["CNI configuration"]["detail"] == (
        "C:\\Program Files\\containerd\\cni\\conf\\10-flannel.conf, loaded first")
    # at least the Service kubernetes (its EndpointSlice has the API server), programmed by kube-proxy at its start
    assert not checks["kube-proxy load balancers"]["detail"].startswith("all 0 "), checks["kube-proxy load balancers"]
    not_after = report["nodes"][0]["certificates"]["kubelet client"]
    assert checks["kubelet client certificate"]["detail"] == "valid until " + not_after
    assert [script for dummy, dummy2, script in node.ops_detailed(HOST)] == ["node_health"]
    assert scenario.changed_tasks(doc).get(HOST) is None


def test_an_hns_restart_is_found_then_repaired_in_dependency_order(node, tmp_path):
    before = _networks(node)
    pids = {s: _state(node)["services"][s]["pid"] for s in ("flanneld", "kube-proxy")}
    assert scenario.core.hns_service_restart(node.root, HOST) == [VNI_NETWORK]

    path = str(tmp_path / "found.json")
    # one node, as a monitoring job asks: the report and the failed run must not depend on localhost being in the limit
    rc, doc, text = node.run("health.yml", "--limit", HOST + ":kube_control_plane[0]",
                             "-e", "kubewin_health_report_path=" + path)
    assert rc == 2, text[-3000:]
    report = _report(path)
    assert report["healthy"] is False
    failed = {k: c for k, c in _checks(report).items() if c["status"] == "fail"}
    assert set(failed) == {"pod network " + VNI_NETWORK}
    assert "restarts flanneld" in failed["pod network " + VNI_NETWORK]["fix"]
    assert re.search(r"pod network %s +fail +missing from HNS" % re.escape(VNI_NETWORK), text)  # the table's row
    assert {s: _state(node)["services"][s]["pid"] for s in pids} == pids  # a check repairs nothing

    path = str(tmp_path / "repaired.json")
    rc, doc, text = node.run("repair.yml", "-e", "kubewin_health_report_path=" + path)
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    restarts = [t for t in _host_tasks(doc, changed=True) if t.startswith("Restart")]
    assert [t.split(",")[0] for t in restarts] == ["Restart flanneld", "Restart kube-proxy"]
    report = _report(path)
    assert report["healthy"] is True and report["nodes"][0]["repaired"] == ["flanneld", "kube-proxy"]
    st = _state(node)
    assert all(st["services"][s]["pid"] != pids[s] for s in pids)
    after = _networks(node)
    assert VNI_NETWORK in after and after[VNI_NETWORK] != before[VNI_NETWORK]  # flanneld made it again
    proxy = st["processes"]["kube-proxy"]
    assert proxy.get("network_checked") and not proxy.get("sync_error"), proxy

    rc, doc, text = node.run("health.yml")
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    assert scenario.changed_tasks(doc).get(HOST) is None


def test_lost_hns_objects_and_another_cni_configuration_are_found(node, tmp_path):
    """kube-proxy's source VIP endpoint and its load balancers removed from HNS (hnsdiag delete endpoints /
    loadbalancers, kubernetes/kubernetes#135802) and a CNI configuration that sorts before 10-flannel.conf (the
    0-containerd-nat.json older sig-windows-tools scripts wrote): all found, the endpoint and the load balancers made
    again by kube-proxy's restart, the other file left to the operator."""
    def drop_vip(state):
        assert state["hns"]["loadbalancers"], "kube-proxy programmed no load balancer"
        net = next(n["ID"] for n in state["hns"]["networks"] if n["Name"] == VNI_NETWORK)
        state["hns"]["endpoints"] = [e for e in state["hns"]["endpoints"] if e["VirtualNetwork"] != net or e["Name"]]
        state["hns"]["loadbalancers"] = []
    scenario.core.edit(node.root, HOST, drop_vip)
    other = "Program Files\\containerd\\cni\\conf\\0-containerd-nat.json"
    _append(node, other, '{"cniVersion": "0.2.0", "name": "nat", "type": "nat"}')
    try:
        path = str(tmp_path / "found.json")
        started = time.monotonic()
        rc, doc, text = node.run("health.yml", "-e", "kubewin_health_report_path=" + path,
                                 "-e", "kubewin_health_load_balancer_wait=%d" % LB_WAIT)
        assert rc == 2, text[-3000:]
        # missing at the first check is a warning (kube-proxy may still be programming them: review-s8 W1); the node
        # was checked again, with the Services read again, and failed once they were missing for LB_WAIT seconds
        assert "Read the cluster's Services again" in _host_tasks(doc)
        assert time.monotonic() - started >= LB_WAIT
        failed = {k: c for k, c in _checks(_report(path)).items() if c["status"] == "fail"}
        (vip,) = [k for k in failed if k.startswith("source VIP endpoint ")]
        assert set(failed) == {vip, "kube-proxy load balancers", "CNI configuration"}, failed
        assert failed["CNI configuration"]["detail"].startswith(
            "C:\\Program Files\\containerd\\cni\\conf\\0-containerd-nat.json sorts before 10-flannel.conf")
        assert "restarts kube-proxy" in failed[vip]["fix"]
    finally:
        os.remove(os.path.join(node.root, "hosts", HOST, "C", *other.split("\\")))
    path = str(tmp_path / "repaired.json")
    rc, doc, text = node.run("repair.yml", "-e", "kubewin_health_report_path=" + path,
                             "-e", "kubewin_health_load_balancer_wait=%d" % LB_WAIT)
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    report = _report(path)
    assert report["healthy"] is True and report["nodes"][0]["repaired"] == ["kube-proxy"]
    assert _checks(report)[vip]["status"] == "ok" and _checks(report)["kube-proxy load balancers"]["status"] == "ok"


def _append(sc, rel, text):
    path = os.path.join(sc.root, "hosts", HOST, "C", *rel.split("\\"))
    with open(path, "a") as f:
        f.write(text)


def test_the_support_bundle_has_what_a_user_needs_and_no_credential(node, tmp_path, api):
    core, _ = api
    credentials = host_credentials(node, HOST) + managed_secret_values(core)
    credentials += [("bootstrap token", t) for t in node.bootstrap_tokens]
    credentials += [("bootstrap token secret", t.split(".")[1]) for t in node.bootstrap_tokens]
    # the lab's kubelet.conf names its client certificate file (kubelet-client-current.pem, key included)
    assert node.bootstrap_tokens and any("PRIVATE KEY" in value for dummy, value in credentials), credentials
    # What a component could log at a high verbosity (a request's headers, a kubeconfig or Secret it read): every
    # credential in the logs the bundle reads, plain and base64, so only the redaction keeps them out (the test fails
    # without it).
    leaked = ""
    for what, value in credentials:
        field = "client-key-data" if "client-key-data" in what else "token"
        leaked += ("I1128 key:\n%s\n" % value if "PRIVATE KEY" in value else
                   "I1128 Authorization: Bearer %s\nI1128 %s: %s\nI1128 %s: %s\n"
                   % (value, field, value, field, base64.b64encode(value.encode()).decode()))
    for rel in ("var\\log\\kubelet\\kubelet.log", "var\\log\\kube-proxy\\kube-proxy.log"):
        _append(node, rel, leaked)
    # a line only the kubelet's log has: the archive must hold it, the task results never (review-s7 B4)
    marker = "I1128 bundle-marker-%s" % os.urandom(6).hex()
    _append(node, "var\\log\\kubelet\\kubelet.log", marker + "\n")
    # System events, one of them a record whose message cannot be formatted, and an empty Application log
    # (winsim/ps/winevents.py: Get-WinEvent as PowerShell's GetEventCommand.cs reads them; review-s7 B2)
    with scenario.core.Host(node.root, HOST).open() as h:
        now = time.time()
        h.state["eventlogs"] = {
            "System": {"sources": ["Service Control Manager", "Disk"], "records": [
                {"time": now - 60, "id": 7036, "level": 4, "provider": "Service Control Manager",
                 "message": "The kubelet service entered the running state."},
                {"time": now - 30, "id": 11, "level": 2, "provider": "Disk", "message": None,
                 "format_error": "The locale specific resource for the desired message is not present"}]},
            "Application": {"sources": [], "records": []}}

    node.reset_ops(HOST)
    rc, doc, text = node.run("support_bundle.yml", "-e", "kubewin_support_bundle_dir=" + str(tmp_path))
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    assert [script for dummy, dummy2, script in node.ops_detailed(HOST)] == ["node_bundle"]
    # what Ansible keeps of each task (the JSON callback's record, as -v, AWX and ARA have it) holds no log text: the
    # host's result names its staging directory, which the archive task removed
    assert marker not in json.dumps(doc) and marker not in text
    (result,) = [task["hosts"][HOST] for play in doc["plays"] for task in play["tasks"]
                 if task["task"]["name"].endswith("Read the node's logs, configuration, services, HNS objects and "
                                                  "events (redacted on the controller)")]
    assert result["files"] and all("text" not in f for f in result["files"]), result["files"][0]
    assert not os.path.exists(result["staging"])
    assert scenario.changed_tasks(doc).get(HOST) is None
    (archive,) = [p for p in os.listdir(str(tmp_path)) if p.endswith(".tar.gz")]
    assert archive.startswith("kubewin-support-bundle-") and archive in text
    assert os.stat(str(tmp_path / archive)).st_mode & 0o777 == 0o600
    with tarfile.open(str(tmp_path / archive)) as tar:
        members = {m.name.split("/", 1)[1]: tar.extractfile(m).read() for m in tar.getmembers()}
    # no credential of the run, plain or base64, anywhere in the bundle (the index included)
    blob = b"\n".join(members.values()).decode("utf-8", "replace")
    leaks = sorted({what for what, needle in needles(credentials) if needle in blob})
    assert not leaks, leaks
    index = json.loads(members["index.json"])
    assert index["schema"] == "kubewin.nodes/support-bundle/v1" and index["hosts"] == [HOST]
    rows = {r["file"] or r["source"] + " " + r["what"]: r for r in index["files"]}
    for name in ("var/log/kubelet/kubelet.log", "var/log/kube-proxy/kube-proxy.log", "var/log/flanneld/flanneld.log"):
        assert rows["%s/node/%s" % (HOST, name)]["what"] == "log (last lines)", sorted(rows)
        assert "%s/node/%s" % (HOST, name) in members, name
    assert rows[HOST + "/node/var/log/kubelet/kubelet.log"]["redacted"] > 0
    assert b"kind: KubeletConfiguration" in members[HOST + "/node/var/lib/kubelet/config.yaml"]
    assert b"enableSystemLogQuery" in members[HOST + "/node/var/lib/kubelet/config.d/50-kubewin-node-log-query.conf"]
    assert b'"name": "flannel.4096"' in members[HOST + "/node/Program Files/containerd/cni/conf/10-flannel.conf"]
    assert HOST + "/node/Program Files/containerd/config.toml" in members
    services = json.loads(members[HOST + "/node/services.json"])
    assert {s: services[s]["status"] for s in services} == {s: "Running" for s in SERVICES}
    assert "kube-log-runner.exe" in services["kubelet"]["image_path"]
    networks = json.loads(members[HOST + "/node/hns/networks.json"])["Output"]
    assert VNI_NETWORK in {n["Name"] for n in networks}
    assert json.loads(members[HOST + "/node/hns/endpoints.json"])["Success"] is True
    (node_object,) = json.loads(members[HOST + "/cluster/node.json"])
    assert node_object["metadata"]["name"] == NODE
    assert {c["type"]: c["status"] for c in node_object["status"]["conditions"]}["Ready"] == "True"
    assert isinstance(json.loads(members[HOST + "/cluster/events.json"]), list)
    assert marker.encode() in members[HOST + "/node/var/log/kubelet/kubelet.log"]
    system = json.loads(members[HOST + "/node/events/System.json"])
    assert [(r["id"], r["message"]) for r in system["records"]] == [
        (11, "Cannot retrieve event message text."), (7036, "The kubelet service entered the running state.")]
    assert system["note"].startswith("read with errors, the first: The locale specific resource")
    assert json.loads(members[HOST + "/node/events/Application.json"]) == {"records": [], "note": None}
    # the lab's containerd 2.x was registered without --log-file (the operator's, not the collection's) and containerd
    # has no event source (review-s8 W3): no event read and no log file
    assert not [m for m in members if m.startswith(HOST + "/node/runtime/")]
    # never read: kubeconfigs, token files, keys and certificates
    sources = " ".join(r["source"] for r in index["files"]).lower()
    for never in ("kubelet.conf", "kubeconfig", "\\token", "pki"):
        assert never not in sources and never.strip("\\") not in " ".join(members).lower(), never


def _client_certificate(sc):
    from cryptography import x509
    path = os.path.join(sc.root, "hosts", HOST, "C", "var", "lib", "kubelet", "pki", "kubelet-client-current.pem")
    with open(path, "rb") as f:
        return x509.load_pem_x509_certificate(f.read())


def test_a_node_off_past_its_old_tokens_and_its_renewal_deadline_reboots_renews_and_is_healthy(node, api, tmp_path):
    """Issue 21 points 2 and 5, "reboot after credential expiry": the node was off far longer than the 7-day tokens
    kube-proxy and flanneld had before (they now run with the kubelet's kubeconfig), and past its client
    certificate's rotation deadline (70-90 % of its life, client-go's certificate manager). It reboots with no
    playbook run (lab/winsim/winsim_boot.py): the simulated kubelet renews its certificate at start through a real
    CSR sent with the certificate it has, which the lab's real kube-controller-manager approves (kubeadm's
    ClusterRoleBinding kubeadm:node-autoapprove-certificate-rotation) and signs; the node is Ready again, kube-proxy
    and flanneld run with the new certificate, and health.yml finds it healthy. Only the host's clock moves (the API
    server's does not): the lapse of time is the simulator's, the CSR, approval and signature are the real control
    plane's."""
    from kubernetes import client
    core, _ = api
    old = _client_certificate(node)
    life = (old.not_valid_after_utc - old.not_valid_before_utc).total_seconds()
    # past the latest rotation deadline (90 %) and before the end of the certificate's life
    offset = old.not_valid_before_utc.timestamp() + 0.95 * life - time.time()
    assert offset > 7 * 86400, "the lab's certificates live %d s: too short to show the old tokens' lapse" % life
    core.patch_node_status(NODE, {"status": {"conditions": [
        {"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
         "message": "Kubelet stopped posting node status."}]}})
    node.reset_ops(HOST)
    scenario.core.edit(node.root, HOST, lambda st: st.update(clock_offset=float(st.get("clock_offset") or 0) + offset))
    try:
        gone, failed = scenario.core.reboot(node.root, HOST)
        assert failed == {} and gone == [VNI_NETWORK]
        st = _state(node)
        assert all(st["services"][s]["status"] == "Running" for s in SERVICES), st["services"]
        assert not [n for n in st.get("notes") or [] if n.startswith("kubelet:")], st.get("notes")
        new = _client_certificate(node)
        assert new.serial_number != old.serial_number and new.not_valid_after_utc > old.not_valid_after_utc
        (csr_record,) = [c for c in st["kubelet_csrs"] if c["what"] == "kubelet client certificate rotation"]
        csr = client.CertificatesV1Api(core.api_client).read_certificate_signing_request(csr_record["name"])
        assert csr.spec.username == "system:node:" + NODE  # sent with the node's own certificate: selfnodeclient
        assert csr.spec.signer_name == "kubernetes.io/kube-apiserver-client-kubelet"
        assert [(c.type, c.reason) for c in csr.status.conditions] == [("Approved", "AutoApproved")]
        proxy = st["processes"]["kube-proxy"]
        assert proxy.get("network_checked") and not proxy.get("sync_error"), proxy
        assert _ready(core) == ("True", "KubeletReady")
        assert node.ops(HOST) == []  # no playbook run, no remote operation

        path = str(tmp_path / "after.json")
        rc, doc, text = node.run("health.yml", "-e", "kubewin_health_report_path=" + path)
        assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
        report = _report(path)
        assert report["healthy"] is True
        assert report["nodes"][0]["certificates"]["kubelet client"] == new.not_valid_after_utc.strftime(
            "%Y-%m-%dT%H:%M:%SZ")
    finally:
        scenario.core.edit(node.root, HOST, lambda st: st.update(clock_offset=float(st["clock_offset"]) - offset))


def _ready(core):
    return next((c.status, c.reason) for c in core.read_node(NODE).status.conditions or [] if c.type == "Ready")
