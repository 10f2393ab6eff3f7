"""The simulated Task Scheduler (winsim_tasks, issue 21 point 1): the community.windows.win_scheduled_task stand-in
registers what the real module would (and refuses what it would), and a boot runs the boot-triggered tasks after
their delay through the lab's PowerShell interpreter: kubewin.nodes' boot.ps1 as the network role installs it starts
kube-proxy; Docker's NAT network "host" is dockerd's to make again at its boot start (winsim_docker), not the task's.
No control plane needed."""

import json
import os
from unittest import mock

import pytest
from simhost import one
from winsim import core

# isort: split
# winsim.core has put the stand-in ansible.windows collection on sys.path.
from ansible_collections.ansible.windows.plugins.module_utils import winsim_docker, winsim_hns, winsim_scm, winsim_tasks

BOOT_PS1 = os.path.join(core.REPO, "plugins", "plugin_utils", "scripts", "boot.ps1")
SVCHOST = r"C:\Windows\system32\svchost.exe -k LabTest"
POWERSHELL = r"C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe"
ARGS = r"-NoProfile -NonInteractive -ExecutionPolicy Bypass -File C:\k\kubewin-boot.ps1"
TASK = """
    - name: task
      community.windows.win_scheduled_task:
        name: kubewin-boot
        description: lab
        actions: [{path: '%s', arguments: '%s'}]
        triggers: [{type: boot, delay: PT1M}]
        username: SYSTEM
        logon_type: service_account
        run_level: highest
        execution_time_limit: PT10M
""" % (POWERSHELL, ARGS)


@pytest.fixture
def host(tmp_path):
    with mock.patch.object(winsim_scm.time, "time", return_value=1.9e9):
        yield core.create_host(str(tmp_path), "w", profile="ws2022-docker")


def _install(st, host, task=True, nat=True):
    """boot.ps1 where the network role puts it, its task as the stand-in stores it, kube-proxy (demand start here,
    so nothing but the task starts it) depending on docker, and a NAT network "host" made through HNS (as the boot
    script and the runtime role did before review-s6 D1): the running dockerd does not know it."""
    local = host.local_path("C:\\k\\kubewin-boot.ps1")
    os.makedirs(os.path.dirname(local), exist_ok=True)
    os.makedirs(host.local_path("C:\\var\\log\\kubelet"), exist_ok=True)
    with open(BOOT_PS1, "rb") as src, open(local, "wb") as dst:
        dst.write(src.read())
    winsim_scm.create(st, "kube-proxy", SVCHOST, dependencies=["docker"], start=3)
    if nat:
        assert json.loads(winsim_hns.call(st, "POST", "/networks/", '{"Name":"host","Type":"NAT"}'))["Success"]
    if task:
        winsim_tasks.tasks(st)["\\kubewin-boot"] = {
            "key": "\\kubewin-boot", "name": "kubewin-boot", "path": "\\", "sid": "S-1-5-18",
            "logon_type": "service_account", "actions": [{"path": POWERSHELL, "arguments": ARGS}],
            "triggers": [{"type": "boot", "delay": "PT1M"}]}


def _state(host):
    with host.open(save=False):
        st = host.state
        return ({n["Name"]: n["ID"] for n in st["hns"]["networks"]}, st["services"]["kube-proxy"]["status"],
                st.get("boot_log"), host.local_path("C:\\var\\log\\kubelet\\kubewin-boot.log"))


def test_the_boot_task_starts_kube_proxy_after_its_delay_and_dockerd_makes_its_nat_network_again(host):
    core.edit(host.root, host.name, lambda st: _install(st, host, nat=False))
    with host.open():
        assert winsim_docker.cli(host, "24.0.7", ["-H", winsim_docker.HOST, "network", "create", "-d", "nat",
                                                  "host"])[0] == 0
    before, _, _, _ = _state(host)
    gone, failed = core.reboot(host.root, host.name)
    after, kube_proxy, log, boot_log = _state(host)
    assert gone == ["host"] and failed == {}
    assert set(after) == {"host"} and after["host"] != before["host"]  # a new network, made by dockerd at its start
    assert kube_proxy == "Running"
    services_done = max(e["at"] for e in log if "service" in e)
    task = [e for e in log if "task" in e]
    assert task == [{"task": "\\kubewin-boot", "at": task[0]["at"], "result": 0, "error": None}]
    assert task[0]["at"] - services_done >= 60  # PT1M after the boot-time starts
    with open(boot_log) as f:
        lines = f.read().splitlines()
    assert len(lines) == 2 and lines[0].endswith("kube-proxy and the services it depends on are started")
    assert lines[1].endswith("Docker's network host is there")
    with open(os.path.join(host.dir, "processes.log")) as f:
        assert POWERSHELL + " " + ARGS in f.read()


