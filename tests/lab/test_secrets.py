"""Credentials in the lab: none ever reaches Ansible's output or a process command line, the bootstrap
token lives only while a host joins, and reset touches only the Windows nodes the collection joined.

The leak test collects every credential the collection makes or reads: bootstrap tokens (watched while
the playbooks run, since they are deleted again), any ServiceAccount token Secrets it manages, the
per-node kube-proxy and flanneld tokens in their token files and the kubelet's client key on the
simulated host. It then
looks for each, plain and base64, in the output of scale-up, a re-run, an upgrade and reset, all at
-vvvv with --diff, with the JSON callback (every result, as AWX stores it) and the default one."""

import base64
import datetime
import json
import os
import re
import threading
import time

import pytest
import requests
import scenario
import yaml
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException
from winsim import core as winsim

TOKEN_TYPE = "type=bootstrap.kubernetes.io/token"
MANAGED = "kubewin.nodes/managed=true"
NOT_SECRET_KEYS = {"ca.crt", "namespace"}  # in a service-account-token Secret, next to the token


def b64(text):
    return base64.b64encode(text.encode() if isinstance(text, str) else text).decode()


class TokenWatcher(object):
    """Polls the bootstrap-token Secrets while playbooks run: {name: (token, first seen, last seen)}."""

    def __init__(self, core):
        self.core = core
        self.seen = {}
        self.current = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            try:
                items = self.core.list_namespaced_secret("kube-system", field_selector=TOKEN_TYPE).items
            except Exception:  # a transient API error: try again
                items = []
            now = time.monotonic()
            self.current = set()
            for s in items:
                data = {k: base64.b64decode(v).decode() for k, v in (s.data or {}).items()}
                token = "%s.%s" % (data.get("token-id"), data.get("token-secret"))
                first = self.seen.get(s.metadata.name, (token, now, now))[1]
                self.seen[s.metadata.name] = (token, first, now)
                self.current.add(s.metadata.name)
            self._stop.wait(0.2)

    def __enter__(self):
        self._thread.start()
        time.sleep(0.5)
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(5)

    def names(self):
        return set(self.seen)


def managed_secret_values(core):
    """Every secret value of the Secrets the collection manages (ServiceAccount tokens): plain and base64."""
    found = []
    for s in core.list_secret_for_all_namespaces(label_selector=MANAGED).items:
        for key, value in (s.data or {}).items():
            if key not in NOT_SECRET_KEYS and s.type != "bootstrap.kubernetes.io/token":
                found.append(("%s/%s %s" % (s.metadata.namespace, s.metadata.name, key), value))
    return found


def host_credentials(sc, host):
    """Tokens in the node components' kubeconfigs and token files, and private keys in the kubelet's and kubeadm's
    files."""
    found = []
    drive = os.path.join(sc.root, "hosts", host, "C")
    for rel in (("etc", "kube-proxy", "kubeconfig"), ("etc", "kube-flannel", "kubeconfig"),
                ("etc", "kubernetes", "kubelet.conf"), ("etc", "kubernetes", "bootstrap-kubelet.conf")):
        path = os.path.join(drive, *rel)
        if not os.path.exists(path):
            continue
        with open(path) as f:
            doc = yaml.safe_load(f)
        for user in doc.get("users") or []:
            u = user.get("user") or {}
            for key in ("token", "client-key-data"):
                if u.get(key):
                    found.append(("%s %s" % ("\\".join(rel), key), u[key]))
    for rel in (("etc", "kube-proxy", "token"), ("etc", "kube-flannel", "token")):
        path = os.path.join(drive, *rel)
        if os.path.exists(path):
            with open(path) as f:
                found.append(("\\".join(rel), f.read()))
    for d in (("var", "lib", "kubelet", "pki"), ("etc", "kubernetes", "pki")):
        top = os.path.join(drive, *d)
        for dirpath, _dirs, files in os.walk(top):
            for name in files:
                with open(os.path.join(dirpath, name), "rb") as f:
                    text = f.read().decode("ascii", "replace")
                for block in re.findall(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.+?-----END [A-Z ]*PRIVATE KEY-----",
                                        text, re.S):
                    found.append((name + " private key", block))
    return found


