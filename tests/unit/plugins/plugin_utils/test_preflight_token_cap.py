"""The node-token variables are deprecated (issue 21 point 2: kube-proxy runs with the kubelet's credential, so no
token is issued): preflight warns when one is set to other than its default, naming it, and no longer refuses a
lifetime above 30 days."""

import pytest

from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight import values


@pytest.mark.parametrize("variable, value", [
    ("kubewin_node_token_expiration_seconds", 31 * 86400), ("kubewin_node_token_expiration_seconds", "3600"),
    ("kubewin_node_token_renew_fraction", "0.7"), ("kubewin_node_token_allow_long_expiration", "true"),
    ("kubewin_node_token_require_binding", False)])
def test_a_deprecated_token_variable_set_warns_naming_it(variable, value):
    failures, warnings = values.check_deprecated_token_vars({variable: value})
    assert failures == [] and [w["variable"] for w in warnings] == [variable]
    assert "deprecated and ignored" in warnings[0]["message"] and "1.0.0" in warnings[0]["message"]


def test_the_defaults_as_the_role_passes_them_warn_nothing():
    assert values.check_deprecated_token_vars({
        "kubewin_node_token_expiration_seconds": "604800", "kubewin_node_token_renew_fraction": "0.5",
        "kubewin_node_token_allow_long_expiration": "False", "kubewin_node_token_require_binding": True}) == ([], [])


def test_the_preflight_role_passes_every_deprecated_token_variable_to_the_check():
    """A deprecated variable the role does not pass is never warned about (kubewin_node_token_require_binding was
    not)."""
    from pathlib import Path

    from ansible_collections.kubewin.nodes.plugins.plugin_utils import _preflight

    role = (Path(__file__).resolve().parents[4] / "roles" / "preflight" / "tasks" / "main.yml").read_text()
    assert set(_preflight.DEPRECATED_VALUES) == set(values.DEPRECATED_TOKEN_VARS)
    for variable in values.DEPRECATED_TOKEN_VARS:
        assert "      %s: " % variable in role, variable


def test_a_long_lifetime_is_no_longer_refused():
    assert values.check_numbers({"kubewin_node_token_expiration_seconds": 90 * 86400}) == ([], [])
