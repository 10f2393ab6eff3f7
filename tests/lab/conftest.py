"""Lab tests: the control plane (make lab-up) and the mirror for most, fail loudly without them; the
simulated Windows hosts alone for the `lab` fixture."""

import os
import sys

import pytest

LAB = os.path.dirname(os.path.abspath(__file__))
if LAB not in sys.path:
    sys.path.insert(0, LAB)


@pytest.fixture(scope="session")
def api():
    """CoreV1Api and AppsV1Api on the lab's admin kubeconfig."""
    import scenario
    from kubernetes import client, config

    if not os.path.exists(scenario.ADMIN_CONF):
        pytest.fail("the lab control plane is not up: run `make lab-up` (tests/lab/bin/lab-up)")
    api_client = config.new_client_from_config(config_file=scenario.ADMIN_CONF)
    return client.CoreV1Api(api_client), client.AppsV1Api(api_client)


@pytest.fixture
def lab(tmp_path):
    """Two simulated Windows hosts (win-1, win-2) driven by real ansible-playbook runs; no control plane."""
    from winsim.testing import Lab

    return Lab(tmp_path / "winsim", nodes=2)
