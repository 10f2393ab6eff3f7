"""Credentials in the lab: none ever reaches Ansible's output or a process command line, the bootstrap
token lives only while a host joins, and reset touches only the Windows nodes the collection joined.

The leak test collects every credential the collection makes or reads: bootstrap tokens (watched while
the playbooks run, since they are deleted again), any ServiceAccount token Secrets it manages, any token file an
older release left for kube-proxy or flanneld, and the kubelet's client key on the simulated host (which kube-proxy
and flanneld run with). It then
looks for each, plain and base64, in the output of scale-up, a re-run, an upgrade and reset, all at
-vvvv with --diff, with the JSON callback (every result, as AWX stores it) and the default one."""

import base64
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
# Helpers of test_scale_up.py's test_each_windows_node_runs_kube_proxy_as_itself_..., which checks these credentials
# on that file's two vxlan nodes (issue 22 T7) and imports them from here.
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