def needles(credentials):
    """(what, string) pairs to look for: each credential plain and base64; for a PEM key, also each
    line of its base64 body (what a log would show of it)."""
    out = []
    for what, value in credentials:
        out += [(what, value), (what + " (base64)", b64(value))]
        if "PRIVATE KEY" in value:
            out += [(what + " (PEM line)", line) for line in value.splitlines()[1:-1] if len(line) >= 24]
    return out


@pytest.fixture
def old_version():
    with open(os.path.join(scenario.LAB, "controlplane", "UPGRADE_FROM")) as f:
        return f.read().strip()


def test_no_credential_in_any_output_and_the_bootstrap_token_lives_only_while_hosts_join(tmp_path, api,
                                                                                          old_version):
    core, _ = api
    sc = scenario.Scenario(tmp_path, nodes=1, kubewin_node_name="lk-{{ inventory_hostname }}",
                           kube_version=old_version)
    outputs = {}
    credentials = []
    with TokenWatcher(core) as watch:
        before = watch.names()
        # 1. fresh scale-up: the only run that makes a bootstrap token
        rc, doc, text = sc.run("scale_up.yml", "-vvvv", "--diff")
        outputs["scale-up"] = text
        assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
        time.sleep(1)
        made = watch.names() - before
        assert len(made) == 1, "expected one bootstrap token for the run, saw %s" % sorted(made)
        assert not (watch.current & made), "the bootstrap token made by the run is still there after it"
        credentials += [("bootstrap token " + n, watch.seen[n][0]) for n in made]
        credentials += [("bootstrap token secret " + n, watch.seen[n][0].split(".")[1]) for n in made]
        credentials += managed_secret_values(core) + host_credentials(sc, "win-1")
        assert any("PRIVATE KEY" in v for _, v in credentials), "the kubelet's client key was not found"
        assert any(w.startswith("etc\\kube-proxy") for w, _ in credentials), "kube-proxy's token was not found"
        # flanneld has no token of its own: it runs with the kubelet's credential (its client key is checked above)
        assert not any(w.startswith("etc\\kube-flannel") for w, _ in credentials), credentials
        # the JoinConfiguration that carried the token is gone; no command line ever had it
        assert "C:\\k\\kubewin-join.yaml" not in sc.dump("win-1")["files"]
        lines = winsim.command_lines(sc.root, "win-1")
        joins = [c for c in lines if " join " in c]
        assert joins == ["C:\\k\\kubeadm.exe join --config C:\\k\\kubewin-join.yaml"], joins

        # 2. a re-run and 3. an upgrade: no bootstrap token at all
        seen = watch.names()
        rc, doc, text = sc.run("scale_up.yml", "-vvvv", "--diff", callback="ansible.builtin.default")
        outputs["re-run (default callback)"] = text
        assert rc == 0, text[-3000:]
        sc.set_vars(kubewin_node_name="lk-{{ inventory_hostname }}", kube_version=scenario.lab_version())
        rc, doc, text = sc.run("upgrade.yml", "-vvvv", "--diff")
        outputs["upgrade"] = text
        assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
        time.sleep(1)
        assert watch.names() == seen, "a bootstrap token was made by a re-run or upgrade: %s" % (
            sorted(watch.names() - seen))
    credentials += managed_secret_values(core) + host_credentials(sc, "win-1")
    credentials += [("cluster bootstrap token " + n, t) for n, (t, _a, _b) in watch.seen.items()]
    lines = winsim.command_lines(sc.root, "win-1")

    # 4. reset
    rc, doc, text = sc.run("reset.yml", "-vvvv", "--diff", "-e", "skip_confirmation=true",
                           callback="ansible.builtin.default")
    outputs["reset (default callback)"] = text
    assert rc == 0, text[-3000:]

    # what the Windows side received: each module run's invocation.module_args as Ansible.Basic echoes it
    # in the result and hands it to the cmdlets module logging (4103) records (security-2 N2); the secret
    # files arrive sealed to the host's transport key, so only ciphertext is there
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_module
    received = winsim_module.module_args_records(sc.root, "win-1")
    sealed_files = [f for r in received if r["module"] == "win_powershell"
                    for f in (r["module_args"].get("parameters") or {}).get("Files") or []
                    if isinstance(f, dict) and str(f.get("content", "")).startswith("sealed.")]
    sealed_paths = sorted({f["path"] for f in sealed_files})
    assert set(sealed_paths) >= {"C:\\k\\kubewin-join.yaml", "C:\\etc\\kube-proxy\\token"}, sealed_paths
    received = [json.dumps(r, sort_keys=True) for r in received]

    leaks = []
    for what, needle in needles(credentials):
        for run, out in outputs.items():
            if needle in out:
                leaks.append("%s in the output of %s" % (what, run))
        if any(needle in c for c in lines):
            leaks.append("%s on a process command line" % what)
        if any(needle in r for r in received):
            leaks.append("%s in a module's arguments on the Windows host (invocation.module_args, event 4103)" % what)
    assert not leaks, "\n".join(sorted(set(leaks)))


