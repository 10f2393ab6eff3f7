"""Docker's own network store in the simulator (winsim_docker, review-s6 D1): what Docker knows is not what HNS has,
and kubewin.nodes' docker scripts run through the lab's PowerShell interpreter against it. No control plane."""

import json
import os
from unittest import mock

import pytest
from winsim import core
from winsim.ps.winhost import run_kubewin_script as run_ps

# isort: split
# winsim.core has put the stand-in ansible.windows collection on sys.path.
from ansible_collections.ansible.windows.plugins.module_utils import winsim_docker, winsim_hns, winsim_scm

DOCKER = "C:\\Program Files\\Docker\\docker.exe"


@pytest.fixture
def host(tmp_path):
    with mock.patch.object(winsim_scm.time, "time", return_value=1.9e9):
        yield core.create_host(str(tmp_path), "d", profile="ws2022-docker-cri")


def _docker(host, *args, daemon=("-H", winsim_docker.HOST)):
    with host.open():
        return winsim_docker.cli(host, "24.0.7", list(daemon) + list(args))


def _hns(host):
    with host.open(save=False):
        return {n["Name"]: n["ID"] for n in host.state["hns"]["networks"]}


def _sandbox(host):
    with host.open(save=False):
        return winsim_docker.sandbox_error(host, host_network=True), winsim_docker.sandbox_error(host, False)


def test_a_network_made_through_docker_is_in_its_store_and_in_hns(host):
    assert _docker(host, "network", "ls", "--format", "{{.Name}}") == (0, "", "")
    rc, out, err = _docker(host, "network", "create", "-d", "nat", "host")
    assert rc == 0 and err == "" and set(_hns(host)) == {"host"}
    assert _docker(host, "network", "ls", "--format", "{{.Name}}") == (0, "host\n", "")
    assert _docker(host, "network", "create", "-d", "nat", "host")[2] == (
        "Error response from daemon: network with name host already exists\n")
    assert _sandbox(host) == (None, None)
    assert _docker(host, "network", "rm", "host")[0] == 0 and _hns(host) == {}
    assert _sandbox(host)[0] == "Error response from daemon: network host not found"


def test_an_hns_network_made_while_dockerd_runs_is_unknown_to_it_until_dockerd_starts_again(host):
    with host.open():
        assert json.loads(winsim_hns.call(host.state, "POST", "/networks/", '{"Name":"host","Type":"NAT"}'))["Success"]
    assert _docker(host, "network", "ls", "--format", "{{.Name}}")[1] == ""
    assert _sandbox(host) == ("Error response from daemon: network host not found", None)
    # HNS's names are unique (winsim_hns), so Docker cannot make its own beside it
    assert "network already exists: host" in _docker(host, "network", "create", "-d", "nat", "host")[2]
    with host.open():
        winsim_scm.stop(host, "cri-dockerd")
        winsim_scm.stop(host, "docker")
        assert _sandbox_while(host) == winsim_docker.NOT_RUNNING.strip()
        winsim_scm.start(host, "docker")
    assert _docker(host, "network", "ls", "--format", "{{.Name}}")[1] == "host\n" and _sandbox(host) == (None, None)


def _sandbox_while(host):
    return winsim_docker.sandbox_error(host, host_network=False)


def test_at_boot_dockerd_makes_its_nat_network_again_and_an_hns_only_one_stays_gone(host):
    _docker(host, "network", "create", "-d", "nat", "host")
    before = _hns(host)["host"]
    gone, failed = core.reboot(host.root, host.name)
    assert gone == ["host"] and failed == {}
    assert set(_hns(host)) == {"host"} and _hns(host)["host"] != before and _sandbox(host) == (None, None)
    now = _hns(host)["host"]
    with host.open(save=False):
        assert [(n["Name"], n["HnsId"]) for n in winsim_docker.networks(host.state)] == [("host", now)]
    _docker(host, "network", "rm", "host")
    with host.open():
        assert json.loads(winsim_hns.call(host.state, "POST", "/networks/", '{"Name":"host","Type":"NAT"}'))["Success"]
    core.reboot(host.root, host.name)
    assert _hns(host) == {} and _sandbox(host)[0] == "Error response from daemon: network host not found"


