"""Issue 23: containerd's install refused in preflight before any change, naming the variable and the fix: the
choice, a version that is no release (or not published: its checksum file is missing), a pinned SHA-256 the published
file contradicts, malformed registry mirrors (the sandbox image: test_images.py)."""

import pytest

from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import containerd_support as cs
from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight import downloads as pd
from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight.runtime import check_containerd_install

PLANNED = {"kubewin_containerd_install": "auto", "kubewin_containerd_planned": "True",
           "kubewin_containerd_version": "2.3.5", "kubewin_crictl_version": "1.34.0",
           "kubewin_sandbox_image": "mcr.microsoft.com/oss/kubernetes/pause:3.9",
           "kubewin_containerd_registry_mirrors": []}
BASE = "https://github.com/containerd/containerd/releases/download"
CTRD = BASE + "/v2.3.5/containerd-2.3.5-windows-amd64.tar.gz"
SHA = "cd" * 32


def messages(values, runtime="containerd"):
    failures, warnings = check_containerd_install(runtime, values)
    assert warnings == []
    return [(f["variable"], f["message"]) for f in failures]


def test_good_inputs_pass_and_nothing_is_checked_when_nothing_is_installed():
    assert messages(PLANNED) == []
    assert messages(dict(PLANNED, kubewin_containerd_planned="False", kubewin_sandbox_image="Bad:Image")) == []
    assert messages(dict(PLANNED, kubewin_sandbox_image="Bad:Image"), runtime="docker") == []


@pytest.mark.parametrize("change, variable, text", [
    ({"kubewin_containerd_install": "yes"}, "kubewin_containerd_install", "must be one of auto, always, never"),
    ({"kubewin_containerd_version": "v2.3"}, "kubewin_containerd_version", "not a release version like 2.3.5"),
    ({"kubewin_containerd_version": "latest"}, "kubewin_containerd_version", "not a release version"),
    ({"kubewin_crictl_version": ""}, "kubewin_crictl_version", "not a release version"),
    ({"kubewin_containerd_registry_mirrors": [{"prefix": "docker.io", "mirrors": [{"host": "mirror:5000"}]}]},
     "kubewin_containerd_registry_mirrors", "entry 1: mirror host 'mirror:5000' must be a URL"),
])
def test_each_bad_input_names_its_variable_and_the_fix(change, variable, text):
    got = messages(dict(PLANNED, **change))
    assert len(got) == 1 and got[0][0] == variable and text in got[0][1], got


def test_a_version_that_is_not_published_names_the_containerd_version_variable():
    """An unknown version: its .sha256sum is not at the base URL (nor pinned), so no checksum, refused."""
    download = {"url": BASE + "/v9.9.9/containerd-9.9.9-windows-amd64.tar.gz", "extract_dir": "C:\\c",
                "algorithm": "sha256"}

    def fetch(url):
        raise OSError("HTTP 404")

    failures = pd.download_failures([download], fetch, lambda url: None,
                                    {"values": {"kubewin_containerd_version": "9.9.9"}})
    assert len(failures) == 1 and failures[0]["variable"] == "kubewin_containerd_version"
    assert download["url"] + ".sha256sum" in failures[0]["message"]
    assert "the URLs with /v9.9.9/ hold release v9.9.9 (from kubewin_containerd_version)" in failures[0]["message"]


def _offline(url):
    raise OSError("offline: %s" % url)


def test_a_pinned_sha256_the_published_file_contradicts_is_a_mismatch():
    published = "%s  containerd-2.3.5-windows-amd64.tar.gz\n" % ("ab" * 32)
    download = {"url": CTRD, "extract_dir": "C:\\c", "algorithm": "sha256", "checksum": SHA}
    failures = pd.download_failures([download], {CTRD + ".sha256sum": published}.__getitem__, lambda url: None, {})
    assert [f["variable"] for f in failures] == ["kubewin_checksums"]
    assert failures[0]["message"].startswith("checksum mismatch for %s: kubewin_checksums pins sha256 %s" % (CTRD, SHA))
    # the same pin as published, or a file that cannot be read: no finding
    assert pd.download_failures([download], {CTRD + ".sha256sum": SHA}.__getitem__, lambda url: None, {}) == []
    assert pd.mismatched_pins([download], _offline) == []


def test_a_sha512_pin_is_never_compared():
    """The SHA-512 downloads keep their behaviour: a pin wins and no checksum file is fetched for it."""
    assert pd.mismatched_pins([{"url": "https://x/flanneld.exe", "dest": "C:\\k\\f.exe", "checksum": "0" * 128}],
                              lambda url: pytest.fail("fetched %s" % url)) == []


def test_always_over_an_installed_containerd_of_another_release_is_refused_before_any_change():
    # review-s8 W2: tar.exe over a running containerd.exe and the pods' shims stops half-way on Windows
    installed = {"service_exists": True, "service_status": "Running", "version": "2.1.4"}
    got = messages(dict(PLANNED, kubewin_containerd_install="always", kubewin_containerd_installed=installed))
    assert len(got) == 1 and got[0][0] == "kubewin_containerd_version", got
    assert "containerd 2.1.4 is installed" in got[0][1] and "set kubewin_containerd_version to 2.1.4" in got[0][1]
    # the same release (the collection's own install, re-run with always) or no containerd yet: nothing to refuse
    assert messages(dict(PLANNED, kubewin_containerd_installed=dict(installed, version="2.3.5"))) == []
    assert messages(dict(PLANNED, kubewin_containerd_installed={"service_exists": False})) == []


