"""Credentials in the lab: none ever reaches Ansible's output or a process command line, the bootstrap
token lives only while a host joins, and reset touches only the Windows nodes the collection joined.

The leak test collects every credential the collection makes or reads: bootstrap tokens (watched while
the playbooks run, since they are deleted again), any ServiceAccount token Secrets it manages, any token file an
older release left for kube-proxy or flanneld, and the kubelet's client key on the simulated host (which kube-proxy
and flanneld run with). It then
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
        # kube-proxy and flanneld have no token of their own: they run with the kubelet's credential (its client key
        # is checked above)
        assert not any(w.startswith(("etc\\kube-proxy", "etc\\kube-flannel")) for w, _ in credentials), credentials
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
    assert set(sealed_paths) >= {"C:\\k\\kubewin-join.yaml"}, sealed_paths
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


# The token and kubeconfig files earlier releases wrote for kube-proxy and flanneld (lower case, as dumped).
RETIRED_FILES = {"c:\\etc\\kube-proxy\\token", "c:\\etc\\kube-proxy\\kubeconfig", "c:\\etc\\kube-flannel\\token",
                 "c:\\etc\\kube-flannel\\kubeconfig"}


def service_kubeconfig(sc, host, service):
    """The kubeconfig a node component's service runs with, from its command line (kube-proxy's ImagePath,
    --kubeconfig) or NSSM's AppParameters (flanneld, --kubeconfig-file)."""
    dumped = sc.dump(host)
    text = json.dumps({"services": dumped["services"].get(service), "registry": dumped["registry"]})
    flag = "--kubeconfig-file" if service == "flanneld" else "--kubeconfig"
    found = re.search(flag + r"=([^\s\"]+)", text)
    assert found, "%s's service names no %s: %s" % (service, flag, text)
    return found.group(1).replace("\\\\", "\\")


