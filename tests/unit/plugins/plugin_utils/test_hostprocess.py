import pytest

from ansible_collections.kubewin.nodes.plugins.plugin_utils import _hostprocess as hp
from ansible_collections.kubewin.nodes.plugins.plugin_utils import _preflight as preflight

TAG = "registry.corp/kubewin/flannel-hostprocess:v0.27.4"
DIGEST = "registry.corp/kubewin/flannel-hostprocess@sha256:" + "0123456789abcdef" * 4


@pytest.mark.parametrize("ref, ok", [
    (DIGEST, True),
    ("registry.corp:5000/mirror/kube-proxy:v1.37.2@sha256:" + "a" * 64, True),  # tag and digest: the digest wins
    (TAG, False),
    ("registry.corp/flannel@sha256:" + "A" * 64, False),          # digests are lowercase hex
    ("registry.corp/flannel@sha256:" + "a" * 63, False),
    ("flannel@sha512:" + "a" * 128, False),
    ("", False),
])
def test_only_a_sha256_digest_reference_counts_as_pinned(ref, ok):
    assert hp.is_digest_reference(ref) is ok


def test_a_tag_is_used_only_through_its_pin():
    assert hp.pinned_image(DIGEST) == DIGEST
    assert hp.pinned_image(TAG, {TAG: DIGEST}) == DIGEST
    with pytest.raises(hp.HostProcessError, match="kubewin_flannel_hostprocess_image is .*pin it by digest"):
        hp.pinned_image(TAG, {}, "kubewin_flannel_hostprocess_image")


def test_preflight_names_the_variable_and_the_fix_in_hostprocess_mode_only():
    images = {"kubewin_flannel_hostprocess_image": TAG, "kubewin_kube_proxy_hostprocess_image": DIGEST}
    fails, warns = preflight.check_hostprocess_images("hostprocess", images, {})
    assert warns == []
    assert [f["variable"] for f in fails] == ["kubewin_flannel_hostprocess_image"]
    assert "kubewin_hostprocess_image_pins" in fails[0]["message"] and "crane digest" in fails[0]["message"]
    assert preflight.check_hostprocess_images("hostprocess", images, {TAG: DIGEST}) == ([], [])
    assert preflight.check_hostprocess_images("services", images, {}) == ([], [])
    fails = preflight.check_hostprocess_images("hostprocess", images, {TAG: "flannel:latest"})[0]
    assert [f["variable"] for f in fails] == ["kubewin_hostprocess_image_pins"]  # one problem, one message
    assert "not an image pinned by digest" in fails[0]["message"]


@pytest.mark.parametrize("ref, pins", [
    ("docker.io/sigwindowstools/flannel:v0.26.7-hostprocess", {}),
    ("sigwindowstools/kube-proxy:v1.37.2-calico-hostprocess", {}),
    ("docker.io/sigwindowstools/flannel@sha256:" + "a" * 64, {}),  # pinned or not: its start script cannot run here
    ("sigwindowstools/flannel", {"sigwindowstools/flannel": DIGEST}),  # no tag, pinned to something else
    ("index.docker.io/sigwindowstools/flannel:v0.26.6-hostprocess", {}),
    ("registry-1.docker.io/SigWindowsTools/flannel:v0.26.6-hostprocess", {}),
    # a tag of one's own pinned to sig-windows-tools' digest
    (TAG, {TAG: "docker.io/sigwindowstools/flannel@sha256:" + "b" * 64}),
])
def test_sig_windows_tools_images_are_refused_with_the_reason_and_the_fix(ref, pins):
    images = {"kubewin_flannel_hostprocess_image": ref, "kubewin_kube_proxy_hostprocess_image": DIGEST}
    fails, dummy = preflight.check_hostprocess_images("hostprocess", images, pins)
    assert [f["variable"] for f in fails] == ["kubewin_flannel_hostprocess_image"]
    msg = fails[0]["message"]
    assert "sig-windows-tools image" in msg and "#385" in msg and "Calico" in msg and "HostProcess images" in msg
    assert "kubewin_deployment_mode: services" in msg
    assert preflight.check_hostprocess_images("services", images, {}) == ([], [])


def test_hostprocess_mode_needs_both_images_set():
    fails, dummy = preflight.check_hostprocess_images(
        "hostprocess", {"kubewin_flannel_hostprocess_image": "", "kubewin_kube_proxy_hostprocess_image": None}, {})
    wanted = ["kubewin_flannel_hostprocess_image", "kubewin_kube_proxy_hostprocess_image"]
    assert [f["variable"] for f in fails] == wanted
    assert all("is not set" in f["message"] and "roles/control_plane/README.md" in f["message"] for f in fails)
    # an image of the operator's own by another name is fine (pinned)
    assert hp.unusable_images({"kubewin_flannel_hostprocess_image": "registry.corp/sigwindowstools-x/flannel:1"}) == []
