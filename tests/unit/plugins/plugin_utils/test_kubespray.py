"""kubespray's download and proxy settings mapped to the Windows nodes' download URLs and proxy
(kubespray roles/kubespray_defaults/defaults/main/download.yml, inventory/sample/group_vars/all/offline.yml)."""

import pytest

from ansible_collections.kubewin.nodes.plugins.plugin_utils import _downloads
from ansible_collections.kubewin.nodes.plugins.plugin_utils import _kubespray as kubespray

UPSTREAM = {
    "kubernetes": "https://dl.k8s.io/release",
    "flannel": "https://github.com/flannel-io/flannel/releases/download",
    "cni": "https://github.com/containernetworking/plugins/releases/download",
    "flannel_cni": "https://github.com/flannel-io/cni-plugin/releases/download",
    "sdn_cni": "https://github.com/microsoft/windows-container-networking/releases/download",
    "nssm": "https://nssm.cc/release/nssm-2.24.zip",
}


@pytest.mark.parametrize("settings", [{}, None, {"dl_k8s_io_url": "", "github_url": "", "files_repo": ""}])
def test_without_kubespray_settings_the_upstream_origins_are_used(settings):
    assert {name: kubespray.download_url(settings, name) for name in UPSTREAM} == UPSTREAM


def test_dl_k8s_io_url_and_github_url_replace_the_origin_as_kubespray_composes_its_urls():
    """kubespray: kubelet_download_url = {{ dl_k8s_io_url }}/release/v{{ kube_version }}/bin/linux/...;
    cni_download_url = {{ github_url }}/containernetworking/plugins/releases/download/v..."""
    settings = {"dl_k8s_io_url": "https://dl-proxy.corp/", "github_url": "https://gh-proxy.corp/github"}
    got = {name: kubespray.download_url(settings, name) for name in UPSTREAM}
    assert got["kubernetes"] == "https://dl-proxy.corp/release"
    assert got["flannel"] == "https://gh-proxy.corp/github/flannel-io/flannel/releases/download"
    assert got["cni"] == "https://gh-proxy.corp/github/containernetworking/plugins/releases/download"
    assert got["sdn_cni"] == "https://gh-proxy.corp/github/microsoft/windows-container-networking/releases/download"
    assert got["nssm"] == UPSTREAM["nssm"]  # no kubespray counterpart


def test_files_repo_lays_out_each_origin_under_its_host_name_as_kubespray_offline_sample_does():
    """offline.yml: kubelet_download_url: "{{ files_repo }}/dl.k8s.io/release/v{{ kube_version }}/...",
    cni_download_url: "{{ files_repo }}/github.com/containernetworking/plugins/releases/download/..."."""
    got = {name: kubespray.download_url({"files_repo": "https://files.corp/k8s/"}, name) for name in UPSTREAM}
    assert got == {name: url.replace("https://", "https://files.corp/k8s/") for name, url in UPSTREAM.items()}
    # the kubelet URL the node then downloads is the one kubespray's offline sample names, for Windows
    assert got["kubernetes"] + "/v1.36.4/bin/windows/amd64/kubelet.exe" == \
        "https://files.corp/k8s/dl.k8s.io/release/v1.36.4/bin/windows/amd64/kubelet.exe"


def test_an_explicit_origin_wins_over_files_repo():
    settings = {"files_repo": "https://files.corp", "dl_k8s_io_url": "https://dl.corp"}
    assert kubespray.download_url(settings, "kubernetes") == "https://dl.corp/release"
    assert kubespray.download_url(settings, "cni").startswith("https://files.corp/github.com/")


HTTPS_BASES = ["https://dl.k8s.io/release", "https://github.com/flannel-io/flannel/releases/download"]


def test_https_downloads_use_https_proxy_and_http_ones_http_proxy():
    settings = {"http_proxy": "http://p1.corp:3128", "https_proxy": "http://p2.corp:3128"}
    assert kubespray.proxy(settings, HTTPS_BASES) == "http://p2.corp:3128"
    assert kubespray.proxy(settings, ["http://mirror.corp/release"]) == "http://p1.corp:3128"


def test_only_http_proxy_set_leaves_https_downloads_direct_as_in_kubespray():
    """Python's urllib (kubespray's get_url) and Go's httpproxy read https_proxy for https:// URLs only."""
    assert kubespray.proxy({"http_proxy": "http://p1.corp:3128"}, HTTPS_BASES) == ""
    assert kubespray.proxy({}, HTTPS_BASES) == ""


def test_mixed_schemes_with_different_proxies_cannot_be_one_webproxy():
    settings = {"http_proxy": "http://p1.corp:3128", "https_proxy": "http://p2.corp:3128"}
    with pytest.raises(kubespray.KubesprayValueError, match="set kubewin_http_proxy"):
        kubespray.proxy(settings, HTTPS_BASES + ["http://mirror.corp/release"])
    same = {"http_proxy": "http://p.corp:3128", "https_proxy": "http://p.corp:3128"}
    assert kubespray.proxy(same, HTTPS_BASES + ["http://mirror.corp/release"]) == "http://p.corp:3128"


def test_no_proxy_string_becomes_the_list_and_every_entry_is_usable_on_the_node():
    value = "files.corp, .corp,10.0.0.0/8,,127.0.0.1,localhost,svc,svc.cluster.local,10.233.0.0/18,fd85:ee78::/56"
    entries = kubespray.no_proxy({"no_proxy": value, "additional_no_proxy": "ignored.corp"})
    assert entries == ["files.corp", ".corp", "10.0.0.0/8", "127.0.0.1", "localhost", "svc", "svc.cluster.local",
                       "10.233.0.0/18"]
    assert _downloads.proxy_bypass_patterns(entries)  # none of them is refused by the node's translation
    assert _downloads.bypassed("https://files.corp/dl.k8s.io/release/x", entries)
    assert not _downloads.bypassed("https://dl.k8s.io/release/x", entries)


def test_without_no_proxy_additional_no_proxy_is_used():
    assert kubespray.no_proxy({"additional_no_proxy": "mirror.corp,10.1.0.0/16"}) == ["mirror.corp", "10.1.0.0/16"]
    assert kubespray.no_proxy({"no_proxy": "", "additional_no_proxy": "mirror.corp"}) == ["mirror.corp"]
    assert kubespray.no_proxy({}) == [] and kubespray.no_proxy(None) == []


def test_a_list_no_proxy_is_taken_as_is():
    assert kubespray.no_proxy({"no_proxy": ["a.corp", " b.corp ", "a.corp"]}) == ["a.corp", "b.corp"]


def test_the_filters_give_the_same_answers_and_an_ansible_error_with_the_fix():
    from ansible.errors import AnsibleFilterError

    from ansible_collections.kubewin.nodes.plugins.filter.kubespray import FilterModule

    filters = FilterModule().filters()
    assert filters["kubespray_download_url"]({"files_repo": "https://f.corp"}, "nssm") == \
        "https://f.corp/nssm.cc/release/nssm-2.24.zip"
    assert filters["kubespray_no_proxy"]({"no_proxy": "a.corp,b.corp"}) == ["a.corp", "b.corp"]
    settings = {"http_proxy": "http://p1.corp:3128", "https_proxy": "http://p2.corp:3128"}
    with pytest.raises(AnsibleFilterError, match="set kubewin_http_proxy to the proxy the Windows nodes use"):
        filters["kubespray_proxy"](settings, HTTPS_BASES + ["http://mirror.corp/release"])