def test_a_nat_network_made_through_hns_stays_gone_and_without_the_task_kube_proxy_stays_stopped(host):
    core.edit(host.root, host.name, lambda st: _install(st, host, task=False))
    core.reboot(host.root, host.name)
    after, kube_proxy, log, boot_log = _state(host)
    assert "host" not in after and kube_proxy == "Stopped" and not os.path.exists(boot_log)


def test_a_host_network_dockerd_did_not_make_again_is_logged_with_the_fix(host):
    """review-s7 D3: "host" made through HNS (so not in Docker's store) is gone after the reboot and dockerd has
    nothing to make again: the boot script says so in its log and its task's result, kube-proxy still started."""
    core.edit(host.root, host.name, lambda st: _install(st, host))
    core.reboot(host.root, host.name)
    after, kube_proxy, log, boot_log = _state(host)
    assert "host" not in after and kube_proxy == "Running"
    task = [e for e in log if "task" in e][0]
    assert task["result"] == 1 and task["error"].startswith("Docker's network host is missing after dockerd's start")
    with open(boot_log) as f:
        lines = f.read().splitlines()
    assert lines[0].endswith("kube-proxy and the services it depends on are started")
    assert lines[-1].endswith("failed: Docker's network host is missing after dockerd's start, so hostNetwork pods "
                              "cannot start: run playbooks/repair.yml for this node (or docker network create -d nat "
                              "host)")


def test_a_disabled_kube_proxy_is_left_alone_and_the_failure_logged(host):
    def setup(st):
        _install(st, host)
        st["services"]["kube-proxy"]["start"] = 4
    core.edit(host.root, host.name, setup)
    core.reboot(host.root, host.name)
    after, kube_proxy, log, boot_log = _state(host)
    assert kube_proxy == "Stopped"
    task = [e for e in log if "task" in e][0]
    assert task["result"] == 1 and "disabled" in task["error"]
    with open(boot_log) as f:
        assert "failed: " in f.read().splitlines()[-1]


def test_a_task_whose_principal_needs_a_logon_is_not_run_and_a_missing_script_is_powershells_error(host):
    def setup(st):
        _install(st, host)
        st["scheduled_tasks"]["\\kubewin-boot"]["sid"] = "S-1-5-21-1-2-3-500"
        winsim_tasks.tasks(st)["\\other"] = dict(st["scheduled_tasks"]["\\kubewin-boot"], key="\\other",
                                                 sid="S-1-5-18", actions=[{"path": POWERSHELL, "arguments":
                                                                           "-File C:\\k\\missing.ps1"}])
    core.edit(host.root, host.name, setup)
    core.reboot(host.root, host.name)
    after, _, log, _ = _state(host)
    runs = {e["task"]: (e["result"], e["error"]) for e in log if "task" in e}
    assert runs["\\kubewin-boot"] == (None, "not run: its principal needs a logon")
    assert runs["\\other"] == (-196608, "The argument 'C:\\k\\missing.ps1' to the -File parameter does not exist.")


def test_the_stand_in_registers_once_and_removes_and_refuses_what_the_real_module_refuses(lab):
    rc, _, res = lab.play(TASK, hosts="win-1", check=True)
    assert rc == 0 and one(res, "task")["changed"]
    with core.Host(lab.root, "win-1").open(save=False) as h:
        assert "scheduled_tasks" not in h.state or not h.state["scheduled_tasks"]
    for changed in (True, False):
        rc, _, res = lab.play(TASK, hosts="win-1")
        assert rc == 0 and one(res, "task")["changed"] is changed, res
    with core.Host(lab.root, "win-1").open(save=False) as h:
        task = h.state["scheduled_tasks"]["\\kubewin-boot"]
    assert task["sid"] == "S-1-5-18" and task["triggers"] == [{"type": "boot", "delay": "PT1M"}]
    assert task["actions"] == [{"path": POWERSHELL, "arguments": ARGS}] and task["execution_time_limit"] == "PT10M"
    rc, _, res = lab.play(TASK.replace("delay: PT1M", "delay: 1m"), hosts="win-1")
    assert rc != 0 and "must be in the XML duration format but was '1m'" in one(res, "task")["msg"]
    rc, _, res = lab.play(TASK.replace("run_level: highest", "run_level: highest\n        allow_demand_start: true"),
                          hosts="win-1")
    assert rc != 0 and "allow_demand_start not simulated" in one(res, "task")["msg"]
    rc, _, res = lab.play(TASK.replace("name: kubewin-boot", "name: new-one").replace(
        "actions: [{path: '%s', arguments: '%s'}]" % (POWERSHELL, ARGS), ""), hosts="win-1")
    assert rc != 0 and "cannot create a task with no actions" in one(res, "task")["msg"]
    rc, _, res = lab.play(TASK.replace("description: lab", "state: absent"), hosts="win-1")
    assert rc == 0 and one(res, "task")["changed"]
    with core.Host(lab.root, "win-1").open(save=False) as h:
        assert h.state["scheduled_tasks"] == {}


