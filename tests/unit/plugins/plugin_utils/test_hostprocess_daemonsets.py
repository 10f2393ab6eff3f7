"""The images of the HostProcess DaemonSets as preflight works them out (kubewin_node_spec.hostprocess_images) and the
control_plane role applies them (prepare.yml's _kubewin_hostprocess_images, read by its templates): byte for byte
what the templates rendered through the filter hostprocess_pinned_image and the template lookup before that filter
went (hostprocess_daemonsets_golden.json, recorded on ansible-core 2.18 and 2.19 alike), so a re-run changes nothing;
what the filter refused, preflight refuses before any change with the same message, naming the variable and the fix;
and the hosts of one run in hostprocess mode need the same images."""

import json
from pathlib import Path

import pytest
import yaml

from ansible_collections.kubewin.nodes.plugins.plugin_utils import _preflight as preflight

try:  # ansible-core 2.19 templates only trusted text (data tagging)
    from ansible.template import trust_as_template
except ImportError:  # ansible-core 2.18
    def trust_as_template(text):
        return text

ROOT = Path(__file__).resolve().parents[4]
GOLDEN = json.loads((Path(__file__).parent / "hostprocess_daemonsets_golden.json").read_text())
FLANNEL, PROXY = "kubewin_flannel_hostprocess_image", "kubewin_kube_proxy_hostprocess_image"
DIGEST = "registry.corp/kubewin/flannel-hostprocess@sha256:" + "0123456789abcdef" * 4
TAG = "registry.corp/kubewin/flannel-hostprocess:v0.27.4"


def _prepare_task():
    """prepare.yml's task that imports hostprocess.yml: its when and its _kubewin_hostprocess_images."""
    block = yaml.safe_load((ROOT / "roles/control_plane/tasks/prepare.yml").read_text())[0]["block"]
    task = next(t for t in block if t.get("ansible.builtin.import_tasks") == "hostprocess.yml")
    return task["when"], task["vars"]["_kubewin_hostprocess_images"]


def _node(images, pins, mode="hostprocess", host="win-2", hosts=None):
    """What node_preflight works out for a host: (failures, node)."""
    failures, dummy, node = preflight.run_checks(dict(
        node_name=host, cluster_pod_subnet="10.244.0.0/16", cluster_service_subnet="10.96.0.0/12",
        server_version="v1.37.2", kube_network_plugin="flannel", deployment_mode=mode, hostprocess_images=images,
        hostprocess_image_pins=pins, host=host, hostprocess_hosts=hosts or {}))
    return failures, node


def _applied(render, hostvars, inputs):
    """(whether prepare applies the DaemonSets, {template: text}) for the Windows hosts' ``hostvars``, through the
    template lookup as hostprocess.yml reads them."""
    when, images = _prepare_task()
    variables = dict(groups={"kube_windows_nodes": list(hostvars)}, hostvars=hostvars,
                     _kubewin_hostprocess_images=trust_as_template(images),
                     kubewin_join={"api_server_endpoint": inputs["api_server_endpoint"]},
                     _kubewin_flannel={"network_name": inputs["network_name"]},
                     _kubewin_flannel_namespace=inputs["flannel_namespace"],
                     _kubewin_flannel_configmap=inputs["flannel_configmap"])
    if not render("{{ %s }}" % when, **variables):
        return False, {}
    return True, {name: render("{{ lookup('ansible.builtin.template', %r) }}"
                               % str(ROOT / "roles/control_plane/templates" / name), **variables)
                  for name in ("flannel-windows.yml.j2", "kube-proxy-windows.yml.j2")}


@pytest.mark.parametrize("case", GOLDEN, ids=[c["id"] for c in GOLDEN])
def test_the_daemonsets_are_byte_for_byte_what_the_filter_rendered(render, case):
    inputs = case["inputs"]
    failures, node = _node(inputs["images"], inputs["pins"])
    if case["errors"]:
        # what the filter refused on the control-plane host, preflight refuses on the Windows host, with its message
        assert node["hostprocess_images"] is None
        messages = [f["message"] for f in failures]
        for error in case["errors"].values():
            assert error in messages
        assert {f["variable"] for f in failures} <= {FLANNEL, PROXY, "kubewin_hostprocess_image_pins"}
        return
    assert failures == []
    # the first Windows host of the run in hostprocess mode: win-1 is not in the run (no spec), win-0 is in services
    # mode, win-3 comes later (and preflight refused the run had its images differed)
    hostvars = {"win-0": {"kubewin_node_spec": dict(node, hostprocess_images=None)}, "win-1": {},
                "win-2": {"kubewin_node_spec": node},
                "win-3": {"kubewin_node_spec": dict(node, hostprocess_images={FLANNEL: DIGEST, PROXY: DIGEST})}}
    applied, rendered = _applied(render, hostvars, inputs)
    assert applied and rendered == case["rendered"]