def node_credential(sc, host, tmp_path, service="flanneld"):
    """Requests to the lab API server with the credential a node component's service runs with (flanneld's and
    kube-proxy's: the kubelet's kubeconfig), read as client-go reads it (its client certificate and key files)."""
    path = service_kubeconfig(sc, host, service)
    assert path == "C:\\etc\\kubernetes\\kubelet.conf", (service, path)

    def local(win_path):
        return os.path.join(sc.root, "hosts", host, "C", *win_path[3:].split("\\"))

    with open(local(path)) as f:
        user = yaml.safe_load(f)["users"][0]["user"]
    assert "token" not in user and "tokenFile" not in user, user
    cert, key = str(tmp_path / (service + ".crt")), str(tmp_path / (service + ".key"))
    for src, dst in ((user["client-certificate"], cert), (user["client-key"], key)):
        with open(local(src), "rb") as f, open(dst, "wb") as out:
            out.write(f.read())
    with open(scenario.ADMIN_CONF) as f:
        cluster = yaml.safe_load(f)["clusters"][0]["cluster"]
    ca = str(tmp_path / "ca.crt")
    with open(ca, "wb") as f:
        f.write(base64.b64decode(cluster["certificate-authority-data"]))

    def call(method, path_, body=None):
        content = "application/json" if method == "POST" else "application/strategic-merge-patch+json"
        headers = {"Content-Type": content} if body is not None else {}
        r = requests.request(method, cluster["server"] + path_, headers=headers, verify=ca, cert=(cert, key),
                             timeout=15, data=json.dumps(body) if body is not None else None)
        return r.status_code

    def can(verb, group, resource, subresource="", name="", namespace=""):
        """Whether this identity may, as the API server's authorizers (Node, then RBAC) answer its
        SelfSubjectAccessReview."""
        attrs = {"verb": verb, "group": group, "resource": resource, "subresource": subresource, "name": name,
                 "namespace": namespace}
        r = requests.post(cluster["server"] + "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", verify=ca,
                          cert=(cert, key), timeout=15,
                          json={"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                                "spec": {"resourceAttributes": attrs}})
        assert r.status_code == 201, r.text
        return r.json()["status"].get("allowed", False)

    call.can = can
    return call


def flanneld_credential(sc, host, tmp_path):
    return node_credential(sc, host, tmp_path, "flanneld")


def kube_proxy_record(sc, host, relist=False):
    """The simulated kube-proxy's process record (winsim_node): ``synced`` or ``sync_error`` from its lists through
    the real API server with its kubeconfig; ``relist`` makes its informers list again first."""
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_node
    with winsim.Host(sc.root, host).open(save=relist) as h:
        if relist:
            winsim_node.kube_proxy_list(h)
        return dict(winsim_node.processes(h.state).get("kube-proxy") or {})


def until(check, seconds=15):
    """Poll ``check`` (RBAC and the authenticator read through informers: a change takes a moment)."""
    for _ in range(int(seconds / 0.2)):
        if check():
            return True
        time.sleep(0.2)
    return check()


def _old_service_account_token(name, namespace, node, seconds):
    """The ServiceAccount an older release made for a node component (its labels and node annotation) and a token
    bound to that Node, as that release issued it. Returns (RbacAuthorizationV1Api, token)."""
    api_client = config.new_client_from_config(config_file=scenario.ADMIN_CONF)
    core = client.CoreV1Api(api_client)
    meta = {"name": name, "labels": {"kubewin.nodes/managed": "true"}, "annotations": {"kubewin.nodes/node": node}}
    core.create_namespaced_service_account(namespace, {"metadata": meta, "automountServiceAccountToken": False})
    uid = core.read_node(node).metadata.uid
    answer = core.create_namespaced_service_account_token(name, namespace, {"spec": {
        "expirationSeconds": seconds, "boundObjectRef": {"kind": "Node", "apiVersion": "v1", "name": node,
                                                         "uid": uid}}})
    return client.RbacAuthorizationV1Api(api_client), answer.status.token


def plant_old_kube_proxy_layout(sc, host, node):
    """What the previous release left for kube-proxy: ServiceAccount kubewin-kube-proxy-<node> with a Node-bound
    token in C:\\etc\\kube-proxy\\token, a kubeconfig naming it (tokenFile), the binding to system:node-proxier
    naming the ServiceAccount, and kube-proxy's service running with that kubeconfig. Returns the token."""
    name = "kubewin-kube-proxy-" + node
    rbac, token = _old_service_account_token(name, "kube-system", node, 604800)
    rbac.patch_cluster_role_binding(name, {"subjects": [
        {"kind": "ServiceAccount", "name": name, "namespace": "kube-system"}]})
    folder = os.path.join(sc.root, "hosts", host, "C", "etc", "kube-proxy")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "token"), "w") as f:
        f.write(token)
    with open(scenario.ADMIN_CONF) as f:
        cluster = yaml.safe_load(f)["clusters"][0]
    with open(os.path.join(folder, "kubeconfig"), "w") as f:
        yaml.safe_dump({"apiVersion": "v1", "kind": "Config", "clusters": [cluster],
                        "contexts": [{"name": "default", "context": {"cluster": cluster["name"], "user": name}}],
                        "current-context": "default",
                        "users": [{"name": name, "user": {"tokenFile": "C:\\etc\\kube-proxy\\token"}}]}, f)

    def old_command_line(state):
        svc = state["services"]["kube-proxy"]
        svc["image_path"] = svc["image_path"].replace("--kubeconfig=C:\\etc\\kubernetes\\kubelet.conf",
                                                      "--kubeconfig=C:\\etc\\kube-proxy\\kubeconfig")
        (state.get("processes") or {}).get("kube-proxy", {})["kubeconfig"] = "C:\\etc\\kube-proxy\\kubeconfig"
    winsim.edit(sc.root, host, old_command_line)
    return token


