"""Issue 20 item 4: every input the user sets is refused by preflight, before anything changes, naming the variable:
node labels and taints, kubelet flags against that version's real flag set (and the flags that weaken the kubelet,
security-2.md N9), two hosts with one node name, numeric ranges and durations, and Windows Server 2025's update level
for overlay networking (realnode.md F5)."""

import ast
from pathlib import Path

import pytest
import yaml

from ansible_collections.kubewin.nodes.plugins.modules import node_preflight
from ansible_collections.kubewin.nodes.plugins.plugin_utils import _preflight as preflight
from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight import kubelet

ROOT = Path(__file__).resolve().parents[4]

VALID = dict(
    node_name="win-worker-1",
    hostname="WIN-WORKER-1",
    windows_build="10.0.20348.2113",
    container_runtime="containerd",
    deployment_mode="services",
    kube_pods_subnet="10.244.0.0/16",
    kube_service_addresses="10.96.0.0/12",
    cluster_pod_subnet="10.244.0.0/16",
    cluster_service_subnet="10.96.0.0/12",
    kube_network_plugin="flannel",
    cluster_flannel=dict(found=True, backend_type="vxlan", vni=4096, port=4789, network="10.244.0.0/16"),
    kube_version="v1.37.2",
    server_version="v1.37.2",
    adapters=[dict(name="Ethernet0", ipv4=["192.168.10.21/24"])],
)


# Shorthands of the tests for the variables node_preflight takes in ``values``.
SHORT = {"node_labels": "kubewin_node_labels", "node_taints": "kubewin_node_taints",
         "kubelet_extra_args": "kubewin_kubelet_extra_args", "kubelet_allow_insecure": "kubewin_kubelet_allow_insecure"}


def run(**changes):
    inputs = dict(VALID)
    values = {}
    for key in ("numbers", "durations", "kubespray_hardening"):
        values.update(changes.pop(key, {}))
    for short, variable in SHORT.items():
        if short in changes:
            values[variable] = changes.pop(short)
    inputs.update(changes, values=values)
    failures, warnings, dummy = preflight.run_checks(inputs)
    return failures, warnings


def only(findings, variable):
    mine = [f for f in findings if f["variable"] == variable]
    assert len(mine) == 1, findings
    return mine[0]["message"]


def test_the_valid_inputs_pass():
    failures, warnings = run(
        node_labels={"example.com/pool": "windows", "tier": 3, "old": None},
        node_taints=[dict(key="os", value="windows", effect="NoSchedule"),
                     dict(key="os", value="windows", effect="NoExecute"), dict(key="gone", state="absent")],
        kubelet_extra_args={"max-pods": 250, "v": 2, "windows-priorityclass": "ABOVE_NORMAL_PRIORITY_CLASS",
                            "node-labels": "node.kubernetes.io/pool=win,example.com/x=y",
                            "register-with-taints": "os=windows:NoSchedule"},
        node_names={"win1": "win-worker-1", "win2": "win-worker-2"}, host="win1",
        numbers={"kubewin_ready_timeout": 600, "kubewin_node_token_renew_fraction": "0.5",
                 "kubewin_node_token_expiration_seconds": "604800", "kubewin_vswitch_settle_seconds": 0},
        durations={"kubewin_bootstrap_token_ttl": "30m"})
    assert failures == []
    # max-pods and register-with-taints are config-file flags: one warning, as the kubelet logs at each start
    assert "--max-pods, --register-with-taints still work, but" in only(warnings, "kubewin_kubelet_extra_args")


