# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The files on a Windows host that carry a node component's token (kube-proxy's; flanneld had them in
earlier releases and now runs with the kubelet's kubeconfig): their kubeconfig, their win_host_files entries,
and whether the host's copies are current and locked down.

PRIVATE to the collection: no compatibility promise outside it.
"""

from __future__ import annotations

import hashlib

from ansible_collections.kubewin.nodes.plugins.module_utils._node_credentials import COMPONENTS, OPEN_ACL
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import files as nfiles


def token_file_kubeconfig(server, ca_data_b64, user, token_file):
    """A kubeconfig for a node component that reads its token from ``token_file``.

    client-go re-reads that file: clientcmd sets BearerTokenFile from the kubeconfig's tokenFile
    (tools/clientcmd/client_config.go), and the transport wraps it in NewCachedFileTokenSource, which
    reloads the file once a minute (transport/token_source.go, transport/round_trippers.go
    NewBearerAuthWithRefreshRoundTripper). So a renewed token is used without restarting the service.
    The kubeconfig itself holds no secret."""
    return nfiles.json_text({
        "apiVersion": "v1", "kind": "Config", "current-context": "default",
        "clusters": [{"name": "default", "cluster": {"server": server, "certificate-authority-data": ca_data_b64}}],
        "users": [{"name": user, "user": {"tokenFile": token_file}}],
        "contexts": [{"name": "default", "context": {"cluster": "default", "user": user}}],
    })


def credential_files(server, ca_data_b64, accounts, tokens, token_paths, kubeconfig_paths):
    """win_host_files entries of the token components' credentials (kube-proxy's): (kubeconfigs, token files). Each
    component of ``kubeconfig_paths`` gets its kubeconfig naming its token file (``token_paths``) and its
    ServiceAccount user (``accounts``); only the tokens issued this run (``tokens``) get a token file."""
    kubeconfigs = [{"path": kubeconfig_paths[c], "restricted": True, "secret": False,
                    "content": token_file_kubeconfig(server, ca_data_b64, accounts[c], token_paths[c])}
                   for c in COMPONENTS if c in (kubeconfig_paths or {})]
    return kubeconfigs, token_files(tokens, token_paths)


def token_files(tokens, paths):
    """The files that carry the tokens issued this run: {component: token} and {component: path} ->
    win_host_files entries (secret: never in a diff; Administrators and SYSTEM only)."""
    return [{"path": paths[c], "content": tokens[c], "restricted": True, "secret": True}
            for c in COMPONENTS if (tokens or {}).get(c)]


def token_file_hashes(paths, state):
    """{component: SHA-512 of its token file} from ``win_host_credential_state`` (``state``) for the token
    files ``paths`` ({component: path}). None when the file is missing; OPEN_ACL when its owner is not
    trusted or its access rules are not Administrators and SYSTEM only: such a token may have been read,
    so it is replaced."""
    out = {}
    for component, path in (paths or {}).items():
        sha = ((state or {}).get("sha512") or {}).get(path)
        acl = ((state or {}).get("acls") or {}).get(path)
        if sha and not nfiles.restricted_file_secured(acl):
            sha = OPEN_ACL
        out[component] = sha
    return out


def credential_files_in_sync(state, files):
    """Whether every file of ``files`` (win_host_files entries) has that content and, when restricted,
    the Administrators-and-SYSTEM-only access rules, according to ``win_host_credential_state``."""
    hashes = (state or {}).get("sha512") or {}
    acls = (state or {}).get("acls") or {}
    for f in files or []:
        if hashes.get(f["path"]) != hashlib.sha512(nfiles.file_text(f["content"]).encode("utf-8")).hexdigest():
            return False
        if f.get("restricted") and not nfiles.restricted_file_secured(acls.get(f["path"])):
            return False
    return True
