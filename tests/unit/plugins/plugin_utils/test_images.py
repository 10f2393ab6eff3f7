"""Issue 23 points 3 and 4: the pause image for the host's Windows build, pinned by digest, refused where its manifest
list is not known to carry that build; the images pulled before the node takes work, refused when malformed, and
not pulled again when the node has them."""

import pytest

from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import images
from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight import images as pimages

DIGEST = "sha256:" + "ab" * 32
PAUSE = "registry.k8s.io/pause:3.10.2@sha256:f548e0e8e3dc1896ca956272154dde3314e8cc4fde0a57577ee9fa1c63f5baf4"
PLANNED = {"kubewin_containerd_planned": "True"}


@pytest.mark.parametrize("build", [17763, 20348, 26100])
def test_unset_each_supported_build_gets_the_table_pause_by_digest(build):
    assert images.sandbox_image(build) == (PAUSE, [])


def test_the_old_default_has_no_ws2025_manifest_and_is_refused_there_naming_variable_and_fix():
    """review-s8 W7: no source says mcr.microsoft.com/oss/kubernetes/pause:3.9 (old default) has a 26100 manifest."""
    ref, problems = images.sandbox_image(26100, "mcr.microsoft.com/oss/kubernetes/pause:3.9")
    assert ref is None and len(problems) == 1
    assert "kubewin_sandbox_image" in problems[0] and "no manifest for this host's Windows build 26100" in problems[0]
    assert "registry.k8s.io/pause:3.10.2" in problems[0] and "leave kubewin_sandbox_image unset" in problems[0]
    # pause 3.10 and 3.10.1 neither (kubernetes-sigs/windows-testing#557), pinned or not
    ref, problems = images.sandbox_image(26100, "registry.k8s.io/pause:3.10.1@" + DIGEST)
    assert ref is None and "26100" in problems[0]


def test_a_tag_must_be_pinned_by_digest_directly_or_through_the_pins():
    tag = "mcr.microsoft.com/oss/kubernetes/pause:3.9"
    ref, problems = images.sandbox_image(20348, tag)
    assert ref is None and "pin it by digest" in problems[0] and "kubewin_hostprocess_image_pins" in problems[0]
    pinned = "mcr.microsoft.com/oss/kubernetes/pause@" + DIGEST
    assert images.sandbox_image(20348, tag, pins={tag: pinned}) == (pinned, [])
    assert images.sandbox_image(20348, "registry.k8s.io/pause:3.10.2") == (PAUSE, [])


def test_an_image_the_pin_list_does_not_know_needs_its_builds_stated_and_one_of_them_the_hosts():
    mine = "registry.example/pause@" + DIGEST
    ref, problems = images.sandbox_image(20348, mine)
    assert ref is None and "kubewin_sandbox_image_builds" in problems[0] and "crane manifest" in problems[0]
    assert images.sandbox_image(20348, mine, ["10.0.20348", "17763"]) == (mine, [])
    ref, problems = images.sandbox_image(26100, mine, ["10.0.20348.2113"])
    assert ref is None and "no manifest for this host's Windows build 26100" in problems[0]
    ref, problems = images.sandbox_image(20348, mine, ["ltsc2022"])
    assert ref is None and problems[0].startswith("kubewin_sandbox_image_builds is")


def test_a_build_outside_the_table_is_refused_unset_the_stricter_choice():
    ref, problems = images.sandbox_image(27000)
    assert ref is None and "no pause image is known to carry Windows build 27000" in problems[0]
    assert "kubewin_sandbox_image_builds: [27000]" in problems[0]


def test_preflight_checks_the_sandbox_image_only_where_it_writes_containerds_config():
    assert pimages.sandbox_image("10.0.26100", PLANNED, {})[0] == PAUSE
    ref, (fails, warns) = pimages.sandbox_image("10.0.26100", dict(
        PLANNED, kubewin_sandbox_image="mcr.microsoft.com/oss/kubernetes/pause:3.9"), {})
    assert ref is None and [f["variable"] for f in fails] == ["kubewin_sandbox_image"] and warns == []
    assert pimages.sandbox_image("10.0.26100", {"kubewin_containerd_planned": "False",
                                                "kubewin_sandbox_image": "Bad:Ref"}, {}) == (None, ([], []))
    ref, (fails, dummy) = pimages.sandbox_image("10.0.20348", dict(PLANNED, kubewin_sandbox_image="Bad:Ref"), {})
    assert "is not an image reference" in fails[0]["message"]