# (changes, variable, phrases of its one failure)
BAD = [
    # labels: key and value forms (apimachinery IsQualifiedName / IsValidLabelValue)
    (dict(node_labels={"bad key!": "x"}), "kubewin_node_labels", ["'bad key!' is not valid", "kubewin_node_labels"]),
    (dict(node_labels={"-Example.com/x": "y"}), "kubewin_node_labels", ["is not valid"]),
    (dict(node_labels={"pool": "has space"}), "kubewin_node_labels", ["value 'has space' is not valid"]),
    (dict(node_labels={"pool": "x" * 64}), "kubewin_node_labels", ["is not valid", "at most 63"]),
    (dict(node_labels={"gpu": True}), "kubewin_node_labels", ["boolean value", "quote it"]),
    (dict(node_labels=["pool=windows"]), "kubewin_node_labels", ["must be a mapping"]),
    # labels the kubelet reconciles, or the collection owns
    (dict(node_labels={"kubernetes.io/hostname": "other"}), "kubewin_node_labels",
     ["the kubelet sets on its own Node", "updateDefaultLabels"]),
    (dict(node_labels={"kubewin.nodes/managed": "false"}), "kubewin_node_labels", ["this collection sets itself"]),
    # taints: effect, key, value, duplicates, shape
    (dict(node_taints=[dict(key="os", value="windows", effect="NoSchedul")]), "kubewin_node_taints",
     ["kubewin_node_taints[0]", "'NoSchedul' is not a taint effect", "did you mean NoSchedule?"]),
    (dict(node_taints=[dict(key="os", value="windows")]), "kubewin_node_taints", ["needs an effect"]),
    (dict(node_taints=[dict(key="bad key", effect="NoSchedule")]), "kubewin_node_taints", ["is not valid"]),
    (dict(node_taints=[dict(key="os", value="a b", effect="NoSchedule")]), "kubewin_node_taints",
     ["value 'a b' is not valid"]),
    (dict(node_taints=[dict(key="os", effect="NoSchedule"), dict(key="os", value="x", effect="NoSchedule")]),
     "kubewin_node_taints", ["kubewin_node_taints[1] repeats", "unique by key and effect"]),
    (dict(node_taints=[dict(key="os", effect="NoSchedule", efect="NoExecute")]), "kubewin_node_taints",
     ["unknown field(s) efect"]),
    (dict(node_taints={"key": "os"}), "kubewin_node_taints", ["must be a list"]),
    # kubelet flags against the real flag set of the version
    (dict(kubelet_extra_args={"max-podz": 10}), "kubewin_kubelet_extra_args",
     ["Kubernetes 1.37 has no flag --max-podz", "did you mean max-pods?"]),
    (dict(kubelet_extra_args={"--max-pods": 10}), "kubewin_kubelet_extra_args", ["without the leading --"]),
    (dict(kubelet_extra_args={"register-node": "maybe"}), "kubewin_kubelet_extra_args",
     ["--register-node is a boolean flag"]),
    (dict(kubelet_extra_args={"max-pods": None}), "kubewin_kubelet_extra_args", ["--max-pods needs a value"]),
    (dict(kubelet_extra_args={"node-labels": "kubernetes.io/role=win"}), "kubewin_kubelet_extra_args",
     ["refuses to set kubernetes.io/role on itself", "NodeRestriction", "kubewin_node_labels"]),
    (dict(kubelet_extra_args={"node-labels": "bad key=x"}), "kubewin_kubelet_extra_args", ["is not valid"]),
    (dict(kubelet_extra_args={"register-with-taints": "os=windows:NoSchedul"}), "kubewin_kubelet_extra_args",
     ["effect 'NoSchedul' is not one of"]),
    (dict(kubelet_extra_args={"hostname-override": "other"}), "kubewin_kubelet_extra_args",
     ["differs from the node name", "kubewin_node_name"]),
    (dict(kubelet_extra_args={"mystery-flag": "1"}), "kubewin_kubelet_extra_args", ["no flag --mystery-flag"]),
    # review-s6 L3: the node log query needs the gate, and from 1.36 it is locked on: the kubelet would not start
    (dict(kubelet_extra_args={"feature-gates": "InPlacePodVerticalScaling=true, NodeLogQuery=False"}),
     "kubewin_kubelet_extra_args", ["turns NodeLogQuery off", "remove NodeLogQuery=false"]),
    # the four weakening flags of security-2.md N9 (A.4), and an old TLS floor
    (dict(kubelet_extra_args={"anonymous-auth": True}), "kubewin_kubelet_extra_args",
     ["--anonymous-auth=True", "kubewin_kubelet_allow_insecure: true"]),
    (dict(kubelet_extra_args={"authorization-mode": "AlwaysAllow"}), "kubewin_kubelet_extra_args",
     ["kubeadm sets Webhook"]),
    (dict(kubelet_extra_args={"read-only-port": 10255}), "kubewin_kubelet_extra_args", ["read-only port 10255"]),
    (dict(kubelet_extra_args={"rotate-certificates": "false"}), "kubewin_kubelet_extra_args",
     ["no rotation of the kubelet's client certificate"]),
    (dict(kubelet_extra_args={"tls-min-version": "VersionTLS10"}), "kubewin_kubelet_extra_args", ["below 1.2"]),
    # the cluster's kubelet-config (N9 unit test: anonymous.enabled true fails and names the variable)
    (dict(kubelet_config={"authentication": {"anonymous": {"enabled": True}}}), "kubewin_kubelet_allow_insecure",
     ["authentication.anonymous.enabled: true", "kube-system/kubelet-config"]),
    (dict(kubelet_config={"readOnlyPort": 10255}), "kubewin_kubelet_allow_insecure", ["readOnlyPort: 10255"]),
    # two hosts, one node name
    (dict(host="win1", node_names={"win1": "win-worker-1", "win2": "WIN-worker-1", "win3": "c"}),
     "kubewin_node_name", ["also the node name of win2", "set kubewin_node_name for win1 or win2"]),
    # numbers and durations
    (dict(numbers={"kubewin_ready_timeout": -5}), "kubewin_ready_timeout", ["is -5; it must be at least 1"]),
    (dict(numbers={"kubewin_ready_timeout": 0}), "kubewin_ready_timeout", ["at least 1"]),
    (dict(numbers={"kubewin_drain_timeout": "-1"}), "kubewin_drain_timeout", ["at least 1"]),
    (dict(numbers={"kubewin_log_file_max_size_mb": 0}), "kubewin_log_file_max_size_mb", ["at least 1"]),
    (dict(numbers={"kubewin_log_file_max_age_hours": "a week"}), "kubewin_log_file_max_age_hours",
     ["not a whole number"]),
    (dict(numbers={"kubewin_vswitch_wait_timeout": "soon"}), "kubewin_vswitch_wait_timeout", ["not a whole number"]),
    (dict(numbers={"kubewin_vswitch_settle_seconds": -1}), "kubewin_vswitch_settle_seconds", ["at least 0"]),
    (dict(numbers={"kube_apiserver_port": 70000}), "kube_apiserver_port", ["from 1 to 65535"]),
    (dict(durations={"kubewin_bootstrap_token_ttl": "30 minutes"}), "kubewin_bootstrap_token_ttl",
     ["not a Go duration"]),
    (dict(durations={"kubewin_bootstrap_token_ttl": "0s"}), "kubewin_bootstrap_token_ttl", ["never expires"]),
    # Windows Server 2025 + vxlan below the October 2025 cumulative update
    (dict(windows_build="10.0.26100.4946"), "kubewin_supported_windows_builds",
     ["26100.4946 is below 26100.6899", "KB5066835", "host-gw"]),
]


