"""pytest fixtures of the lab, for its own tests (lab/tests) and the collection's tests on it (tests/lab)."""

import os

import pytest


@pytest.fixture(scope="session")
def api():
    """CoreV1Api and AppsV1Api on the lab's admin kubeconfig."""
    import scenario
    from kubernetes import client, config

    if not os.path.exists(scenario.ADMIN_CONF):
        pytest.fail("the lab control plane is not up: run `make lab-up` (lab/bin/lab-up)")
    api_client = config.new_client_from_config(config_file=scenario.ADMIN_CONF)
    return client.CoreV1Api(api_client), client.AppsV1Api(api_client)


@pytest.fixture
def lab(tmp_path):
    """Two simulated Windows hosts (win-1, win-2) driven by real ansible-playbook runs; no control plane."""
    from winsim.testing import Lab

    return Lab(tmp_path / "winsim", nodes=2)