def test_the_docker_cli_needs_the_daemons_pipe_and_simulates_nothing_else(host):
    with host.open():
        winsim_scm.stop(host, "cri-dockerd")
        winsim_scm.stop(host, "docker")
    assert _docker(host, "network", "ls", "--format", "{{.Name}}") == (1, "", winsim_docker.NOT_RUNNING)
    with host.open():
        winsim_scm.start(host, "docker")
    assert _docker(host, "network", "inspect", "host")[2] == "winsim: docker network inspect host is not simulated\n"


def test_the_docker_scripts_read_and_change_the_store_through_the_interpreter(host):
    with host.open():
        state = run_ps(host, "docker_state", {"Service": "docker"}, True)["result"]
        assert state == {"cli": DOCKER, "names": [], "error": None}
        made = run_ps(host, "docker_apply", {"Service": "docker", "Name": "host", "Action": "create"})
        assert made["changed"] and made["result"]["code"] == 0 and made["result"]["cli"] == DOCKER
        assert run_ps(host, "docker_state", {"Service": "docker"}, True)["result"]["names"] == ["host"]
        again = run_ps(host, "docker_apply", {"Service": "docker", "Name": "host", "Action": "create"})["result"]
        assert again["code"] == 1 and again["output"] == [
            "Error response from daemon: network with name host already exists"]
        health = run_ps(host, "node_health", {"Services": ["docker"], "DockerService": "docker"}, True)["result"]
        assert health["docker_networks"] == ["host"] and health["docker_error"] is None
        assert run_ps(host, "node_health", {"Services": ["docker"]}, True)["result"]["docker_networks"] is None
        assert run_ps(host, "docker_state", {"Service": "nope"}, True)["result"] == {
            "cli": None, "names": None, "error": "the service nope does not exist"}
        winsim_scm.stop(host, "cri-dockerd")
        winsim_scm.stop(host, "docker")
        down = run_ps(host, "docker_state", {"Service": "docker"}, True)["result"]
        assert down["names"] is None and down["error"].startswith("docker network ls exited with code 1: error during")


def test_the_docker_cli_is_simulated_only_against_dockers_own_pipe(host):
    """review-s7 D2: without -H the CLI would use the WinRM user's DOCKER_HOST or docker context."""
    rc, out, err = _docker(host, "network", "ls", "--format", "{{.Name}}", daemon=())
    assert rc == 1 and "without -H npipe:////./pipe/docker_engine is not simulated" in err
    assert "is not simulated (only npipe" in _docker(host, "network", "ls", daemon=("-H", "tcp://10.0.0.1:2375"))[2]
    assert _docker(host, "network", "ls", "--format", "{{.Name}}", daemon=("--host=" + winsim_docker.HOST,))[0] == 0
    # what the scripts run: -H first (processes.log has every command line the host started)
    with host.open():
        run_ps(host, "docker_state", {"Service": "docker"}, True)
    with open(os.path.join(host.dir, "processes.log")) as f:
        lines = [line for line in f if "docker.exe" in line]
    assert lines[-1].rstrip() == '"%s" -H npipe:////./pipe/docker_engine network ls --format {{.Name}}' % DOCKER


def test_a_docker_that_does_not_answer_is_stopped_after_60_seconds(host):
    """review-s7 D1: docker.exe waited on a hung dockerd for ever, holding the WinRM operation."""
    with host.open():
        host.state["docker"]["hung"] = True
        start = winsim_scm.clock(host)
        state = run_ps(host, "docker_state", {"Service": "docker"}, True)["result"]
        assert winsim_scm.clock(host) - start == 60
        assert state["names"] is None and state["error"].startswith(
            "docker network ls exited with code 1460: %s -H npipe:////./pipe/docker_engine network ls --format "
            "{{.Name}} did not finish within 60 s and was stopped: dockerd does not answer" % DOCKER)
        made = run_ps(host, "docker_apply", {"Service": "docker", "Name": "host", "Action": "create"})["result"]
        assert made["code"] == 1460 and "did not finish within 60 s" in made["output"][0]
        health = run_ps(host, "node_health", {"Services": ["docker"], "DockerService": "docker"}, True)["result"]
        assert health["docker_networks"] is None and "code 1460" in health["docker_error"]