# Issue 23 point 2: containerd's RELEASES.md "Kubernetes Support" table (containerd/containerd 301026e5)
@pytest.mark.parametrize("version, kube, supported", [
    ("2.2.0", (1, 35), True), ("2.1.5", (1, 35), True), ("2.1.4", (1, 35), False), ("1.7.28", (1, 35), True),
    ("1.6.39", (1, 35), False),  # 1.6 has no row from Kubernetes 1.35
    ("1.7.27", (1, 34), False), ("1.7.28", (1, 34), True), ("2.0.6", (1, 34), True), ("2.0.5", (1, 34), False),
    ("2.3.0", (1, 36), True), ("2.1.9", (1, 36), False), ("2.3.0-rc.1", (1, 36), False), ("2.3.1-rc.1", (1, 36), True),
    ("2.3.5", (1, 37), True), ("2.1.5", (1, 37), False),  # newer than the table: its newest row
    ("1.6.36", (1, 30), True), ("1.6.35", (1, 30), False),  # older than the table: its oldest row
    ("9.9.9", (1, 37), False),
])
def test_support_table(version, kube, supported):
    assert (cs.support_problem(version, kube) is None) == supported


def test_an_unsupported_release_for_the_target_kubernetes_names_the_variable_and_the_table():
    failures = check_containerd_install("containerd", dict(PLANNED, kubewin_containerd_version="2.1.5"), (1, 37, 2))[0]
    assert [f["variable"] for f in failures] == ["kubewin_containerd_version"]
    assert failures[0]["message"] == (
        "kubewin_containerd_version is 2.1.5: containerd 2.1.5 is not a version containerd's RELEASES.md, Kubernetes "
        "Support recommends for Kubernetes 1.37 (its row for 1.36, the newest it has): 2.3.0+, 2.2.0+; set it to such "
        "a release")
    assert check_containerd_install("containerd", PLANNED, (1, 37, 2)) == ([], [])
    # what the collection does not install (auto over an existing containerd) is not held to the table
    assert check_containerd_install("containerd", dict(PLANNED, kubewin_containerd_planned="False",
                                                       kubewin_containerd_version="2.1.5"), (1, 37, 2)) == ([], [])


def test_the_default_release_on_a_cluster_older_than_its_row_is_installed_with_a_warning():
    """review-s9 W2: 2.3.5 (the default) is in no row before Kubernetes 1.36, which RELEASES.md calls recommended, not
    required: a 1.35 cluster's bare host must not be refused with the defaults. Older minors and low patches still
    are."""
    failures, warnings = check_containerd_install("containerd", PLANNED, (1, 35, 4))
    assert failures == [] and [w["variable"] for w in warnings] == ["kubewin_containerd_version"]
    assert "newer minor than the table lists is installed anyway" in warnings[0]["message"]
    assert cs.newer_than_listed("2.3.5", (1, 32)) and not cs.newer_than_listed("2.2.0", (1, 35))
    failures = check_containerd_install("containerd", dict(PLANNED, kubewin_containerd_version="2.1.4"), (1, 35, 4))[0]
    assert [f["variable"] for f in failures] == ["kubewin_containerd_version"]


INSTALLED = {"service_exists": True, "service_status": "Running", "version": "2.2.4", "managed": True}


def test_upgrade_yml_replaces_the_collections_containerd_and_other_playbooks_point_to_it():
    always = dict(PLANNED, kubewin_containerd_install="always", kubewin_containerd_installed=INSTALLED)
    got = messages(always)
    assert len(got) == 1, got
    assert "run playbooks/upgrade.yml, which drains the node and upgrades the collection's" in got[0][1]
    assert messages(dict(always, kubewin_containerd_upgrade="True")) == []
    # another installation (its service runs another program) is never replaced
    other = dict(always, kubewin_containerd_upgrade="True", kubewin_containerd_installed=dict(INSTALLED, managed=False))
    assert "remove it first" in messages(dict(other, kubewin_containerd_upgrade="False"))[0][1]
    # scale-up with auto leaves it alone, and says so (it was silent before)
    failures, warnings = check_containerd_install("containerd", dict(
        PLANNED, kubewin_containerd_planned="False", kubewin_containerd_installed=INSTALLED))
    assert failures == [] and [w["variable"] for w in warnings] == ["kubewin_containerd_version"]
    assert ("containerd 2.2.4 is installed on this host and kubewin_containerd_version is 2.3.5"
            in warnings[0]["message"])
    assert "playbooks/upgrade.yml upgrades it" in warnings[0]["message"]
    for quiet in (dict(INSTALLED, managed=False), dict(INSTALLED, version="2.3.5")):
        assert check_containerd_install("containerd", dict(PLANNED, kubewin_containerd_planned="False",
                                                           kubewin_containerd_installed=quiet)) == ([], [])
    assert check_containerd_install("containerd", dict(PLANNED, kubewin_containerd_planned="False",
                                                       kubewin_containerd_install="never",
                                                       kubewin_containerd_installed=INSTALLED)) == ([], [])
