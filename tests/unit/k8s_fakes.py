"""A fake Kubernetes API (CoreV1Api, AppsV1Api, VersionApi surface) holding plain dicts, and a runner
that executes a module's main() against it. Shared by the tests of the Kubernetes modules."""

import contextlib
import copy
import importlib
import json
from unittest import mock

import pytest
from ansible.module_utils import basic

from ansible_collections.kubewin.nodes.plugins.module_utils._k8s import waiter

kubernetes = pytest.importorskip("kubernetes")
from kubernetes.client.exceptions import ApiException  # noqa: E402


def api_error(status, reason, message=None):
    exc = ApiException(status=status, reason=reason)
    if message:
        exc.body = json.dumps({"kind": "Status", "status": "Failure", "message": message, "code": status})
    return exc


def strategic_merge(target, patch):
    """Enough strategic merge patch for maps and replaced lists: null deletes a key."""
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict) and isinstance(target.get(key), dict):
            strategic_merge(target[key], value)
        else:
            target[key] = copy.deepcopy(value)
    return target


class FakeCluster:
    """State and API surface in one object; ``core``, ``apps`` and ``version`` all point to it."""

    def __init__(self, version="v1.31.4"):
        self.host = "https://192.0.2.10:6443"
        self.core = self.apps = self.version = self.custom = self.rbac = self
        self.custom_objects = {}  # (plural, name) -> cluster-scoped custom object (crd.projectcalico.org/v1)
        self.configmaps = {}
        self.nodes = {}
        self.daemonsets = {}
        self.pods = {}
        self.services = {}
        self.secrets = {}  # (namespace, name) -> Secret
        self.namespaces = {}  # name -> Namespace
        # name -> ClusterRoleBinding; kubeadm's auto-approval of a node's own client-certificate renewal by default
        self.clusterrolebindings = {"kubeadm:node-autoapprove-certificate-rotation": {
            "metadata": {"name": "kubeadm:node-autoapprove-certificate-rotation"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:nodes"}]}}
        self.calls = []
        self.errors = {}  # method -> exception, callable(*args) -> exception/None, or list of those
        self.git_version = version
        self.rv = 100
        self.on_read_node = None  # callable(name, count) run before each read_node
        self.read_node_count = 0
        self.evict_hook = None  # callable(pod) -> exception or None

    # -- helpers ---------------------------------------------------------------------------------
    def _hit(self, method, *args, **kwargs):
        assert kwargs.get("_request_timeout"), method
        assert kwargs.get("_preload_content") is False, method
        self.calls.append((method, args))
        error = self.errors.get(method)
        if isinstance(error, list):
            error = error.pop(0) if error else None
        if callable(error) and not isinstance(error, Exception):
            error = error(*args)
        if error is not None:
            raise error

    def _next_rv(self):
        self.rv += 1
        return str(self.rv)

    def writes(self):
        return [c[0] for c in self.calls if not c[0].startswith(("read_", "list_", "get_"))]

    def add_node(self, name, ready=True, labels=None, taints=None, unschedulable=False, conditions=None, **info):
        node = {
            "metadata": {"name": name, "labels": dict(labels or {}), "resourceVersion": self._next_rv()},
            "spec": {},
            "status": {
                "conditions": conditions if conditions is not None else [
                    {"type": "Ready", "status": "True" if ready else "False",
                     "reason": "KubeletReady" if ready else "KubeletNotReady",
                     "message": "kubelet is posting ready status" if ready else "container runtime network not ready"}],
                "nodeInfo": dict({"kubeletVersion": "v1.31.4", "operatingSystem": "linux",
                                  "architecture": "amd64"}, **info),
                "addresses": [{"type": "InternalIP", "address": "192.0.2.%d" % (len(self.nodes) + 20)}],
            },
        }
        if taints:
            node["spec"]["taints"] = copy.deepcopy(taints)
        if unschedulable:
            node["spec"]["unschedulable"] = True
        self.nodes[name] = node
        return node

    def add_daemonset(self, namespace, name, node_selector=None, affinity=None):
        ds = {
            "metadata": {"name": name, "namespace": namespace, "generation": 1},
            "spec": {"template": {"spec": {"containers": [{"name": name, "image": "x"}]}}},
        }
        if node_selector is not None:
            ds["spec"]["template"]["spec"]["nodeSelector"] = dict(node_selector)
        if affinity is not None:
            ds["spec"]["template"]["spec"]["affinity"] = copy.deepcopy(affinity)
        self.daemonsets[(namespace, name)] = ds
        return ds

    def add_pod(self, namespace, name, node, owner_kind="ReplicaSet", emptydir=False, mirror=False, phase="Running"):
        pod = {
            "metadata": {"name": name, "namespace": namespace, "uid": "uid-%s-%s" % (namespace, name)},
            "spec": {"nodeName": node, "volumes": [{"name": "tmp", "emptyDir": {}}] if emptydir else []},
            "status": {"phase": phase},
        }
        if owner_kind:
            pod["metadata"]["ownerReferences"] = [{"kind": owner_kind, "name": "owner", "controller": True}]
        if mirror:
            pod["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "abc"}
        self.pods[(namespace, name)] = pod
        return pod

    # -- CustomObjectsApi (cluster-scoped) -------------------------------------------------------------
    def get_cluster_custom_object(self, group, version, plural, name, **kwargs):
        self._hit("get_cluster_custom_object", group, version, plural, name, **kwargs)
        if (plural, name) not in self.custom_objects:
            raise api_error(404, "Not Found")
        return copy.deepcopy(self.custom_objects[(plural, name)])

    def list_cluster_custom_object(self, group, version, plural, **kwargs):
        self._hit("list_cluster_custom_object", group, version, plural, **kwargs)
        return {"items": [copy.deepcopy(o) for (p, n), o in sorted(self.custom_objects.items()) if p == plural]}

    # -- VersionApi ------------------------------------------------------------------------------
    def get_code(self, **kwargs):
        self._hit("get_code", **kwargs)
        major, minor = self.git_version.lstrip("v").split(".")[:2]
        return {"major": major, "minor": minor, "gitVersion": self.git_version, "platform": "linux/amd64"}

    # -- CoreV1Api -------------------------------------------------------------------------------
    def read_namespaced_config_map(self, name, namespace, **kwargs):
        self._hit("read_namespaced_config_map", name, namespace, **kwargs)
        if (namespace, name) not in self.configmaps:
            raise api_error(404, "Not Found")
        return copy.deepcopy(self.configmaps[(namespace, name)])

    def read_namespaced_service(self, name, namespace, **kwargs):
        self._hit("read_namespaced_service", name, namespace, **kwargs)
        if (namespace, name) not in self.services:
            raise api_error(404, "Not Found")
        return copy.deepcopy(self.services[(namespace, name)])

    def list_namespace(self, **kwargs):
        self._hit("list_namespace", **kwargs)
        return {"items": copy.deepcopy(list(self.namespaces.values()))}

    # -- RbacAuthorizationV1Api ------------------------------------------------------------------
    def list_cluster_role_binding(self, **kwargs):
        self._hit("list_cluster_role_binding", **kwargs)
        return {"items": copy.deepcopy(list(self.clusterrolebindings.values()))}

    def _labelled(self, items, label_selector):
        if label_selector:
            key, value = label_selector.split("=")
            items = [o for o in items if (o["metadata"].get("labels") or {}).get(key) == value]
        return {"items": copy.deepcopy(items)}

    def list_cluster_role(self, label_selector=None, **kwargs):
        self._hit("list_cluster_role", **kwargs)
        return self._labelled(list(getattr(self, "roles", {}).values()), label_selector)

    def list_service_account_for_all_namespaces(self, label_selector=None, **kwargs):
        self._hit("list_service_account_for_all_namespaces", **kwargs)
        return self._labelled(list(getattr(self, "accounts", {}).values()), label_selector)

    def list_node(self, **kwargs):
        self._hit("list_node", **kwargs)
        return {"items": copy.deepcopy(list(self.nodes.values()))}

    def read_node(self, name, **kwargs):
        self.read_node_count += 1
        if self.on_read_node:
            self.on_read_node(name, self.read_node_count)
        self._hit("read_node", name, **kwargs)
        if name not in self.nodes:
            raise api_error(404, "Not Found")
        return copy.deepcopy(self.nodes[name])

    def patch_node(self, name, body, **kwargs):
        self._hit("patch_node", name, body, **kwargs)
        assert kwargs.get("_content_type") == "application/strategic-merge-patch+json"
        node = self.nodes.get(name)
        if node is None:
            raise api_error(404, "Not Found")
        body = copy.deepcopy(body)
        wanted_rv = (body.get("metadata") or {}).pop("resourceVersion", None)
        if wanted_rv is not None and wanted_rv != node["metadata"]["resourceVersion"]:
            raise api_error(409, "Conflict", "the object has been modified")
        strategic_merge(node, body)
        node["metadata"]["resourceVersion"] = self._next_rv()
        return copy.deepcopy(node)

    def delete_node(self, name, **kwargs):
        self._hit("delete_node", name, **kwargs)
        if name not in self.nodes:
            raise api_error(404, "Not Found")
        del self.nodes[name]
        return {"status": "Success"}

    def list_pod_for_all_namespaces(self, field_selector=None, **kwargs):
        self._hit("list_pod_for_all_namespaces", field_selector, **kwargs)
        node = field_selector.split("=", 1)[1]
        return {"items": copy.deepcopy([p for p in self.pods.values() if p["spec"]["nodeName"] == node])}

    def create_namespaced_pod_eviction(self, name, namespace, body, **kwargs):
        self._hit("create_namespaced_pod_eviction", name, namespace, body, **kwargs)
        assert body["kind"] == "Eviction" and body["metadata"] == {"name": name, "namespace": namespace}
        pod = self.pods.get((namespace, name))
        if pod is None:
            raise api_error(404, "Not Found")
        if self.evict_hook:
            error = self.evict_hook(pod)
            if error is not None:
                raise error
        del self.pods[(namespace, name)]
        return {"kind": "Status", "status": "Success"}

    def read_namespaced_secret(self, name, namespace, **kwargs):
        self._hit("read_namespaced_secret", name, namespace, **kwargs)
        if (namespace, name) not in self.secrets:
            raise api_error(404, "Not Found")
        return copy.deepcopy(self.secrets[(namespace, name)])

    def list_namespaced_secret(self, namespace, label_selector=None, **kwargs):
        self._hit("list_namespaced_secret", namespace, **kwargs)
        return self._labelled([s for (ns, _n), s in sorted(self.secrets.items()) if ns == namespace], label_selector)

    def create_namespaced_secret(self, namespace, body, **kwargs):
        self._hit("create_namespaced_secret", namespace, body, **kwargs)
        assert namespace == body["metadata"]["namespace"]
        if (namespace, body["metadata"]["name"]) in self.secrets:
            raise api_error(409, "Conflict", 'secrets "%s" already exists' % body["metadata"]["name"])
        self.put_secret(body)
        return copy.deepcopy(body)

    def replace_namespaced_secret(self, name, namespace, body, **kwargs):
        self._hit("replace_namespaced_secret", name, namespace, body, **kwargs)
        if (namespace, name) not in self.secrets:
            raise api_error(404, "Not Found")
        self.put_secret(body)
        return copy.deepcopy(body)

    def delete_namespaced_secret(self, name, namespace, **kwargs):
        self._hit("delete_namespaced_secret", name, namespace, **kwargs)
        if (namespace, name) not in self.secrets:
            raise api_error(404, "Not Found")
        self.drop_secret(namespace, name)
        return {"status": "Success"}

    def put_secret(self, secret):
        """Store a Secret (tests that model a controller reacting to Secrets extend this)."""
        meta = secret["metadata"]
        self.secrets[(meta["namespace"], meta["name"])] = copy.deepcopy(secret)

    def drop_secret(self, namespace, name):
        del self.secrets[(namespace, name)]

    # -- AppsV1Api -------------------------------------------------------------------------------
    def list_daemon_set_for_all_namespaces(self, **kwargs):
        self._hit("list_daemon_set_for_all_namespaces", **kwargs)
        return {"items": copy.deepcopy(list(self.daemonsets.values()))}

    def read_namespaced_daemon_set(self, name, namespace, **kwargs):
        self._hit("read_namespaced_daemon_set", name, namespace, **kwargs)
        if (namespace, name) not in self.daemonsets:
            raise api_error(404, "Not Found")
        return copy.deepcopy(self.daemonsets[(namespace, name)])

    def patch_namespaced_daemon_set(self, name, namespace, body, **kwargs):
        self._hit("patch_namespaced_daemon_set", name, namespace, body, **kwargs)
        assert kwargs.get("_content_type") == "application/strategic-merge-patch+json"
        ds = self.daemonsets.get((namespace, name))
        if ds is None:
            raise api_error(404, "Not Found")
        strategic_merge(ds, body)
        ds["metadata"]["generation"] += 1
        return copy.deepcopy(ds)


class FakeTime:
    def __init__(self):
        self.now = 1000.0
        self.sleeps = []
        self.on_sleep = None

    def monotonic(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds
        if self.on_sleep:
            self.on_sleep(self.now)


@contextlib.contextmanager
def set_module_args(args):
    args = dict(args)
    args.setdefault("_ansible_remote_tmp", "/tmp")
    args.setdefault("_ansible_keep_remote_files", False)
    try:
        from ansible.module_utils.testing import patch_module_args  # ansible-core >= 2.19
    except ImportError:
        serialized = json.dumps({"ANSIBLE_MODULE_ARGS": args}).encode("utf-8")
        with mock.patch.object(basic, "_ANSIBLE_ARGS", serialized):
            yield
    else:
        with patch_module_args(args):
            yield


def make_runner(mod, monkeypatch, capsys):
    """``run(args, cluster=None, check=False, diff=False)`` -> the module's parsed JSON result."""

    def _run(args, cluster=None, check=False, diff=False, clock=None):
        if cluster is not None:
            monkeypatch.setattr(mod, "build_apis", lambda params: cluster)
        clock = clock or FakeTime()
        monkeypatch.setattr(waiter, "time", clock)
        if hasattr(mod, "time"):
            monkeypatch.setattr(mod, "time", clock)
        internal = importlib.import_module("ansible.module_utils._internal")
        if hasattr(internal, "is_controller"):
            monkeypatch.setattr(internal, "is_controller", False)
        # AnsibleModule keeps warnings in a module-level collection (a list on 2.18, a dict on 2.19): each run
        # reports only its own.
        warnings = importlib.import_module("ansible.module_utils.common.warnings")
        warnings._global_warnings.clear()
        args = dict(args)
        if check:
            args["_ansible_check_mode"] = True
        if diff:
            args["_ansible_diff"] = True
        with set_module_args(args):
            with pytest.raises(SystemExit) as exc:
                mod.main()
        out = capsys.readouterr().out
        result = json.loads(out)
        result["_rc"] = exc.value.code
        result["_raw"] = out
        return result

    return _run
