"""Preflight refuses a node-token lifetime above 30 days unless kubewin_node_token_allow_long_expiration
(security-2 N6), before any change, naming the variable and both ways out."""

from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight import values


def messages(result):
    failures, _warnings = result
    return " ".join(str(f) for f in failures)


def test_more_than_30_days_is_refused_naming_the_override():
    text = messages(values.check_numbers({"kubewin_node_token_expiration_seconds": 31 * 86400}))
    assert "kubewin_node_token_expiration_seconds is 2678400" in text
    assert "kubewin_node_token_allow_long_expiration: true" in text


def test_30_days_and_the_override_pass():
    assert values.check_numbers({"kubewin_node_token_expiration_seconds": 30 * 86400}) == ([], [])
    assert values.check_numbers({"kubewin_node_token_expiration_seconds": "7776000"},
                                allow_long_expiration="true") == ([], [])
    # the TokenRequest API's own maximum still holds with the override
    assert messages(values.check_numbers({"kubewin_node_token_expiration_seconds": 2 ** 32 + 1},
                                         allow_long_expiration=True))