def test_the_golden_cases_cover_digests_pinned_tags_and_both_refusals():
    ids = {c["id"] for c in GOLDEN}
    assert {"both-pinned-by-digest", "tags-with-pins", "tag-without-pin-refused", "pin-not-a-digest-refused"} <= ids
    texts = "".join(t for c in GOLDEN for t in c["rendered"].values() if t)
    assert "@sha256:" + "b" * 64 in texts  # a tag's pin, not the tag
    assert ":v0.27.4\"" not in texts


def test_no_daemonset_is_applied_when_no_host_of_the_run_is_in_hostprocess_mode(render):
    dummy, node = _node({FLANNEL: DIGEST, PROXY: DIGEST}, {}, mode="services")
    assert node["hostprocess_images"] is None
    applied, dummy = _applied(render, {"win-1": {"kubewin_node_spec": node}, "win-2": {}}, GOLDEN[0]["inputs"])
    assert applied is False


def test_an_image_by_tag_runs_only_through_its_digest_pin():
    """(what the filter's own test asserted, now of preflight's node)"""
    digest = "registry.example/flannel@sha256:" + "b" * 64
    pins = {"registry.example/flannel:v0.26.7": digest}
    assert _node({FLANNEL: "registry.example/flannel:v0.26.7"}, pins)[1]["hostprocess_images"] == {FLANNEL: digest}
    assert _node({FLANNEL: digest}, {})[1]["hostprocess_images"] == {FLANNEL: digest}
    failures, node = _node({FLANNEL: "registry.example/flannel:v0.26.7"}, {})
    assert node["hostprocess_images"] is None
    assert [f["variable"] for f in failures] == [FLANNEL]
    assert failures[0]["message"].startswith("kubewin_flannel_hostprocess_image is 'registry.example/flannel:v0.26.7'")


def _host(images, pins=None, mode="hostprocess"):
    return {"deployment_mode": mode, "images": images, "pins": pins or {}}


def test_hosts_of_the_run_whose_images_differ_are_refused_naming_the_hosts_the_variable_and_the_fix():
    other = "registry.corp/kubewin/flannel-hostprocess@sha256:" + "e" * 64
    mine = {FLANNEL: TAG, PROXY: DIGEST}
    hosts = {"win-1": _host(mine, {TAG: DIGEST}),
             "win-2": _host({FLANNEL: other, PROXY: DIGEST}),
             "win-3": _host({FLANNEL: other, PROXY: DIGEST}),
             "win-4": _host({FLANNEL: "registry.corp/x:v1", PROXY: "registry.corp/y:v2"}, mode="services"),
             "win-5": _host({FLANNEL: "registry.corp/x:v1", PROXY: DIGEST})}  # refused by its own preflight
    failures, node = _node(mine, {TAG: DIGEST}, host="win-1", hosts=hosts)
    assert [(f["check"], f["variable"]) for f in failures] == [("hostprocess_hosts", FLANNEL)]
    msg = failures[0]["message"]
    assert msg.startswith("%s resolves to %s on win-1 but to %s on win-2, win-3 (pinned by digest)"
                          % (FLANNEL, DIGEST, other)), msg
    assert "set %s (and its pin in kubewin_hostprocess_image_pins) once for all Windows hosts" % FLANNEL in msg
    assert "win-4" not in msg and "win-5" not in msg
    # the same images, one by tag and pin and one by digest, agree; so does a host in services mode
    same = dict(hosts, **{"win-2": _host({FLANNEL: DIGEST, PROXY: DIGEST}), "win-3": _host({}, mode="services")})
    assert _node(mine, {TAG: DIGEST}, host="win-1", hosts=same)[0] == []
    # a host in services mode is not compared with anyone
    assert _node(mine, {TAG: DIGEST}, mode="services", host="win-1", hosts=hosts)[0] == []
