# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Connection to the Kubernetes API, shared by the collection's Kubernetes modules
(the ``kubewin.nodes.k8s`` action group; compare kubernetes.core ``module_utils/k8s/client.py``).

* ``auth_argument_spec()``: the connection options (documented by the ``kubewin.nodes.k8s_auth``
  doc fragment), with the same ``K8S_AUTH_*`` environment fallbacks as kubernetes.core.
* ``build_api_client(params)``: a ``kubernetes.client.ApiClient`` for those options.
* ``build_apis(params)``: CoreV1Api, AppsV1Api, RbacAuthorizationV1Api and VersionApi over one ApiClient.
* ``call(apis, verb, resource, namespace, name, func, ...)``: one API request with a timeout,
  returning the JSON document as a plain dict (404 -> ``None``), and turning every API or network
  failure into ``K8sError`` with a message that says what to do.

The error texts are plain functions and unit-tested without a cluster.
"""

from __future__ import annotations

import json
import os
import traceback

from ansible.module_utils.basic import env_fallback

try:
    from kubernetes import client as k8s_client
    from kubernetes import config as k8s_config
    from kubernetes.client.exceptions import ApiException
    from kubernetes.config.config_exception import ConfigException

    HAS_KUBERNETES = True
    K8S_IMPORT_ERROR = None
except ImportError:
    HAS_KUBERNETES = False
    K8S_IMPORT_ERROR = traceback.format_exc()

    class ApiException(Exception):  # type: ignore[no-redef]
        """Placeholder so that except clauses work without the library."""

    class ConfigException(Exception):  # type: ignore[no-redef]
        """Placeholder so that except clauses work without the library."""

try:
    from urllib3.exceptions import HTTPError as Urllib3HTTPError
except ImportError:  # pragma: no cover - urllib3 comes with kubernetes
    class Urllib3HTTPError(Exception):  # type: ignore[no-redef]
        """Placeholder so that except clauses work without the library."""


# Seconds for one API request (connect, read): an unreachable server must not hang the play.
REQUEST_TIMEOUT = (10, 30)

STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
MERGE_PATCH = "application/merge-patch+json"


class K8sError(Exception):
    """A failure with a user-facing message.

    ``status`` is the HTTP status (None if unreachable), ``detail`` the API server's own message, and
    ``extra`` further return values for ``fail_json`` (such as ``changed`` after a partial change).
    """

    def __init__(self, msg, status=None, detail=None, **extra):
        super(K8sError, self).__init__(msg)
        self.msg = msg
        self.status = status
        self.detail = detail
        self.extra = extra


def auth_argument_spec():
    """The connection options (a new dict on every call, safe to extend)."""
    return dict(
        kubeconfig=dict(type="raw", fallback=(env_fallback, ["K8S_AUTH_KUBECONFIG"])),
        context=dict(type="str", fallback=(env_fallback, ["K8S_AUTH_CONTEXT"])),
        host=dict(type="str", fallback=(env_fallback, ["K8S_AUTH_HOST"])),
        api_key=dict(type="str", no_log=True, fallback=(env_fallback, ["K8S_AUTH_API_KEY"])),
        validate_certs=dict(type="bool", aliases=["verify_ssl"], fallback=(env_fallback, ["K8S_AUTH_VERIFY_SSL"])),
        ca_cert=dict(type="path", aliases=["ssl_ca_cert"], fallback=(env_fallback, ["K8S_AUTH_SSL_CA_CERT"])),
        client_cert=dict(type="path", aliases=["cert_file"], fallback=(env_fallback, ["K8S_AUTH_CERT_FILE"])),
        client_key=dict(type="path", aliases=["key_file"], no_log=False,
                        fallback=(env_fallback, ["K8S_AUTH_KEY_FILE"])),
    )


def build_configuration(params):
    """A ``kubernetes.client.Configuration`` for the connection options.

    Order: an explicit kubeconfig (path or dict); else, unless ``host`` with ``api_key`` or
    ``client_cert`` is given, the default kubeconfig, then the in-cluster service account.
    ``host``, ``api_key``, ``validate_certs``, ``ca_cert``, ``client_cert`` and ``client_key``
    override what the kubeconfig says.
    """
    if not HAS_KUBERNETES:
        raise K8sError("The 'kubernetes' Python library is required: pip install 'kubernetes>=29.0.0'.")
    configuration = k8s_client.Configuration()
    kubeconfig = params.get("kubeconfig")
    context = params.get("context")
    explicit = params.get("host") and (params.get("api_key") or params.get("client_cert"))
    try:
        if isinstance(kubeconfig, dict):
            k8s_config.load_kube_config_from_dict(
                config_dict=kubeconfig, context=context, client_configuration=configuration
            )
        elif kubeconfig:
            path = os.path.abspath(os.path.expanduser(os.path.expandvars(str(kubeconfig))))
            if not os.path.exists(path):
                raise K8sError(
                    "kubeconfig file %s does not exist on this host. Point the kubeconfig option at the admin "
                    "kubeconfig there: the kubewin.nodes roles set it from kubewin_kubeconfig (default "
                    "/etc/kubernetes/admin.conf, where kubeadm and kubespray write it on control-plane hosts), "
                    "read on the first kube_control_plane host." % path)
            k8s_config.load_kube_config(config_file=path, context=context, client_configuration=configuration)
        elif not explicit:
            try:
                k8s_config.load_kube_config(context=context, client_configuration=configuration)
            except (ConfigException, OSError) as exc:
                try:
                    k8s_config.load_incluster_config(client_configuration=configuration)
                except ConfigException:
                    if not params.get("host"):
                        raise K8sError(
                            "No Kubernetes credentials found: no usable default kubeconfig (%s) and not "
                            "running in a pod. Set kubeconfig (for example /etc/kubernetes/admin.conf on a "
                            "control-plane host), or host with api_key or client_cert/client_key." % exc
                        ) from None
    except (ConfigException, ValueError, TypeError) as exc:
        raise K8sError("Cannot load the kubeconfig: %s" % exc) from None
    if params.get("host"):
        configuration.host = params["host"]
    if params.get("api_key"):
        configuration.api_key = {"authorization": "Bearer " + params["api_key"]}
    if params.get("validate_certs") is not None:
        configuration.verify_ssl = params["validate_certs"]
    if params.get("ca_cert"):
        configuration.ssl_ca_cert = params["ca_cert"]
    if params.get("client_cert"):
        configuration.cert_file = params["client_cert"]
    if params.get("client_key"):
        configuration.key_file = params["client_key"]
    return configuration


def build_api_client(params):
    """``(ApiClient, host)`` for the connection options."""
    configuration = build_configuration(params)
    return k8s_client.ApiClient(configuration), configuration.host


class Apis(object):
    """The typed API objects a module uses, over one ApiClient, and the host they talk to."""

    def __init__(self, host, core=None, apps=None, version=None, rbac=None, custom=None):
        self.host = host
        self.custom = custom
        self.core = core
        self.apps = apps
        self.version = version
        self.rbac = rbac


def build_apis(params):
    """``Apis`` with CoreV1Api, AppsV1Api, VersionApi, RbacAuthorizationV1Api and CustomObjectsApi for the
    connection options."""
    api_client, host = build_api_client(params)
    return Apis(
        host,
        core=k8s_client.CoreV1Api(api_client),
        apps=k8s_client.AppsV1Api(api_client),
        version=k8s_client.VersionApi(api_client),
        rbac=k8s_client.RbacAuthorizationV1Api(api_client),
        custom=k8s_client.CustomObjectsApi(api_client),
    )


# --- one request ------------------------------------------------------------------------------

def api_detail(exc):
    """The ``message`` of a Kubernetes Status body, else the HTTP reason."""
    body = getattr(exc, "body", None)
    if body:
        try:
            doc = json.loads(body)
            if isinstance(doc, dict) and doc.get("message"):
                return str(doc["message"])
        except (ValueError, TypeError):
            pass
    return getattr(exc, "reason", None) or None


def _as_dict(result):
    """The JSON document of a response: fakes return dicts; the real client an HTTP response."""
    if result is None or isinstance(result, (dict, list)):
        return result
    data = getattr(result, "data", None)
    if isinstance(data, (bytes, bytearray)):
        data = data.decode("utf-8")
    if isinstance(data, str):
        return json.loads(data) if data.strip() else {}
    to_dict = getattr(result, "to_dict", None)
    if callable(to_dict):  # pragma: no cover - only if a caller preloads content
        return to_dict()
    return result


def call(apis, verb, resource, namespace, name, func, *args, **kwargs):
    """Run ``func(*args, **kwargs)`` against the API and return the JSON result as a dict.

    A 404 returns ``None`` unless ``not_found_ok=False`` is passed. Any other HTTP error raises
    ``K8sError`` whose message names the verb, the resource and what to do; ``K8sError.status``
    keeps the HTTP status so callers can react to 409 or 429.
    """
    not_found_ok = kwargs.pop("not_found_ok", True)
    kwargs["_request_timeout"] = REQUEST_TIMEOUT
    kwargs["_preload_content"] = False
    try:
        return _as_dict(func(*args, **kwargs))
    except ApiException as exc:
        status = getattr(exc, "status", None)
        if status == 404 and not_found_ok:
            return None
        detail = api_detail(exc)
        error = K8sError(api_error_message(status, verb, resource, namespace, name, detail), status, detail)
    except (Urllib3HTTPError, OSError) as exc:
        error = K8sError(unreachable_message(apis.host, getattr(exc, "reason", None) or exc))
    except ValueError as exc:
        error = K8sError("The Kubernetes API answered %s %s with something that is not JSON: %s"
                         % (verb, describe_target(resource, namespace, name), exc))
    raise error


# --- error messages -----------------------------------------------------------------------------

def describe_target(resource, namespace=None, name=None):
    """``daemonsets "kube-proxy" in namespace kube-system`` style description."""
    what = resource
    if name:
        what = '%s "%s"' % (resource, name)
    if namespace:
        what += " in namespace %s" % namespace
    return what


def api_error_message(status, verb, resource, namespace=None, name=None, detail=None):
    """A message that says what failed and what to do, for an HTTP error from the API server."""
    target = describe_target(resource, namespace, name)
    said = (" The API server said: %s" % detail) if detail else ""
    if status == 401:
        return (
            "Unauthorized (HTTP 401) when trying to %s %s: the API server did not accept the credentials "
            "of the configured kubeconfig/api_key (expired or revoked token, or a client certificate from "
            "another cluster). Refresh the credentials, or use an admin kubeconfig such as "
            "/etc/kubernetes/admin.conf on a control-plane host.%s" % (verb, target, said)
        )
    if status == 403:
        scope = (" in namespace %s" % namespace) if namespace else " (cluster-wide)"
        return (
            "Forbidden (HTTP 403): the kubeconfig's user is not allowed to %s %s%s. That user needs RBAC "
            "permission to %s %s%s (cluster-admin has it); use an admin kubeconfig such as "
            "/etc/kubernetes/admin.conf, e.g. by delegating this task to a control-plane host.%s"
            % (verb, resource, scope, verb, resource, scope, said)
        )
    if status == 409:
        return ("Conflict (HTTP 409) when trying to %s %s: it was changed by someone else at the same time; "
                "run the task again.%s" % (verb, target, said))
    return "The Kubernetes API returned HTTP %s when trying to %s %s.%s" % (status, verb, target, said)


def unreachable_message(host, reason):
    """Message for an API server that cannot be reached at all."""
    text = (
        "Cannot reach the Kubernetes API server at %s: %s. Check that kube-apiserver is running and "
        "reachable from where this task runs, and that kubeconfig/context/host point to it (or delegate "
        "the task to a control-plane host)." % (host or "(unknown host)", reason)
    )
    if "certificate" in str(reason).lower() or "ssl" in str(reason).lower():
        text += " For TLS errors, set ca_cert to the cluster CA (or validate_certs=false for a throw-away lab)."
    return text
