"""The one version parser: both kube_version spellings, runtime version output, the API server's gitVersion."""

import os
import re

import pytest

from ansible_collections.kubewin.nodes.plugins.filter.node import FilterModule
from ansible_collections.kubewin.nodes.plugins.module_utils import _versions as versions


@pytest.mark.parametrize("text, expected", [
    ("v1.33.2", (1, 33, 2)), ("1.33.2", (1, 33, 2)), ("1.30", (1, 30, 0)), ("v1.34.0-rc.1", (1, 34, 0)),
    (" v1.29.10 ", (1, 29, 10)), ("v1.30.1+k3s1", (1, 30, 1)), ("", None), ("latest", None), ("1", None),
    ("v1.x.2", None), (None, None), ("1.33.2 extra", None),
])
def test_whole_versions(text, expected):
    assert versions.parse(text) == expected


@pytest.mark.parametrize("output, expected", [
    ("containerd github.com/containerd/containerd/v2 v2.0.4 1a43cb6a", (2, 0, 4)),
    ("containerd github.com/containerd/containerd v1.6.28 ae07eda", (1, 6, 28)),
    ("Docker version 24.0.7, build afdd53b", (24, 0, 7)), ("not recognized", None), (None, None),
])
def test_versions_inside_text(output, expected):
    assert versions.parse(output, whole=False) == expected


@pytest.mark.parametrize("text, tag", [
    ("1.36.4", "v1.36.4"), ("v1.36.4", "v1.36.4"), (" 1.36.4 ", "v1.36.4"), ("1.37.0-rc.1", "v1.37.0-rc.1"),
    ("v1.37.0-alpha.2", "v1.37.0-alpha.2"), ("1.36", None), ("v1.36.4-eks-1", None), ("vv1.36.4", None),
    ("V1.36.4", None), ("1.36.4.1", None), ("", None), (None, None), ("latest", None),
])
def test_both_kube_version_spellings_give_one_release_tag(text, tag):
    assert versions.kube_release(text) == tag


@pytest.mark.parametrize("git_version, tag", [
    ("v1.37.2", "v1.37.2"), ("v1.28.3-eks-4f4795d", "v1.28.3"), ("v1.30.1+k3s1", "v1.30.1"),
    ("v1.37.0-rc.1", "v1.37.0-rc.1"), ("v1.29", None), ("", None), (None, None),
])
def test_the_api_server_release(git_version, tag):
    assert versions.server_release(git_version) == tag


@pytest.mark.parametrize("kube_version, server, expected", [
    ("1.36.4", "v1.37.2", "v1.36.4"),      # kubespray's spelling: the v is added
    ("v1.36.4", "v1.37.2", "v1.36.4"),     # kubeadm's
    (None, "v1.37.2", "v1.37.2"),          # no version anywhere: the API server's
    ("", "v1.28.3-eks-4f4795d", "v1.28.3"),
    ("1.36", "v1.37.2", "1.36"),           # malformed: unchanged, for preflight to name
    (None, None, ""),
])
def test_the_version_the_node_installs(kube_version, server, expected):
    assert versions.effective_kube_version(kube_version, server) == expected
    # the roles reach it through the filter: kube_version | kubewin.nodes.kube_release(server)
    assert FilterModule().filters()["kube_release"](kube_version, server) == expected


def test_release_tags_and_formatting():
    assert versions.release_tag("v0.26.7") == "v0.26.7" and versions.release_tag("0.26.7") == "v0.26.7"
    assert versions.release_tag("v1.6.2-flannel1") == "v1.6.2-flannel1" and versions.release_tag("v1.6") is None
    assert versions.format_version((1, 36, 4)) == "v1.36.4" and versions.format_version((1, 36, 4), 2) == "v1.36"
    assert versions.format_version((2, 0, 4), prefix="") == "2.0.4"


@pytest.mark.parametrize("field, number", [("28", 28), ("28+", 28), (" 1", 1), ("", None), (None, None), ("x1", None)])
def test_version_fields_of_provider_builds(field, number):
    """The API server's /version major and minor; managed clusters write minor '28+'."""
    assert versions.leading_number(field) == number


def test_no_other_version_parser_in_the_collection():
    """Issue 9: one version parser. A 'v?' before a digit pattern is how every former copy began."""
    root = os.path.join(os.path.dirname(versions.__file__), "..")
    offenders = []
    for folder, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            if name.endswith(".py") and os.path.abspath(path) != os.path.abspath(versions.__file__):
                with open(path) as f:
                    if re.search(r"v\?\(?\\d", f.read()):
                        offenders.append(os.path.relpath(path, root))
    assert offenders == []