def plant_old_flanneld_layout(sc, host, node):
    """What an older release left for flanneld: ServiceAccount kubewin-flanneld-<node> with a Node-bound token in
    C:\\etc\\kube-flannel\\token (and a kubeconfig naming it), a ClusterRole that may patch the Node's status and a
    binding to the ServiceAccount. Returns the token."""
    name = "kubewin-flanneld-" + node
    rbac, token = _old_service_account_token(name, "kube-flannel", node, 3600)
    rbac.patch_cluster_role(name, {"rules": [
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["patch"], "resourceNames": [node]}]})
    rbac.patch_cluster_role_binding(name, {"subjects": [
        {"kind": "ServiceAccount", "name": name, "namespace": "kube-flannel"}]})
    folder = os.path.join(sc.root, "hosts", host, "C", "etc", "kube-flannel")
    with open(os.path.join(folder, "token"), "w") as f:
        f.write(token)
    with open(os.path.join(folder, "kubeconfig"), "w") as f:
        f.write(json.dumps({"users": [{"name": name, "user": {"tokenFile": "C:\\etc\\kube-flannel\\token"}}]}))
    return token


def test_each_windows_node_runs_kube_proxy_as_itself_with_credentials_that_rotate_themselves(tmp_path, api):
    """Issue 21 point 2: kube-proxy and flanneld run with the kubelet's kubeconfig (system:node:<node>, a client
    certificate the kubelet rotates), so no credential a run issued can expire under them; one binding per node gives
    what the Node authorizer does not, and deleting it takes exactly that away. Against the real API server."""
    core, _ = api
    as_token = AsToken(tmp_path)
    rbac = client.RbacAuthorizationV1Api(config.new_client_from_config(config_file=scenario.ADMIN_CONF))
    sc = scenario.Scenario(tmp_path, nodes=2, kubewin_node_name="pc-{{ inventory_hostname }}")
    rc, doc, text = sc.run("scale_up.yml")
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]

    # 1. kube-proxy names the kubelet's kubeconfig; no token, no token kubeconfig, no ServiceAccount; its binding
    # keeps kubeadm's role for kube-proxy and names the node
    for host in sc.hosts:
        assert service_kubeconfig(sc, host, "kube-proxy") == "C:\\etc\\kubernetes\\kubelet.conf"
        files = {f.lower() for f in sc.dump(host)["files"]}
        assert not files & RETIRED_FILES, files & RETIRED_FILES
        binding = rbac.read_cluster_role_binding("kubewin-kube-proxy-pc-" + host)
        assert (binding.role_ref.kind, binding.role_ref.name) == ("ClusterRole", "system:node-proxier")
        assert [(s.kind, s.name) for s in binding.subjects] == [("User", "system:node:pc-" + host)]
    assert not [a.metadata.name for a in core.list_service_account_for_all_namespaces().items
                if a.metadata.name.startswith("kubewin-") and a.metadata.name.endswith(("-pc-win-1", "-pc-win-2"))]
    assert managed_secret_values(core) == []
    # the simulated kube-proxy listed what it proxies through the real API with that credential
    record = kube_proxy_record(sc, "win-1")
    assert "sync_error" not in record and set(record["synced"]) == {"*v1.Service", "*v1.EndpointSlice",
                                                                     "*v1.ServiceCIDR"}, record

    # 2. the node's own certificate (what both services run with) reads what kube-proxy v1.37 needs
    # (cmd/kube-proxy/app/server.go L591-620, pkg/proxy/node.go) and posts Events; the rest stays refused
    as_proxy = node_credential(sc, "win-1", tmp_path, "kube-proxy")
    as_flanneld = flanneld_credential(sc, "win-1", tmp_path)
    needs = ("/apis/discovery.k8s.io/v1/endpointslices?labelSelector=%21service.kubernetes.io%2Fheadless",
             "/apis/networking.k8s.io/v1/servicecidrs",
             "/api/v1/services?labelSelector=%21service.kubernetes.io%2Fservice-proxy-name"
             "&fieldSelector=spec.clusterIP%21%3DNone",
             "/api/v1/nodes?fieldSelector=metadata.name%3Dpc-win-1", "/api/v1/nodes/pc-win-1")
    for path in needs:
        assert as_proxy("GET", path) == 200, path
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000000Z")
    event = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"generateName": "kubewin-probe-"},
             "eventTime": now, "reportingController": "kube-proxy", "reportingInstance": "kube-proxy-pc-win-1",
             "action": "StartKubeProxy", "reason": "Starting", "type": "Normal",
             "regarding": {"kind": "Node", "name": "pc-win-1", "apiVersion": "v1"}}
    assert as_proxy("POST", "/apis/events.k8s.io/v1/namespaces/default/events?dryRun=All", event) == 201
    # flanneld as the node: NodeRestriction applies (security-2.md N1: a flanneld token could set
    # node-restriction.kubernetes.io/ labels on its Node)
    label = {"metadata": {"labels": {"node-restriction.kubernetes.io/probe": "1"}}}
    assert as_flanneld("PATCH", "/api/v1/nodes/pc-win-1/status?dryRun=All", label) == 403
    assert as_flanneld("PATCH", "/api/v1/nodes/pc-win-2/status?dryRun=All",
                       {"metadata": {"labels": {"kubewin.test/probe": "1"}}}) == 403
    assert as_flanneld("PATCH", "/api/v1/nodes/pc-win-1/status?dryRun=All",
                       {"metadata": {"annotations": {"flannel.alpha.coreos.com/public-ip": "10.0.0.10"}}}) == 200
    assert as_flanneld("GET", "/api/v1/nodes") == 200  # flannel's node informer lists every Node
    assert as_flanneld("GET", "/api/v1/namespaces/kube-flannel/pods") == 403
    labels = {"metadata": {"labels": {"node-restriction.kubernetes.io/probe": "1", "kubewin.test/probe": "1"}}}
    for path in ("/api/v1/nodes/pc-win-2?dryRun=All", "/api/v1/nodes/pc-win-2/status?dryRun=All",
                 "/api/v1/nodes/pc-win-1/status?dryRun=All"):
        assert as_proxy("PATCH", path, labels) == 403, path
    assert as_proxy("DELETE", "/api/v1/nodes/pc-win-2?dryRun=All") == 403
    for path in ("/api/v1/namespaces/kube-system/secrets", "/api/v1/namespaces/kube-system/configmaps",
                 "/api/v1/pods", "/api/v1/namespaces/kube-system/serviceaccounts"):
        assert as_proxy("GET", path) == 403, path
    # the same chain (Node authorizer, then RBAC) as SelfSubjectAccessReviews. Creating a CSR is allowed: it is how
    # the kubelet rotates this certificate (the ServiceAccount of earlier releases could not)
    allowed = {("watch", "discovery.k8s.io", "endpointslices"), ("list", "networking.k8s.io", "servicecidrs"),
               ("watch", "", "services"), ("create", "events.k8s.io", "events", "", "", "default"),
               ("watch", "", "nodes"), ("create", "certificates.k8s.io", "certificatesigningrequests")}
    # (pods create is allowed here: the Node authorizer lets a node create mirror pods, NodeRestriction limits them)
    denied = {("create", "", "serviceaccounts", "token", "kubewin-kube-proxy-pc-win-1", "kube-system"),
              ("list", "", "secrets", "", "", "kube-system"), ("list", "", "configmaps", "", "", "kube-system"),
              ("delete", "", "nodes", "", "pc-win-2"), ("update", "rbac.authorization.k8s.io", "clusterrolebindings",
                                                         "", "kubewin-kube-proxy-pc-win-1")}
    for review in allowed | denied:
        assert as_proxy.can(*review) is (review in allowed), review

    # 3. the binding is what gives EndpointSlices and ServiceCIDRs (RBAC, not the Node authorizer): without it they
    # are refused and the simulated kube-proxy syncs nothing; a re-run makes it again
    rbac.delete_cluster_role_binding("kubewin-kube-proxy-pc-win-1")
    assert until(lambda: as_proxy("GET", needs[0]) == 403), "EndpointSlices still allowed without the binding"
    assert as_proxy("GET", needs[1]) == 403 and as_proxy("GET", needs[2]) == 200
    record = kube_proxy_record(sc, "win-1", relist=True)
    assert "synced" not in record and "*v1.EndpointSlice" in record["sync_error"], record
    assert "Not syncing hns" in record["sync_error"] and "403" in record["sync_error"]
    assert "synced" in kube_proxy_record(sc, "win-2", relist=True)  # the other node keeps its own binding
    rc, doc, text = sc.run("scale_up.yml")
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    binding = rbac.read_cluster_role_binding("kubewin-kube-proxy-pc-win-1")
    assert [(s.kind, s.name) for s in binding.subjects] == [("User", "system:node:pc-win-1")]
    assert doc["stats"]["win-1"]["changed"] > 0 and doc["stats"]["win-2"]["changed"] == 0, doc["stats"]
    assert until(lambda: as_proxy("GET", needs[0]) == 200) and as_proxy("GET", needs[1]) == 200
    record = kube_proxy_record(sc, "win-1", relist=True)
    assert "sync_error" not in record and "synced" in record, record

    # 4. an upgrade from the previous release: its ServiceAccount with a token file and token kubeconfig, the binding
    # naming the ServiceAccount, kube-proxy's service running with that kubeconfig, and flanneld's older layout too.
    # One run retires it all: the old tokens fail, the files go, the binding names the node; the next changes nothing
    old_proxy_token = plant_old_kube_proxy_layout(sc, "win-1", "pc-win-1")
    old_flannel_token = plant_old_flanneld_layout(sc, "win-1", "pc-win-1")
    assert as_token(old_proxy_token, "GET", needs[0]) == 200
    assert as_token(old_flannel_token, "PATCH", "/api/v1/nodes/pc-win-1/status?dryRun=All", label) == 200
    rc, doc, text = sc.run("scale_up.yml")
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    assert all(s["changed"] == 0 for h, s in doc["stats"].items() if h == "win-2"), doc["stats"]
    assert until(lambda: as_token(old_proxy_token, "GET", needs[0]) == 401), "the old kube-proxy token still works"
    assert not authenticated(old_proxy_token) and not authenticated(old_flannel_token)
    etc = os.path.join(sc.root, "hosts", "win-1", "C", "etc")
    for rel in (("kube-proxy", "token"), ("kube-proxy", "kubeconfig"), ("kube-flannel", "token"),
                ("kube-flannel", "kubeconfig")):
        assert not os.path.exists(os.path.join(etc, *rel)), rel
    binding = rbac.read_cluster_role_binding("kubewin-kube-proxy-pc-win-1")
    assert [(s.kind, s.name) for s in binding.subjects] == [("User", "system:node:pc-win-1")]
    assert binding.role_ref.name == "system:node-proxier"
    assert service_kubeconfig(sc, "win-1", "kube-proxy") == "C:\\etc\\kubernetes\\kubelet.conf"
    assert as_flanneld("PATCH", "/api/v1/nodes/pc-win-1/status?dryRun=All", label) == 403
    record = kube_proxy_record(sc, "win-1", relist=True)
    assert "sync_error" not in record and record["kubeconfig"] == "C:\\etc\\kubernetes\\kubelet.conf", record
    rc, doc, text = sc.run("scale_up.yml")
    assert rc == 0 and scenario.changed_tasks(doc) == {}, scenario.changed_tasks(doc)
    assert all(s["changed"] == 0 for s in doc["stats"].values()), doc["stats"]

    # 5. reset deletes the RBAC it made
    assert managed_rbac("pc-win-1") == ["binding kubewin-flanneld-pc-win-1", "binding kubewin-kube-proxy-pc-win-1",
                                        "role kubewin-flanneld-pc-win-1"]
    rc, doc, text = sc.run("reset.yml", "-e", "skip_confirmation=true")
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    assert managed_rbac("pc-win-1") == [] and managed_rbac("pc-win-2") == []
