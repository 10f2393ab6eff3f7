"""crictl in the simulator (issue 23 point 4): the node_facts read lists the images, image_pull pulls one only where
crictl inspecti does not find it, a pull of an image without a manifest for the host's build fails as containerd's
platform matcher does, and the controller's decisions read those answers. No control plane."""

import os

import pytest
from winsim import core
from winsim.ps.winhost import run_kubewin_script as run_ps

# isort: split
# winsim.core has put the stand-in ansible.windows collection on sys.path.
from ansible_collections.ansible.windows.plugins.module_utils import winsim_crictl

from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import containerd as kc
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import facts as nf
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import images

CRICTL = kc.CRICTL_DIR + "\\crictl.exe"
NANO = "mcr.microsoft.com/windows/nanoserver:ltsc2022"


def _host(tmp_path, profile="ws2022-containerd"):
    host = core.create_host(str(tmp_path), "c", profile=profile)
    core.write_binary(host.local_path(CRICTL), "crictl", "1.34.0")
    return host


def _pull(host, image, pull=True):
    with host.open():
        answer = run_ps(host, "image_pull", {"Crictl": CRICTL, "CrictlConfig": kc.CRICTL_CONFIG, "Image": image,
                                             "Pull": pull, "TimeoutSeconds": 30}, False)
    return answer["result"], answer["changed"]


def _present(host):
    with host.open():
        answer = run_ps(host, "node_facts", nf.script_parameters((), None, True), False)["result"]
    return answer["images"]


def test_pulled_once_listed_by_the_facts_read_and_not_pulled_again(tmp_path):
    host = _host(tmp_path)
    assert _present(host)["code"] == 0 and images.present_images(_present(host)["output"]) == set()
    result, changed = _pull(host, NANO, pull=False)  # check mode: inspecti only
    assert changed is False and result["present"] is False and result["code"] is None
    result, changed = _pull(host, NANO)
    assert changed is True and result["code"] == 0 and "Image is up to date for sha256:" in result["output"][0]
    assert images.pull_result(NANO, result, 30)["changed"] is True
    have = images.present_images(_present(host)["output"])
    assert images.to_pull([NANO, "registry.k8s.io/pause:3.10.2"], have) == ["registry.k8s.io/pause:3.10.2"]
    result, changed = _pull(host, NANO)
    assert changed is False and result["present"] is True and result["code"] is None
    with open(os.path.join(host.dir, "processes.log")) as f:
        pulls = [line for line in f if " pull " in line]
    assert len(pulls) == 1, pulls


def test_the_pause_by_digest_is_present_by_its_digest(tmp_path):
    host = _host(tmp_path)
    ref = images.sandbox_image(20348)[0]
    result, changed = _pull(host, ref)
    assert changed and result["code"] == 0
    assert images.to_pull([ref], images.present_images(_present(host)["output"])) == []


@pytest.mark.parametrize("host_build, image_build, ok", [
    # containerd/platforms platform_windows_compat.go checkWindowsHostAndContainerCompat: below 20348 the exact build
    (17763, 17763, True), (17763, 20348, False),
    # from ltsc2022 on: the previous LTSC (none before 20348: 20348 itself) up to the host's build
    (20348, 20348, True), (20348, 17763, False), (20348, 26100, False),
    (26100, 20348, True), (26100, 26100, True), (26100, 17763, False),
    # "a 26200 host, which is in the WS2025 generation ... the floor is still the previous LTSC (20348)"
    (26200, 20348, True), (26200, 26100, True), (26100, 26200, False),
    # Windows 11 22H2 (22621), between the two LTSCs: floor 20348
    (22621, 20348, True), (22621, 26100, False),
])
def test_the_pull_matcher_follows_containerds_windows_compatibility(host_build, image_build, ok):
    """review-s9 W6: the lab's matcher was the exact build; containerd's takes older manifests from 20348 on."""
    assert winsim_crictl.compatible(host_build, image_build) is ok


def test_on_windows_server_2025_an_image_with_only_an_ltsc2022_manifest_pulls(tmp_path):
    """review-s9 W6: pause 3.9 (17763, 20348) pulls on a 26100 host with its 20348 manifest, as containerd's matcher
    chooses it (a sandbox from it may still fail to start: windows-testing#557; preflight refuses it before)."""
    host = _host(tmp_path, "ws2025-no-containers")
    with host.open():
        host.state["pipes"].append(winsim_crictl.PIPE)
    result, changed = _pull(host, "mcr.microsoft.com/oss/kubernetes/pause:3.9")
    assert changed and result["code"] == 0, result
    with host.open(save=False):
        assert [i["build"] for i in host.state["images"]] == [20348]


@pytest.mark.parametrize("profile, image, text", [
    ("ws2022-containerd", "mcr.microsoft.com/windows/nanoserver:ltsc2025", "no match for platform in manifest"),
    ("ws2022-containerd", "mcr.microsoft.com/windows/nanoserver:ltsc2019", "no match for platform in manifest"),
    ("ws2022-containerd", "registry.invalid/nothing:1", "not found"),
])
def test_a_pull_without_the_hosts_build_fails_and_names_the_fix(tmp_path, profile, image, text):
    host = _host(tmp_path, profile)
    result, changed = _pull(host, image)
    assert not changed and result["code"] == 1 and text in " ".join(result["output"])
    with pytest.raises(images.ImageError, match="kubewin_prepull_images"):
        images.pull_result(image, result, 30)


def test_without_containerd_running_the_listing_fails_and_without_crictl_it_is_not_run(tmp_path):
    host = _host(tmp_path, "ws2022-bare")
    listing = _present(host)
    assert listing["code"] == 1 and "connection error" in listing["output"]
    bare = core.create_host(str(tmp_path / "b"), "b", profile="ws2022-no-containers")
    assert _present(bare) == {"code": None, "output": ""}