def test_reset_leaves_a_windows_node_it_did_not_join_alone(tmp_path, api):
    core, _ = api
    sc = scenario.Scenario(tmp_path, nodes=1, kubewin_node_name="fw-{{ inventory_hostname }}")
    # made after the Scenario, which deletes Nodes of its names left over by earlier runs
    body = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "fw-win-1", "labels": {"kubernetes.io/os": "windows"},
                         "annotations": {"kwok.x-k8s.io/node": "fake"}}}
    core.create_node(body)
    try:
        rc, doc, text = sc.run("reset.yml", "-e", "skip_confirmation=true")
        assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
        node = core.read_node("fw-win-1")
        assert not node.spec.unschedulable, "reset cordoned a Windows node it did not join"
        assert "Node fw-win-1 was left alone" in text
        assert "node-restriction.kubernetes.io/kubewin-managed=true" in text
    finally:
        try:
            core.delete_node("fw-win-1")
        except ApiException as e:
            if e.status != 404:
                raise


def test_a_kubelet_can_neither_set_nor_remove_the_ownership_label(api):
    """security-2 N4: the labels reset trusts (roles/control_plane/vars/main.yml) include one the real API
    server's NodeRestriction forbids a kubelet to set or remove on its own Node (v1.37.2
    plugin/pkg/admission/noderestriction/admission.go, admitNode and getForbiddenLabels), while the older
    kubewin.nodes/managed label any kubelet may write (why it is no proof of ownership)."""
    core, _ = api
    with open(os.path.join(scenario.REPO, "roles", "control_plane", "vars", "main.yml")) as f:
        owned = yaml.safe_load(f)["_kubewin_owned_node_labels"]
    linux = "own-linux-1"  # a Node of its own (the lab's control plane registers none), as a kubelet makes it
    try:
        core.delete_node(linux)  # left over by an interrupted run
    except ApiException as e:
        if e.status != 404:
            raise
    core.create_node({"apiVersion": "v1", "kind": "Node",
                      "metadata": {"name": linux, "labels": {"kubernetes.io/os": "linux"},
                                   "annotations": {"kwok.x-k8s.io/node": "fake"}}})
    try:
        admin = config.new_client_from_config(config_file=scenario.ADMIN_CONF)
        kubelet = config.new_client_from_config(config_file=scenario.ADMIN_CONF)
        kubelet.set_default_header("Impersonate-User", "system:node:" + linux)
        kubelet.set_default_header("Impersonate-Group", "system:nodes")
        as_admin, as_kubelet = client.CoreV1Api(admin), client.CoreV1Api(kubelet)

        def patch(api_, labels):
            try:
                api_.patch_node(linux, {"metadata": {"labels": labels}})
                return 200
            except ApiException as e:
                return e.status

        assert patch(as_kubelet, {"kubewin.nodes/managed": "true"}) == 200, "the older label is node-writable"
        assert patch(as_kubelet, {"kubewin.nodes/managed": None}) == 200
        guarded = [key for key in owned if key.startswith("node-restriction.kubernetes.io/")]
        assert guarded, "no ownership label is one NodeRestriction guards: %s" % sorted(owned)
        for key in guarded:
            assert patch(as_kubelet, {key: owned[key]}) == 403, "a kubelet set %s on its own Node" % key
            assert key not in (as_admin.read_node(linux).metadata.labels or {})
            assert patch(as_admin, {key: owned[key]}) == 200  # the collection (admin.conf) can
            assert patch(as_kubelet, {key: None}) == 403, "a kubelet removed %s from its own Node" % key
            assert patch(as_kubelet, {key: "false"}) == 403
            assert (as_admin.read_node(linux).metadata.labels or {}).get(key) == owned[key]
    finally:
        core.delete_node(linux)


