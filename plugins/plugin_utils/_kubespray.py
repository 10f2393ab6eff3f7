# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kubespray's download and proxy settings, mapped to the Windows nodes' downloads.

kubespray (roles/kubespray_defaults/defaults/main/download.yml) composes every download URL from a
base per origin: ``kubelet_download_url: "{{ dl_k8s_io_url }}/release/v{{ kube_version }}/bin/linux/
{{ image_arch }}/kubelet"``, ``cni_download_url: "{{ github_url }}/containernetworking/plugins/releases/
download/v{{ cni_version }}/..."``, with ``dl_k8s_io_url: https://dl.k8s.io`` and ``github_url:
https://github.com``. For an offline mirror, its sample (inventory/sample/group_vars/all/offline.yml)
and docs/operations/offline-environment.md put each origin's host name as the top directory of
``files_repo``: ``{{ files_repo }}/dl.k8s.io/release/v...``, ``{{ files_repo }}/github.com/...``
(``dl_k8s_io_url: "{{ files_repo }}/dl.k8s.io"``, ``github_url: "{{ files_repo }}/github.com"``).
The Windows files live in the same trees (dl.k8s.io/release/<v>/bin/windows/amd64/, the projects'
GitHub releases), so the same bases give their URLs.

Proxies as kubespray passes them to get_url and the container runtimes (proxy_env in
roles/kubespray_defaults/defaults/main/main.yml; containerd's http-proxy.conf.j2): ``https_proxy`` for
https:// URLs, ``http_proxy`` for http:// URLs (the meaning Python's urllib and Go's
x/net/http/httpproxy give them), ``no_proxy`` a comma-separated list; without ``no_proxy``
kubespray builds one from its hosts plus ``additional_no_proxy`` (roles/network_facts/tasks/main.yaml).
"""

from __future__ import annotations

import ipaddress
import urllib.parse

# The kubespray variables read here; each comes from the Windows host's own variables or else from the
# first kube_control_plane host's (see _kubewin_kubespray in roles/kubewin/defaults/main.yml).
NAMES = ("dl_k8s_io_url", "github_url", "files_repo", "http_proxy", "https_proxy", "no_proxy",
         "additional_no_proxy")

# Collection download -> (kubespray's base variable or None, that variable's default, path below it).
# NSSM has no kubespray counterpart: only files_repo (with the origin's host name as directory) moves it.
DOWNLOADS = {
    "kubernetes": ("dl_k8s_io_url", "https://dl.k8s.io", "/release"),
    "flannel": ("github_url", "https://github.com", "/flannel-io/flannel/releases/download"),
    "cni": ("github_url", "https://github.com", "/containernetworking/plugins/releases/download"),
    "flannel_cni": ("github_url", "https://github.com", "/flannel-io/cni-plugin/releases/download"),
    "sdn_cni": ("github_url", "https://github.com", "/microsoft/windows-container-networking/releases/download"),
    "nssm": (None, "https://nssm.cc", "/release/nssm-2.24.zip"),
    # the optional metrics exporter (roles/metrics): kubespray downloads none, its github_url and files_repo move it
    "windows_exporter": ("github_url", "https://github.com",
                         "/prometheus-community/windows_exporter/releases/download"),
    "containerd": ("github_url", "https://github.com", "/containerd/containerd/releases/download"),
    "crictl": ("github_url", "https://github.com", "/kubernetes-sigs/cri-tools/releases/download"),
}


class KubesprayValueError(ValueError):
    """kubespray's values cannot be mapped to the Windows nodes' settings; the message says which and the fix."""


def _text(value):
    return "" if value is None else str(value).strip()


def download_url(kubespray, name):
    """The base URL (for NSSM the zip's URL) of one collection download under kubespray's settings:
    ``dl_k8s_io_url``/``github_url`` when set, else ``files_repo`` with the origin's host name as the
    top directory (kubespray's offline layout), else the upstream origin."""
    kubespray = kubespray or {}
    var, origin, path = DOWNLOADS[name]
    base = _text(kubespray.get(var)) if var else ""
    if base:
        return base.rstrip("/") + path
    repo = _text(kubespray.get("files_repo"))
    if repo:
        return "%s/%s%s" % (repo.rstrip("/"), urllib.parse.urlsplit(origin).hostname, path)
    return origin + path


def proxy(kubespray, urls):
    """The one proxy the Windows nodes use for ``urls`` (the download bases), under kubespray's meaning:
    ``https_proxy`` for https:// URLs and ``http_proxy`` for http:// ones, '' when that one is unset
    (direct). A node has a single WebProxy for all its downloads, so when the bases mix both schemes
    and the two proxies differ there is no single answer: KubesprayValueError says what to set."""
    kubespray = kubespray or {}
    wanted = {}
    for url in urls or []:
        scheme = urllib.parse.urlsplit(_text(url)).scheme.lower()
        if scheme in ("http", "https"):
            var = scheme + "_proxy"
            wanted[var] = _text(kubespray.get(var))
    values = set(wanted.values())
    if len(values) > 1:
        raise KubesprayValueError(
            "the download URLs use both http:// and https://, and kubespray's http_proxy (%r) and https_proxy "
            "(%r) differ, but a Windows node fetches all its files through one proxy: set kubewin_http_proxy "
            "to the proxy the Windows nodes use (and kubewin_no_proxy)"
            % (wanted.get("http_proxy"), wanted.get("https_proxy")))
    return values.pop() if values else ""


def no_proxy(kubespray):
    """kubespray's ``no_proxy`` (a comma-separated string, or a list) as the list kubewin_no_proxy takes;
    without it ``additional_no_proxy``, the entries kubespray adds to the list it builds from its own
    hosts (those are cluster addresses, not download mirrors). IPv6 networks are left out: .NET's bypass
    list cannot express them and the Windows nodes here fetch over IPv4 only (host_files.no_proxy_pattern)."""
    kubespray = kubespray or {}
    value = kubespray.get("no_proxy")
    if value is None or _text(value) == "":
        value = kubespray.get("additional_no_proxy")
    items = value if isinstance(value, (list, tuple)) else _text(value).split(",")
    out = []
    for item in items:
        entry = _text(item)
        if not entry or entry in out:
            continue
        if "/" in entry:
            try:
                if ipaddress.ip_network(entry, strict=False).version == 6:
                    continue
            except ValueError:
                pass  # not a network: kept, so preflight names it
        out.append(entry)
    return out