def test_normalized_as_the_cri_lists_images():
    assert images.normalized("nginx") == "docker.io/library/nginx:latest"
    assert images.normalized("foo/bar:1") == "docker.io/foo/bar:1"
    assert images.normalized("localhost:5000/x") == "localhost:5000/x:latest"
    assert images.normalized("mcr.microsoft.com/windows/servercore:ltsc2022") == \
        "mcr.microsoft.com/windows/servercore:ltsc2022"


LISTING = ('{"images": [{"id": "sha256:1", "repoTags": ["docker.io/library/nginx:latest"], "repoDigests": '
           '["docker.io/library/nginx@%s"]}, {"id": "sha256:2", "repoTags": [], "repoDigests": '
           '["registry.k8s.io/pause@%s"]}]}' % (DIGEST, DIGEST))


def test_images_the_node_has_are_not_pulled_again():
    have = images.present_images(LISTING)
    wanted = ["nginx", "registry.k8s.io/pause:3.10.2@" + DIGEST, "nginx@" + DIGEST, "mcr.microsoft.com/a/b:1",
              "mcr.microsoft.com/a/b:1"]
    assert images.to_pull(wanted, have) == ["mcr.microsoft.com/a/b:1"]
    assert images.present_images("not json") is None


def _pull(values, runtime="containerd"):
    todo, (fails, warns) = pimages.images_to_pull(runtime, values)
    assert warns == []
    return todo, [(f["variable"], f["message"]) for f in fails]


def test_prepull_decided_from_the_facts_read():
    present = {"code": 0, "output": LISTING}
    assert _pull({"kubewin_prepull_images": ["nginx", "a.b/c:1"], "kubewin_images_present": present}) == (
        ["a.b/c:1"], [])
    # a bare host (no crictl yet) that this run installs containerd on: every entry
    assert _pull(dict(PLANNED, kubewin_prepull_images=["nginx"], kubewin_images_present={"code": None})) == (
        ["nginx"], [])
    assert _pull({"kubewin_prepull_images": [], "kubewin_images_present": None}) == ([], [])


@pytest.mark.parametrize("values, text", [
    ({"kubewin_prepull_images": ["ok:1", "Bad/Name:1"]}, "entry 2 ('Bad/Name:1'): it is not an image reference"),
    ({"kubewin_prepull_images": "nginx"}, "must be a list"),
    ({"kubewin_prepull_images": ["nginx"], "kubewin_images_present": {"code": None}}, "set kubewin_containerd_install"),
    ({"kubewin_prepull_images": ["nginx"], "kubewin_images_present": {"code": 1, "output": "connect: refused"}},
     "could not be listed"),
])
def test_prepull_refusals_name_the_variable_and_the_fix(values, text):
    todo, fails = _pull(values)
    assert todo == [] and len(fails) == 1 and fails[0][0] == "kubewin_prepull_images" and text in fails[0][1], fails


def test_prepull_on_docker_is_refused():
    assert "crictl and containerd" in _pull({"kubewin_prepull_images": ["nginx"]}, runtime="docker")[1][0][1]


@pytest.mark.parametrize("answer, text", [
    ({"crictl": False}, "crictl is not at"),
    ({"crictl": True, "present": False, "code": 1460, "output": []}, "did not finish within 30 s"),
    ({"crictl": True, "present": False, "code": 1,
      "output": ['failed to pull and unpack image "x": no match for platform in manifest: not found']},
     "no manifest for this host's Windows build"),
])
def test_pull_failures_name_the_image_and_the_fix(answer, text):
    with pytest.raises(images.ImageError, match=text):
        images.pull_result("x", answer, 30)


def test_pull_results():
    assert images.pull_result("x", {"crictl": True, "present": True}, 30)["changed"] is False
    assert images.pull_result("x", {"crictl": True, "present": False, "code": None}, 30)["changed"] is True
    assert images.pull_result("x", {"crictl": False}, 30, check_mode=True)["changed"] is True
    assert images.pull_result("x", {"crictl": True, "present": False, "code": 0, "seconds": 7}, 30) == {
        "changed": True, "present": False, "seconds": 7}