@pytest.mark.parametrize("changes, variable, phrases", BAD, ids=["%s-%d" % (b[1], n) for n, b in enumerate(BAD)])
def test_each_bad_input_is_refused_naming_the_variable(changes, variable, phrases):
    failures, dummy = run(**changes)
    message = only(failures, variable)
    for phrase in phrases:
        assert phrase in message, (phrase, message)


def test_all_problems_of_the_labels_are_reported_at_once():
    failures, dummy = run(node_labels={"a b": "x", "ok": "a b"}, node_taints=[dict(key="x", effect="Bad"), "nodict"])
    assert [f["variable"] for f in failures] == ["kubewin_node_labels"] * 2 + ["kubewin_node_taints"] * 2


def test_a_flag_removed_in_a_later_minor_names_the_last_kubelet_that_had_it(monkeypatch):
    data = {m: dict(v, flags=dict(v["flags"])) for m, v in kubelet.flag_data().items()}
    oldest = kubelet.supported_minors()[0]
    data[oldest]["flags"]["old-flag"] = True
    monkeypatch.setattr(kubelet, "_DATA", data)
    failures, dummy = run(kubelet_extra_args={"old-flag": "x"})
    assert "it was removed after Kubernetes %s" % oldest in only(failures, "kubewin_kubelet_extra_args")


def test_pod_infra_container_image_removed_in_1_35_is_refused_on_1_37_and_a_warning_on_1_34():
    # the real flag sets: kubelet v1.34.4 still has the flag (deprecated), v1.35.4 no longer does
    failures, dummy = run(kubelet_extra_args={"pod-infra-container-image": "registry.k8s.io/pause:3.10"})
    message = only(failures, "kubewin_kubelet_extra_args")
    assert "Kubernetes 1.37 has no flag --pod-infra-container-image, it was removed after Kubernetes 1.34" in message
    failures, warnings = run(kube_version="v1.34.4", server_version="v1.37.2",
                             kubelet_extra_args={"pod-infra-container-image": "registry.k8s.io/pause:3.10"})
    assert failures == [] and "will be removed in 1.35" in only(warnings, "kubewin_kubelet_extra_args")