# --- per-node credentials of kube-proxy and flanneld ----------------------------------------------
def token_on(sc, host, component):
    folder = {"kube-proxy": "kube-proxy"}[component]
    with open(os.path.join(sc.root, "hosts", host, "C", "etc", folder, "token")) as f:
        return f.read()


def claims(token):
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


class AsToken(object):
    """Requests to the lab API server with a bearer token, verified against the lab's CA."""

    def __init__(self, tmp_path):
        with open(scenario.ADMIN_CONF) as f:
            cluster = yaml.safe_load(f)["clusters"][0]["cluster"]
        self.server = cluster["server"]
        self.ca = str(tmp_path / "ca.crt")
        with open(self.ca, "wb") as f:
            f.write(base64.b64decode(cluster["certificate-authority-data"]))

    def __call__(self, token, method, path, body=None):
        headers = {"Authorization": "Bearer " + token}
        if body is not None:
            headers["Content-Type"] = "application/merge-patch+json"
        r = requests.request(method, self.server + path, headers=headers, verify=self.ca, timeout=15,
                             data=json.dumps(body) if body is not None else None)
        return r.status_code

    def can(self, token, verb, group, resource, subresource, name):
        """Whether the token's user may do this, as the API server's authorizers answer a
        SelfSubjectAccessReview (which any authenticated user may create: system:basic-user)."""
        attrs = {"verb": verb, "group": group, "resource": resource, "subresource": subresource, "name": name,
                 "namespace": "kube-system" if resource in ("serviceaccounts", "pods", "secrets", "events") else ""}
        r = requests.post(self.server + "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", verify=self.ca,
                          timeout=15, headers={"Authorization": "Bearer " + token},
                          json={"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                                "spec": {"resourceAttributes": attrs}})
        assert r.status_code == 201, r.text
        return r.json()["status"].get("allowed", False)


def authenticated(token):
    auth = client.AuthenticationV1Api(config.new_client_from_config(config_file=scenario.ADMIN_CONF))
    review = auth.create_token_review({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
                                       "spec": {"token": token}})
    return review.status.authenticated


def managed_rbac(node):
    """Names of the ServiceAccounts, ClusterRoles and ClusterRoleBindings made for ``node``."""
    api_client = config.new_client_from_config(config_file=scenario.ADMIN_CONF)
    core, rbac = client.CoreV1Api(api_client), client.RbacAuthorizationV1Api(api_client)
    found = []
    for kind, items in (("sa", core.list_service_account_for_all_namespaces(label_selector=MANAGED).items),
                        ("role", rbac.list_cluster_role(label_selector=MANAGED).items),
                        ("binding", rbac.list_cluster_role_binding(label_selector=MANAGED).items)):
        found += ["%s %s" % (kind, o.metadata.name) for o in items
                  if (o.metadata.annotations or {}).get("kubewin.nodes/node") == node]
    return sorted(found)


def flanneld_credential(sc, host, tmp_path):
    """Requests to the lab API server with the credential flanneld's service runs with: the kubeconfig its NSSM
    AppParameters name (--kubeconfig-file), read as client-go reads it (its client certificate and key files)."""
    dumped = sc.dump(host)
    text = json.dumps({"services": dumped["services"].get("flanneld"), "registry": dumped["registry"]})
    found = re.search(r"--kubeconfig-file=([^\s\"]+)", text)
    assert found, "flanneld's service names no --kubeconfig-file: %s" % text
    path = found.group(1).replace("\\\\", "\\")
    assert path == "C:\\etc\\kubernetes\\kubelet.conf", path

    def local(win_path):
        return os.path.join(sc.root, "hosts", host, "C", *win_path[3:].split("\\"))

    with open(local(path)) as f:
        user = yaml.safe_load(f)["users"][0]["user"]
    assert "token" not in user and "tokenFile" not in user, user
    cert, key = str(tmp_path / "flanneld.crt"), str(tmp_path / "flanneld.key")
    for src, dst in ((user["client-certificate"], cert), (user["client-key"], key)):
        with open(local(src), "rb") as f, open(dst, "wb") as out:
            out.write(f.read())
    with open(scenario.ADMIN_CONF) as f:
        cluster = yaml.safe_load(f)["clusters"][0]["cluster"]
    ca = str(tmp_path / "ca.crt")
    with open(ca, "wb") as f:
        f.write(base64.b64decode(cluster["certificate-authority-data"]))

    def call(method, path_, body=None):
        headers = {"Content-Type": "application/strategic-merge-patch+json"} if body is not None else {}
        r = requests.request(method, cluster["server"] + path_, headers=headers, verify=ca, cert=(cert, key),
                             timeout=15, data=json.dumps(body) if body is not None else None)
        return r.status_code
    return call


def plant_old_flanneld_layout(sc, host, node):
    """What an older release left for flanneld: ServiceAccount kubewin-flanneld-<node> with a Node-bound token in
    C:\\etc\\kube-flannel\\token (and a kubeconfig naming it), a ClusterRole that may patch the Node's status and a
    binding to the ServiceAccount. Returns the token."""
    api_client = config.new_client_from_config(config_file=scenario.ADMIN_CONF)
    core, rbac = client.CoreV1Api(api_client), client.RbacAuthorizationV1Api(api_client)
    name = "kubewin-flanneld-" + node
    meta = {"name": name, "labels": {"kubewin.nodes/managed": "true"}, "annotations": {"kubewin.nodes/node": node}}
    core.create_namespaced_service_account("kube-flannel", {"metadata": meta, "automountServiceAccountToken": False})
    rbac.patch_cluster_role(name, {"rules": [
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["patch"], "resourceNames": [node]}]})
    rbac.patch_cluster_role_binding(name, {"subjects": [
        {"kind": "ServiceAccount", "name": name, "namespace": "kube-flannel"}]})
    uid = core.read_node(node).metadata.uid
    answer = core.create_namespaced_service_account_token(name, "kube-flannel", {"spec": {
        "expirationSeconds": 3600, "boundObjectRef": {"kind": "Node", "apiVersion": "v1", "name": node, "uid": uid}}})
    token = answer.status.token
    folder = os.path.join(sc.root, "hosts", host, "C", "etc", "kube-flannel")
    with open(os.path.join(folder, "token"), "w") as f:
        f.write(token)
    with open(os.path.join(folder, "kubeconfig"), "w") as f:
        f.write(json.dumps({"users": [{"name": name, "user": {"tokenFile": "C:\\etc\\kube-flannel\\token"}}]}))
    return token


def age_token_record(core, namespace, name, issued_days_ago, expires_in_days):
    """Rewrite what the last run recorded about a ServiceAccount's token (not the token itself), as if it
    had been issued earlier: the next run decides from this record alone."""
    now = datetime.datetime.now(datetime.timezone.utc)
    fmt = "%Y-%m-%dT%H:%M:%SZ"
    core.patch_namespaced_service_account(name, namespace, {"metadata": {"annotations": {
        "kubewin.nodes/token-issued": (now - datetime.timedelta(days=issued_days_ago)).strftime(fmt),
        "kubewin.nodes/token-expires": (now + datetime.timedelta(days=expires_in_days)).strftime(fmt)}}})


def test_each_windows_node_has_its_own_least_privileged_renewable_credentials(tmp_path, api):
    core, _ = api
    as_token = AsToken(tmp_path)
    sc = scenario.Scenario(tmp_path, nodes=2, kubewin_node_name="pc-{{ inventory_hostname }}")
    rc, doc, text = sc.run("scale_up.yml")
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    tokens = {(h, c): token_on(sc, h, c) for h in sc.hosts for c in ("kube-proxy",)}

    # 1. kube-proxy: two different identities, each bound to its own Node object (name and uid)
    assert len(set(tokens.values())) == 2
    subjects = {k: claims(t)["sub"] for k, t in tokens.items()}
    assert subjects[("win-2", "kube-proxy")] == "system:serviceaccount:kube-system:kubewin-kube-proxy-pc-win-2"
    assert len(set(subjects.values())) == 2
    for (host, _c), token in tokens.items():
        node = core.read_node("pc-" + host)
        bound = claims(token)["kubernetes.io"]["node"]
        assert bound == {"name": node.metadata.name, "uid": node.metadata.uid}
        assert claims(token)["exp"] - claims(token)["iat"] == 604800  # kubewin_node_token_expiration_seconds
    # the kubeconfigs name the token file, they do not hold the token
    kubeconfig = yaml.safe_load(open(os.path.join(sc.root, "hosts", "win-1", "C", "etc", "kube-proxy", "kubeconfig")))
    assert kubeconfig["users"][0]["user"] == {"tokenFile": "C:\\etc\\kube-proxy\\token"}
    # no shared token Secret any more
    assert managed_secret_values(core) == []

    # 2. least RBAC, checked with real requests (dry run: authorization and admission run, nothing is stored)
    proxy_1 = tokens[("win-1", "kube-proxy")]
    patch = {"metadata": {"annotations": {"kubewin.test/probe": "1"}}}
    # flanneld runs as the node, with the credential flanneld's service names: NodeRestriction applies
    # (security-2.md N1: a flanneld token could set node-restriction.kubernetes.io/ labels on its Node)
    as_flanneld = flanneld_credential(sc, "win-1", tmp_path)
    label = {"metadata": {"labels": {"node-restriction.kubernetes.io/probe": "1"}}}
    assert as_flanneld("PATCH", "/api/v1/nodes/pc-win-1/status?dryRun=All", label) == 403
    assert as_flanneld("PATCH", "/api/v1/nodes/pc-win-2/status?dryRun=All",
                       {"metadata": {"labels": {"kubewin.test/probe": "1"}}}) == 403
    assert as_flanneld("PATCH", "/api/v1/nodes/pc-win-1/status?dryRun=All",
                       {"metadata": {"annotations": {"flannel.alpha.coreos.com/public-ip": "10.0.0.10"}}}) == 200
    assert as_flanneld("GET", "/api/v1/nodes") == 200  # flannel's node informer lists every Node
    assert as_flanneld("GET", "/api/v1/namespaces/kube-flannel/pods") == 403
    assert as_token(proxy_1, "GET", "/apis/discovery.k8s.io/v1/endpointslices") == 200
    assert as_token(proxy_1, "PATCH", "/api/v1/nodes/pc-win-1/status?dryRun=All", patch) == 403
    assert as_token(proxy_1, "GET", "/api/v1/namespaces/kube-system/secrets") == 403
    # kube-proxy's identity reads what kube-proxy v1.37 watches and changes no Node (security-2 N1 for kube-proxy;
    # issue 20 item 5): cmd/kube-proxy/app/server.go lists/watches Services, EndpointSlices, ServiceCIDRs
    # (MultiCIDRServiceAllocator) and its own Node (pkg/proxy/node.go, field selector metadata.name) and posts
    # events.k8s.io Events; kubeadm's system:node-proxier grants exactly that (bootstrappolicy/policy.go)
    labels = {"metadata": {"labels": {"node-restriction.kubernetes.io/probe": "1", "kubewin.test/probe": "1"}}}
    for path in ("/api/v1/nodes/pc-win-1?dryRun=All", "/api/v1/nodes/pc-win-1/status?dryRun=All",
                 "/api/v1/nodes/pc-win-2/status?dryRun=All"):
        assert as_token(proxy_1, "PATCH", path, labels) == 403, path
    assert as_token(proxy_1, "DELETE", "/api/v1/nodes/pc-win-1?dryRun=All") == 403
    for path in ("/api/v1/services", "/api/v1/nodes?fieldSelector=metadata.name%3Dpc-win-1", "/api/v1/nodes/pc-win-1",
                 "/apis/networking.k8s.io/v1/servicecidrs"):
        assert as_token(proxy_1, "GET", path) == 200, path
    for path in ("/api/v1/namespaces/kube-system/configmaps", "/api/v1/pods",
                 "/api/v1/namespaces/kube-system/serviceaccounts"):
        assert as_token(proxy_1, "GET", path) == 403, path
    allowed = {("watch", "discovery.k8s.io", "endpointslices", "", ""), ("watch", "", "services", "", ""),
               ("create", "events.k8s.io", "events", "", ""), ("watch", "", "nodes", "", "")}
    denied = {("patch", "", "nodes", "status", "pc-win-1"), ("update", "", "nodes", "", "pc-win-1"),
              ("create", "", "serviceaccounts", "token", "kubewin-kube-proxy-pc-win-1"),
              ("create", "certificates.k8s.io", "certificatesigningrequests", "", ""),
              ("create", "", "pods", "", ""), ("get", "", "secrets", "", "")}
    for review in allowed | denied:
        assert as_token.can(proxy_1, *review) is (review in allowed), review

    # 3. a re-run changes nothing; a token with less than half its life left is renewed, alone; the same run
    # retires flanneld's token layout of older releases (ServiceAccount, RBAC, token file and kubeconfig)
    rc, doc, text = sc.run("scale_up.yml")
    assert rc == 0 and scenario.changed_tasks(doc) == {}, scenario.changed_tasks(doc)
    age_token_record(core, "kube-system", "kubewin-kube-proxy-pc-win-1", issued_days_ago=5, expires_in_days=2)
    old_flannel_token = plant_old_flanneld_layout(sc, "win-1", "pc-win-1")
    assert as_token(old_flannel_token, "PATCH", "/api/v1/nodes/pc-win-1/status?dryRun=All", label) == 200
    rc, doc, text = sc.run("scale_up.yml")
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    renewed = {k: token_on(sc, *k) for k in tokens}
    assert renewed[("win-1", "kube-proxy")] != tokens[("win-1", "kube-proxy")]
    assert {k: v for k, v in renewed.items() if k != ("win-1", "kube-proxy")} == {
        k: v for k, v in tokens.items() if k != ("win-1", "kube-proxy")}
    assert as_token(renewed[("win-1", "kube-proxy")], "GET", "/apis/discovery.k8s.io/v1/endpointslices") == 200
    assert all(s["changed"] == 0 for h, s in doc["stats"].items() if h != "win-1" and h.startswith("win")), \
        doc["stats"]
    drive = os.path.join(sc.root, "hosts", "win-1", "C", "etc", "kube-flannel")
    assert not os.path.exists(os.path.join(drive, "token")) and not os.path.exists(os.path.join(drive, "kubeconfig"))
    assert not authenticated(old_flannel_token), "the old flanneld token still authenticates"
    assert as_flanneld("PATCH", "/api/v1/nodes/pc-win-1/status?dryRun=All", label) == 403
    rc, doc, text = sc.run("scale_up.yml")
    assert rc == 0 and scenario.changed_tasks(doc) == {}, scenario.changed_tasks(doc)

    # 4. reset deletes the ServiceAccounts and RBAC it made: the tokens stop working
    assert managed_rbac("pc-win-1") == ["binding kubewin-flanneld-pc-win-1", "binding kubewin-kube-proxy-pc-win-1",
                                        "role kubewin-flanneld-pc-win-1", "sa kubewin-kube-proxy-pc-win-1"]
    rc, doc, text = sc.run("reset.yml", "-e", "skip_confirmation=true")
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    assert managed_rbac("pc-win-1") == [] and managed_rbac("pc-win-2") == []
    for token in renewed.values():
        assert not authenticated(token)


def _credentials_module(core, mod, name):
    """A fresh fake Node ``name`` and a stand-in AnsibleModule for k8s_node_credentials on it, with the module's own
    defaults for every option the test does not set (kube-proxy only, one hour)."""
    try:
        core.delete_node(name)
    except ApiException as e:
        if e.status != 404:
            raise
    core.create_node({"apiVersion": "v1", "kind": "Node", "metadata": {
        "name": name, "annotations": {"kwok.x-k8s.io/node": "fake"}}})

    class Module(object):
        check_mode = False
        params = dict({k: v.get("default") for k, v in mod.argument_spec().items()},
                      node_name=name, namespaces={}, expiration_seconds=3600, renew_fraction=0.5,
                      token_files_sha512={}, shared_secrets=[], state="present")
        warnings = []

        def warn(self, text):
            self.warnings.append(text)

    return Module()


def test_a_node_bound_token_dies_with_its_node(tmp_path, api):
    """The lab's API server (v1.37) binds tokens to Node objects: deleting the Node revokes them."""
    from ansible_collections.kubewin.nodes.plugins.modules import k8s_node_credentials as mod

    core, _ = api
    name = "nb-bound-node"
    module = _credentials_module(core, mod, name)
    apis = mod.build_apis({"kubeconfig": scenario.ADMIN_CONF})
    try:
        result = mod.present(module, apis)
        assert result["bound"] is True and module.warnings == []
        token = result["tokens"]["kube-proxy"]
        assert authenticated(token)
        core.delete_node(name)
        for _ in range(50):  # the Node's deletion reaches the authenticator's informer
            if not authenticated(token):
                break
            time.sleep(0.2)
        assert not authenticated(token), "a token bound to a deleted Node still authenticates"
    finally:
        module.params["state"] = "absent"
        mod.absent(module, apis)


def test_a_token_file_others_could_read_is_revoked_on_renewal(tmp_path, api):
    """security-2 N5, against the lab's real API server: when the token file's access rules were opened, the
    run makes the ServiceAccount again before the new TokenRequest, so the token others may have copied stops
    authenticating at once instead of living until it expires. The module is called as the network role calls
    it (no playbook run)."""
    from ansible_collections.kubewin.nodes.plugins.module_utils import _node_credentials as nc
    from ansible_collections.kubewin.nodes.plugins.modules import k8s_node_credentials as mod

    core, _ = api
    name = "rv-revoke-node"
    module = _credentials_module(core, mod, name)
    apis = mod.build_apis({"kubeconfig": scenario.ADMIN_CONF})
    try:
        old = mod.present(module, apis)["tokens"]["kube-proxy"]
        assert authenticated(old)
        module.params["token_files_sha512"] = {"kube-proxy": nc.OPEN_ACL}
        new = mod.present(module, apis)["tokens"]["kube-proxy"]
        assert new != old and authenticated(new)
        for _ in range(50):  # the authenticator reads the account through its informer
            if not authenticated(old):
                break
            time.sleep(0.2)
        assert not authenticated(old), "the token a renewal replaced because others could read it still works"
    finally:
        module.params["state"] = "absent"
        mod.absent(module, apis)
        core.delete_node(name)