TICK = "C:\\k\\tick.ps1"
TICK_TASK = """
    - name: task
      community.windows.win_scheduled_task:
        name: kubewin-tick
        description: %s
        actions: [{path: '%s', arguments: '-NoProfile -File %s'}]
        triggers: %s
        username: SYSTEM
        logon_type: service_account
"""


def _ticks(lab):
    """How often the task ran: tick.ps1 appends one x to C:\\k\\ticks.txt per run."""
    host = core.Host(lab.root, "win-1")
    local = host.local_path("C:\\k\\ticks.txt")
    if not os.path.exists(local):
        return 0
    with open(local) as f:
        return len(f.read())


def _tick_task(lab, triggers, description="lab", check=False):
    host = core.Host(lab.root, "win-1")
    local = host.local_path(TICK)
    os.makedirs(os.path.dirname(local), exist_ok=True)
    with open(local, "w") as f:
        f.write("[System.IO.File]::AppendAllText('C:\\k\\ticks.txt', 'x')\n")
    rc, _, res = lab.play(TICK_TASK % (description, POWERSHELL, TICK, triggers), hosts="win-1", check=check)
    assert rc == 0, one(res, "task").get("msg")
    return one(res, "task")["changed"]


def test_a_registration_trigger_starts_the_task_when_registered_or_updated_then_every_interval_until_a_reboot(lab):
    """review-s9 W3: RegistrationTrigger starts the task when it is registered or updated, and its repetition every
    interval after, with no reboot; an unchanged task is not registered again; a reboot ends the repetition (the
    stricter choice) while a boot trigger's own repetition starts at boot."""
    triggers = "[{type: registration, repetition: {interval: PT1H}}]"
    assert _tick_task(lab, triggers, check=True) and _ticks(lab) == 0  # check mode registers nothing
    assert _tick_task(lab, triggers) and _ticks(lab) == 1
    assert not _tick_task(lab, triggers) and _ticks(lab) == 1  # no change: RegisterTaskDefinition is not called
    core.wait(lab.root, "win-1", 1800)
    assert _ticks(lab) == 1
    core.wait(lab.root, "win-1", 1800)
    assert _ticks(lab) == 2
    core.wait(lab.root, "win-1", 3 * 3600)  # a jump of the clock: one run, not the three it skipped
    assert _ticks(lab) == 3
    assert _tick_task(lab, triggers, description="updated") and _ticks(lab) == 4  # an update starts it too
    with core.Host(lab.root, "win-1").open(save=False) as h:
        assert h.state["reboots"] == 0
        assert [e["result"] for e in h.state["task_log"]] == [0, 0, 0, 0]
    core.reboot(lab.root, "win-1")
    core.wait(lab.root, "win-1", 2 * 3600)
    assert _ticks(lab) == 4
    assert _tick_task(lab, "[{type: boot, delay: PT1M, repetition: {interval: PT1H}}]") and _ticks(lab) == 4
    core.reboot(lab.root, "win-1")
    assert _ticks(lab) == 5
    core.wait(lab.root, "win-1", 3600)
    assert _ticks(lab) == 6


def test_a_delayed_registration_trigger_starts_after_its_delay_and_a_reboot_meanwhile_loses_it(lab):
    """IRegistrationTrigger remarks: a restart during the delay and "the task will not run and the delay will be
    lost"; a repetition with a duration stops at its end."""
    triggers = "[{type: registration, delay: PT5M, repetition: {interval: PT1H, duration: PT2H}}]"
    assert _tick_task(lab, triggers) and _ticks(lab) == 0
    core.wait(lab.root, "win-1", 299)
    assert _ticks(lab) == 0
    core.wait(lab.root, "win-1", 1)
    assert _ticks(lab) == 1
    for _ in range(3):
        core.wait(lab.root, "win-1", 3600)
    assert _ticks(lab) == 3  # at 5 min, 1 h 5 min and 2 h 5 min: the duration's end
    assert _tick_task(lab, triggers, description="again") and _ticks(lab) == 3
    core.reboot(lab.root, "win-1")
    core.wait(lab.root, "win-1", 3600)
    assert _ticks(lab) == 3