def test_an_unknown_version_gets_a_clear_warning_not_a_crash():
    failures, warnings = run(kube_version="v1.45.0", server_version="v1.45.0", kubelet_extra_args={"whatever": 1})
    assert failures == []
    message = only(warnings, "kubewin_kubelet_extra_args")
    assert "not of 1.45" in message and "lab/kubelet_flags/generate.py" in message
    # no extra flags: nothing to say
    assert run(kube_version="v1.45.0", server_version="v1.45.0") == ([], [])


def test_deprecated_flags_warn_with_the_kubelets_message():
    failures, warnings = run(kubelet_extra_args={"maximum-dead-containers": 5})
    assert failures == []
    assert "Use --eviction-hard or --eviction-soft instead" in only(warnings, "kubewin_kubelet_extra_args")


def test_weakening_flags_are_warnings_when_allowed():
    failures, warnings = run(kubelet_extra_args={"anonymous-auth": "true", "read-only-port": 10255},
                             kubelet_allow_insecure=True)
    assert failures == []
    assert len([w for w in warnings if "accepted because kubewin_kubelet_allow_insecure is true" in w["message"]]) == 2


def test_kubeadm_default_kubelet_config_passes():
    config = {"authentication": {"anonymous": {"enabled": False}, "webhook": {"enabled": True}},
              "authorization": {"mode": "Webhook"}, "readOnlyPort": 0, "rotateCertificates": True}
    assert run(kubelet_config=config) == ([], [])


def test_a_kubelet_certificate_that_is_never_renewed_names_kube_proxy_and_flanneld_too():
    """kube-proxy and flanneld run with the kubelet's credential (issue 21 point 2): without rotateCertificates all
    three stop at its expiry, which the finding says (refused, or a warning when allowed)."""
    failures, dummy = run(kubelet_config={"rotateCertificates": False})
    text = only(failures, "kubewin_kubelet_allow_insecure")
    assert "rotateCertificates: false" in text and "flanneld and kube-proxy" in text
    failures, warnings = run(kubelet_config={"rotateCertificates": False}, kubelet_allow_insecure=True)
    assert failures == [] and "flanneld and kube-proxy" in only(warnings, "kubewin_kubelet_allow_insecure")


def test_kubespray_hardening_that_does_not_reach_windows_is_named_with_its_flag():
    failures, warnings = run(kubespray_hardening={"kubelet_rotate_server_certificates": True,
                                                  "tls_min_version": "VersionTLS12", "tls_cipher_suites": "",
                                                  "kubelet_event_record_qps": "False"})
    assert failures == []
    text = [w["message"] for w in warnings]
    assert len(text) == 2
    assert "add 'rotate-server-certificates: true' to kubewin_kubelet_extra_args" in text[0]
    assert "kubelet-serving CSRs" in text[0]
    assert "add 'tls-min-version: VersionTLS12'" in text[1]
    # carried by the extra flags: nothing to say
    failures, warnings = run(kubespray_hardening={"tls_min_version": "VersionTLS12"},
                             kubelet_extra_args={"tls-min-version": "VersionTLS12"})
    assert failures == [] and not [w for w in warnings if w["check"] == "kubelet_hardening"]


@pytest.mark.parametrize("build, backend, failed, warned", [
    ("10.0.26100.6899", "vxlan", False, False),
    ("10.0.26100.7781", "vxlan", False, False),
    ("10.0.26100.6898", "vxlan", True, False),
    ("10.0.26100.1742", "host-gw", False, False),
    ("10.0.26100", "vxlan", False, True),
    ("10.0.20348.100", "vxlan", False, False),
])
def test_windows_server_2025_overlay_needs_the_october_2025_update(build, backend, failed, warned):
    failures, warnings = run(windows_build=build, flannel_backend_type=backend,
                             cluster_flannel=dict(VALID["cluster_flannel"], backend_type=backend))
    failures = [f for f in failures if f["check"] == "windows_update"]
    warnings = [w for w in warnings if w["check"] == "windows_update"]
    assert bool(failures) == failed and bool(warnings) == warned, (failures, warnings)


def test_unique_node_names_and_a_single_host_pass():
    assert run(host="win1", node_names={"win1": "win-worker-1"}) == ([], [])
    assert run(host="win1", node_names={"win1": "win-worker-1", "win2": "win-worker-2"}) == ([], [])


# --- the generated flag sets -------------------------------------------------------------------------------------

