# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Preflight: the form of every value the user sets, before anything that depends on it.

PRIVATE to the collection: no compatibility promise outside it.
"""

from __future__ import annotations

import difflib
import re

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.kubewin.nodes.plugins.module_utils import _versions as versions
from ansible_collections.kubewin.nodes.plugins.plugin_utils import _downloads
from ansible_collections.kubewin.nodes.plugins.plugin_utils._downloads import proxy_problem, redact_url
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import runtimes
from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight.findings import VARIABLES, Findings
from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight.runtime import DEPLOYMENT_MODES

# A kubeadm bootstrap token (k8s.io/cluster-bootstrap/token/api: BootstrapTokenPattern).
_BOOTSTRAP_TOKEN = re.compile(r"^([a-z0-9]{6})\.([a-z0-9]{16})$")


# ---------------------------------------------------------------------------------------------------
# the form of every value, before anything that depends on it


def _did_you_mean(value, choices):
    close = difflib.get_close_matches(str(value).lower(), choices, n=1, cutoff=0.6)
    return " (did you mean %s?)" % close[0] if close else ""


def _token_problem(token):
    """What is wrong with a bootstrap token, in words that do not give the secret away."""
    if "." not in token:
        return "it has no '.' between the token id and the secret"
    token_id, secret = token.split(".", 1)
    problems = []
    if not re.match(r"^[a-z0-9]{6}$", token_id):
        problems.append("the id before the '.' has %d characters%s (6 needed)"
                        % (len(token_id), " including characters other than a-z and 0-9"
                           if re.search(r"[^a-z0-9]", token_id) else ""))
    if not re.match(r"^[a-z0-9]{16}$", secret):
        problems.append("the secret after the '.' has %d characters%s (16 needed)"
                        % (len(secret), " including characters other than a-z and 0-9"
                           if re.search(r"[^a-z0-9]", secret) else ""))
    return "; ".join(problems)


def check_inputs(kube_version=None, server_version=None, container_runtime="containerd", deployment_mode="services",
                 flannel_version=None, cni_plugins_version=None, kubeadm_token=None, proxy=None, no_proxy=None):
    """The form of each value the user sets: a malformed one is named with its variable, its value and
    the form expected, before any check (or download URL) builds on it."""
    f = Findings("inputs")
    var = VARIABLES["kube_version"]
    given = str(kube_version).strip() if kube_version is not None else ""
    server = versions.server_release(server_version)
    if given and versions.kube_release(given) is None:
        f.fail(var, "%s %r is not a Kubernetes release version: write it as %s%s"
               % (var, kube_version, versions.KUBE_VERSION_FORM,
                  "; the API server runs %s" % server if server else ""))
    elif not given and not server:
        f.fail(var, "%s is not set and the API server's version (%r) is not a Kubernetes release to copy: set %s "
                    "to the version the Windows nodes get, as %s"
               % (var, server_version, var, versions.KUBE_VERSION_FORM))
    for opt, example in (("flannel_version", "v0.26.7"), ("cni_plugins_version", "v1.6.2")):
        value = {"flannel_version": flannel_version, "cni_plugins_version": cni_plugins_version}[opt]
        if value is None:
            continue
        tag = versions.release_tag(value)
        if tag is None or not str(value).strip().startswith("v"):
            f.fail(VARIABLES[opt], "%s %r is not a release tag: write the tag exactly as it appears in the release's "
                                   "download URL, v and major.minor.patch (%s)"
                   % (VARIABLES[opt], value, "here %s" % tag if tag else "e.g. %s" % example))
    for opt, choices in (("container_runtime", runtimes.NAMES), ("deployment_mode", DEPLOYMENT_MODES)):
        value = {"container_runtime": container_runtime, "deployment_mode": deployment_mode}[opt]
        if value not in choices:
            f.fail(VARIABLES[opt], "%s is %r; it must be one of: %s%s"
                   % (VARIABLES[opt], value, ", ".join(choices), _did_you_mean(value, choices)))
    if kubeadm_token is not None and str(kubeadm_token) != "" and not _BOOTSTRAP_TOKEN.match(str(kubeadm_token)):
        f.fail(VARIABLES["kubeadm_token"],
               "kubeadm_token (value not shown: it is a secret) is not a bootstrap token of the form "
               "[a-z0-9]{6}.[a-z0-9]{16}: %s; set it to a token as `kubeadm token generate` prints it, or leave it "
               "unset and a token is made for the run" % _token_problem(str(kubeadm_token)))
    if proxy:
        problem = proxy_problem(proxy)
        if problem:
            f.fail(VARIABLES["proxy"], "%s %r is not a proxy URL: %s; write it as http://host:port, e.g. "
                                       "http://proxy.corp:3128" % (VARIABLES["proxy"], redact_url(proxy), problem))
    bad = []
    for entry in no_proxy or []:
        try:
            _downloads.no_proxy_pattern(entry)
        except _downloads.NoProxyEntryError as e:
            bad.append(str(e))
    if bad:
        f.fail(VARIABLES["no_proxy"], "%s has entries the nodes cannot use: %s; each entry is %s"
               % (VARIABLES["no_proxy"], "; ".join(bad), _downloads.NO_PROXY_FORMS))
    return f.result()


def check_kubeadm_token_use(kubeadm_token, use):
    """An inventory kubeadm_token (kubespray's fixed token) is ignored unless kubewin_use_kubeadm_token: each run makes
    its own token, deleted after the join (security-2 N8). Ignoring it silently would hide that the setting does
    nothing; using it silently would hide that everyone who can read the inventory can join nodes."""
    f = Findings("kubeadm_token")
    if kubeadm_token not in (None, "") and not boolean(use or False, strict=False):
        f.warn(VARIABLES["kubeadm_token"],
               "kubeadm_token is set on the first kube_control_plane host but not used: the Windows hosts join with a "
               "bootstrap token made for this run (kubewin_bootstrap_token_ttl) and deleted after the join; set "
               "kubewin_use_kubeadm_token: true to join with the fixed token instead")
    return f.result()