def test_the_flag_sets_cover_every_minor_the_generator_lists_with_the_windows_flags():
    tree = ast.parse((ROOT / "lab" / "kubelet_flags" / "generate.py").read_text())
    minors = next(ast.literal_eval(n.value) for n in tree.body
                  if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", None) == "MINORS")
    data = kubelet.flag_data()
    assert kubelet.supported_minors() == minors
    for minor, entry in data.items():
        flags = entry["flags"]
        assert entry["version"].startswith("v%s." % minor)
        # osflags_windows.go: the build is the Windows kubelet's
        assert flags["windows-service"] is False and flags["windows-priorityclass"] is True
        assert flags["node-labels"] is True and flags["anonymous-auth"] is False
        assert set(entry["deprecated"]) <= set(flags)


def test_the_doc_stub_declares_the_options_the_action_plugin_takes():
    assert node_preflight.ARGUMENT_SPEC == preflight.PREFLIGHT_ARGSPEC


def test_every_variable_the_role_passes_in_values_is_one_preflight_reads():
    role = (ROOT / "roles" / "preflight" / "tasks" / "main.yml").read_text()
    task = next(t for t in yaml.safe_load(role) if "kubewin.nodes.node_preflight" in t)
    assert set(task["kubewin.nodes.node_preflight"]["values"]) == set(preflight.VALUE_VARIABLES)


def test_a_deprecated_token_variable_the_role_passes_warns_and_fails_nothing():
    """The node-token variables the preflight role passes in values are deprecated (kube-proxy runs with the
    kubelet's credential): set to other than the default they warn, whatever the value, and refuse nothing."""
    failures, warnings = run(numbers={"kubewin_node_token_expiration_seconds": str(40 * 86400),
                                      "kubewin_node_token_allow_long_expiration": "true"})
    assert not [f for f in failures if f["variable"].startswith("kubewin_node_token_")], failures
    assert "deprecated and ignored" in only(warnings, "kubewin_node_token_expiration_seconds")
    assert "deprecated and ignored" in only(warnings, "kubewin_node_token_allow_long_expiration")


def test_the_ownership_label_nodes_cannot_write_is_the_collection_s_own():
    failures, dummy = run(node_labels={"node-restriction.kubernetes.io/kubewin-managed": "true"})
    assert "this collection sets itself" in only(failures, "kubewin_node_labels")


def test_an_inventory_kubeadm_token_is_used_only_when_asked_for():
    """security-2 N8: kubespray's fixed kubeadm_token would let everyone who reads the inventory join nodes; it is
    ignored with a warning naming the opt-in, and used without one when kubewin_use_kubeadm_token is true."""
    token = "abcdef.0123456789abcdef"
    failures, warnings = run(kubeadm_token=token)
    message = only(warnings, "kubeadm_token")
    assert "kubewin_use_kubeadm_token: true" in message and token not in message
    failures, warnings = run(kubeadm_token=token, numbers={"kubewin_use_kubeadm_token": "true"})
    assert not [w for w in warnings if w["variable"] == "kubeadm_token"]
    failures, warnings = run()
    assert not [w for w in warnings if w["variable"] == "kubeadm_token"]


def test_a_cluster_that_does_not_approve_a_nodes_own_renewal_is_a_warning_naming_host_binding_and_fix():
    """Issue 21 point 2: without kubeadm's kubeadm:node-autoapprove-certificate-rotation (or another binding of the
    selfnodeclient ClusterRole to system:nodes), or without rotateCertificates in the kubelet configuration, the node's
    client certificate (kube-proxy's and flanneld's credential too) runs out a year after the join: a warning before
    any change, not a refusal (nothing fails until then)."""
    failures, warnings = run(node_renewal_bindings=[], host="win-a")
    assert failures == []
    (text,) = [w["message"] for w in warnings if w["check"] == "node_renewal"]
    assert "win-a (node win-worker-1)" in text and "kubeadm:node-autoapprove-certificate-rotation" in text
    assert "kubectl create clusterrolebinding kubeadm:node-autoapprove-certificate-rotation --clusterrole=system:" \
           "certificates.k8s.io:certificatesigningrequests:selfnodeclient --group=system:nodes" in text
    # kubeadm's binding, or one of another name: nothing to say; not read (null): nothing either
    for bindings in (["kubeadm:node-autoapprove-certificate-rotation"], ["my-renewal"], None):
        assert run(node_renewal_bindings=bindings) == ([], [])
    # a kubelet configuration without rotateCertificates: the kubelet's default is false
    failures, warnings = run(node_renewal_bindings=["x"], host="win-a", kubelet_config={"readOnlyPort": 0})
    (text,) = [w["message"] for w in warnings if w["check"] == "node_renewal"]
    assert failures == [] and "does not set rotateCertificates" in text and "win-a" in text
    assert run(node_renewal_bindings=["x"], kubelet_config={"rotateCertificates": True}) == ([], [])
