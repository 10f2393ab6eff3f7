"""kube-proxy / flanneld services, with the Windows host faked at the _execute_module boundary."""

import pytest
from remote_host import FakeScm

from ansible_collections.kubewin.nodes.plugins.action.win_host_service import ActionModule
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host.service import split_windows_command_line

PROXY = {"name": "kube-proxy", "path": "C:\\k\\kube-proxy.exe", "dependencies": ["kubelet"],
         "args": ["--windows-service", "--hostname-override=win 1", "--network-name=cbr0"],
         "environment": {"KUBE_NETWORK": "cbr0"}}


def test_started_registers_and_starts_then_rerun_is_unchanged(make_action):
    scm = FakeScm()
    first = make_action(ActionModule, dict(PROXY), scm.host).run(task_vars={})
    assert first["changed"] and first["definition"] == "create" and first["run"] == "start"
    assert first["status"] == "Running" and scm.services["kube-proxy"]["environment"] == ["KUBE_NETWORK=cbr0"]
    assert split_windows_command_line(scm.services["kube-proxy"]["image_path"]) == [PROXY["path"]] + PROXY["args"]
    again = make_action(ActionModule, dict(PROXY), scm.host).run(task_vars={})
    assert again["changed"] is False and scm.host.names()[-1] == "service_state"


def test_environment_change_restarts_the_service_once(make_action):
    scm = FakeScm()
    make_action(ActionModule, dict(PROXY), scm.host).run(task_vars={})
    changed = make_action(ActionModule, dict(PROXY, environment={"KUBE_NETWORK": "flannel.4096"}),
                          scm.host).run(task_vars={})
    assert changed["differences"] == ["environment"] and changed["run"] == "restart"
    assert scm.services["kube-proxy"]["restarts"] == 2


def test_check_mode_registers_nothing(make_action):
    scm = FakeScm()
    result = make_action(ActionModule, dict(PROXY), scm.host, check_mode=True).run(task_vars={})
    assert result["changed"] and scm.services == {}


def test_nssm_parameters_are_compared_by_the_values_the_task_sets(make_action):
    scm = FakeScm()
    flanneld = {"name": "flanneld", "path": "C:\\k\\nssm.exe",
                "parameters": {"Application": "C:\\k\\flanneld.exe", "AppEnvironmentExtra": ["NODE_NAME=win-1"]}}
    assert make_action(ActionModule, dict(flanneld), scm.host).run(task_vars={})["changed"]
    scm.services["flanneld"]["parameters"]["AppExit"] = "Restart"  # NSSM keeps its own values there too
    assert make_action(ActionModule, dict(flanneld), scm.host).run(task_vars={})["changed"] is False
    moved = dict(flanneld, parameters={"Application": "D:\\k\\flanneld.exe",
                                       "AppEnvironmentExtra": ["NODE_NAME=win-1"]})
    assert make_action(ActionModule, moved, scm.host).run(task_vars={})["differences"] == ["parameters"]


def test_a_start_windows_refuses_names_the_log_to_read(make_action):
    """A program that exits before it reports Running makes Start-Service throw (1053/1067): the error
    must still say where the service's own words are."""
    scm = FakeScm()
    scm.start_error = ("Service 'kube-proxy (kube-proxy)' cannot be started due to the following error: Cannot start "
                       "service kube-proxy on computer '.'. (1067: The process terminated unexpectedly.)")
    task = dict(PROXY, log_files=["C:\\var\\log\\kubelet\\kube-proxy.log"])
    result = make_action(ActionModule, task, scm.host).run(task_vars={"inventory_hostname": "win-1"})
    assert result["failed"] and "1067: The process terminated unexpectedly" in result["msg"]
    assert "Get-Content -Tail 50 C:\\var\\log\\kubelet\\kube-proxy.log" in result["msg"], result["msg"]


def test_a_service_that_does_not_stay_running_fails_the_task(make_action):
    scm = FakeScm()
    scm.after_start = "Paused"  # what NSSM shows while its program keeps exiting
    result = make_action(ActionModule, dict(PROXY), scm.host).run(task_vars={"inventory_hostname": "win-1"})
    assert result["failed"] and result["msg"].startswith("win_host_service on win-1: service kube-proxy was started")
    # the watch still runs: its samples and log tails say why
    assert "then went Paused" in result["msg"] and scm.host.names()[-1] == "service_apply"
    assert scm.host.calls[-1][1]["WatchSeconds"] > 0


NSSM = {"name": "flanneld", "path": "C:\\k\\nssm.exe",
        "parameters": {"Application": "C:\\k\\flanneld.exe", "AppRotateFiles": 1, "AppRotateSeconds": 86400,
                       "AppRotateBytes": "10485760", "AppStopMethodSkip": 4294967295, "AppNoConsole": True}}


def test_nssm_numeric_settings_are_written_as_dwords_and_compared_typed(make_action):
    scm = FakeScm()
    assert make_action(ActionModule, dict(NSSM), scm.host).run(task_vars={})["changed"]
    apply = [p for n, p in scm.host.calls if n == "service_apply"][0]
    assert apply["ParameterTypes"] == {"Application": "String", "AppRotateFiles": "DWord", "AppRotateSeconds": "DWord",
                                       "AppRotateBytes": "DWord", "AppStopMethodSkip": "DWord", "AppNoConsole": "DWord"}
    assert apply["Parameters"]["AppRotateBytes"] == 10485760 and apply["Parameters"]["AppNoConsole"] == 1
    assert scm.services["flanneld"]["parameters"]["AppStopMethodSkip"] == -1  # how GetValue reads 0xFFFFFFFF
    assert make_action(ActionModule, dict(NSSM), scm.host).run(task_vars={})["changed"] is False


def test_a_numeric_nssm_setting_stored_as_text_is_rewritten(make_action):
    scm = FakeScm()
    make_action(ActionModule, dict(NSSM), scm.host).run(task_vars={})
    scm.services["flanneld"]["parameters"]["AppRotateFiles"] = "1"  # REG_SZ: NSSM reads 0x31 = 49
    result = make_action(ActionModule, dict(NSSM), scm.host).run(task_vars={})
    assert result["differences"] == ["parameters"] and scm.services["flanneld"]["parameters"]["AppRotateFiles"] == 1


def test_a_numeric_nssm_setting_that_is_no_number_fails_before_any_change(make_action):
    scm = FakeScm()
    bad = dict(NSSM, parameters={"AppThrottle": "1.5s"})
    result = make_action(ActionModule, bad, scm.host).run(task_vars={"inventory_hostname": "win-1"})
    assert result["failed"] and "parameters.AppThrottle is '1.5s'" in result["msg"] and "REG_DWORD" in result["msg"]
    assert scm.services == {}


def test_nssm_stdio_settings_given_as_digits_are_dwords(make_action):
    """NSSM 2.24 registry.h reads App{Stdin,Stdout,Stderr}{ShareMode,CreationDisposition,FlagsAndAttributes}
    as DWORDs: digits given as text (as YAML often gives them) must not become REG_SZ."""
    scm = FakeScm()
    task = dict(NSSM, parameters={"Application": "C:\\k\\flanneld.exe", "AppStdoutCreationDisposition": "4",
                                  "AppStderrShareMode": "3"})
    make_action(ActionModule, task, scm.host).run(task_vars={})
    apply = [p for n, p in scm.host.calls if n == "service_apply"][0]
    assert apply["ParameterTypes"]["AppStdoutCreationDisposition"] == "DWord"
    assert apply["ParameterTypes"]["AppStderrShareMode"] == "DWord"
    assert apply["Parameters"]["AppStdoutCreationDisposition"] == 4


def test_app_parameters_are_quoted_into_nssm_s_appparameters_and_split_back_into_the_same_arguments(make_action):
    """An argument with a space is quoted whole, so Windows splits the line back into the same arguments."""
    scm = FakeScm()
    argv = ["--kube-subnet-mgr", "--kubeconfig-file=C:\\Program Files\\flannel\\kubeconfig", "--iface=192.0.2.20"]
    flanneld = {"name": "flanneld", "path": "C:\\k\\nssm.exe", "app_parameters": argv,
                "parameters": {"Application": "C:\\k\\flanneld.exe"}}
    assert make_action(ActionModule, dict(flanneld), scm.host).run(task_vars={})["changed"]
    line = scm.services["flanneld"]["parameters"]["AppParameters"]
    assert line == '--kube-subnet-mgr "--kubeconfig-file=C:\\Program Files\\flannel\\kubeconfig" --iface=192.0.2.20'
    assert split_windows_command_line("x " + line)[1:] == argv
    assert make_action(ActionModule, dict(flanneld), scm.host).run(task_vars={})["changed"] is False
    both = dict(flanneld, parameters={"Application": "C:\\k\\flanneld.exe", "appparameters": "-x"})
    result = make_action(ActionModule, both, scm.host).run(task_vars={})
    assert result["failed"] and "app_parameters" in result["msg"]


def test_an_empty_description_is_refused_before_anything_is_read_or_changed(make_action):
    """N5 (shared/audits/powershell-2.md): Set-Service -Description is [ValidateNotNullOrEmpty], so an empty
    description used to fail on the host after New-Service had created the service, on every run."""
    scm = FakeScm()
    result = make_action(ActionModule, dict(PROXY, description=""), scm.host).run(task_vars={"inventory_hostname": "w"})
    assert result["failed"] and "description is empty" in result["msg"] and "leave description out" in result["msg"]
    assert scm.host.calls == [] and scm.services == {}
    # a text of blanks is not empty: Windows takes it
    assert not make_action(ActionModule, dict(PROXY, description=" "), scm.host).run(task_vars={}).get("failed")


def test_removal_is_one_remote_operation_and_check_mode_only_reads(make_action):
    """Issue 22: reset removes each service with one service_apply call (it says whether there was one to remove);
    check and diff mode read the service instead, to report what would change without changing it."""
    scm = FakeScm()
    make_action(ActionModule, dict(PROXY), scm.host).run(task_vars={})
    check = make_action(ActionModule, {"name": "kube-proxy", "state": "absent"}, scm.host, check_mode=True)
    del scm.host.calls[:]
    assert check.run(task_vars={})["changed"] and "kube-proxy" in scm.services
    assert scm.host.names() == ["service_state"]
    del scm.host.calls[:]
    first = make_action(ActionModule, {"name": "kube-proxy", "state": "absent"}, scm.host).run(task_vars={})
    assert first["changed"] and first["definition"] == "remove" and first["status"] == "Absent"
    assert scm.services == {} and scm.host.names() == ["service_apply"]
    again = make_action(ActionModule, {"name": "kube-proxy", "state": "absent"}, scm.host).run(task_vars={})
    assert again["changed"] is False and again["definition"] == "none" and scm.host.names() == ["service_apply"] * 2


# kube_proxy: kube-proxy's command line made by the action (its bytes: test_network_services_golden.py)
KUBE_PROXY = {"name": "kube-proxy", "path": "C:\\k\\kube-proxy.exe", "dependencies": ["flanneld"],
              "kube_proxy": {"node_name": "win-1", "cluster_cidr": "10.244.0.0/16", "backend": "vxlan", "vni": 4096,
                             "pod_cidr": "10.244.3.0/24", "version": "1.33.2"}}


def test_kube_proxy_runs_under_kube_log_runner_with_its_source_vip(make_action):
    scm = FakeScm()
    result = make_action(ActionModule, dict(KUBE_PROXY), scm.host).run(task_vars={})
    assert result["changed"] and not result.get("failed"), result.get("msg")
    argv = split_windows_command_line(scm.services["kube-proxy"]["image_path"])
    assert argv[0] == "C:\\k\\kube-log-runner.exe" and argv[2] == "C:\\k\\kube-proxy.exe"
    assert "--hostname-override=win-1" in argv and "--network-name=flannel.4096" in argv
    assert "--source-vip=10.244.3.254" in argv


@pytest.mark.parametrize("change, words", [
    ({"version": "latest"}, "kube_version 'latest' is not a Kubernetes version like v1.33.2 (kube-proxy's flags"),
    ({"pod_cidr": ""}, "the node has no podCIDR yet"),
    ({"pod_cidr": "10.244.3.0/31"}, "no room for kube-proxy's source VIP"),
    ({"log_file_max_size_mb": 0}, "kubewin_log_file_max_size_mb is 0"),
])
def test_kube_proxy_s_command_line_that_cannot_be_made_fails_before_any_remote_operation(make_action, change, words):
    scm = FakeScm()
    task = dict(KUBE_PROXY, kube_proxy=dict(KUBE_PROXY["kube_proxy"], **change))
    result = make_action(ActionModule, task, scm.host).run(task_vars={"inventory_hostname": "win-1"})
    assert result["failed"] and words in result["msg"] and result["msg"].startswith(
        "win_host_service on win-1: service kube-proxy: "), result["msg"]
    assert scm.host.calls == []


def test_kube_proxy_makes_the_arguments_so_args_beside_it_are_refused(make_action):
    scm = FakeScm()
    result = make_action(ActionModule, dict(KUBE_PROXY, args=["--v=4"]), scm.host).run(task_vars={})
    assert result["failed"] and "args and kube_proxy are mutually exclusive" in result["msg"]
    assert scm.host.calls == []
    # host-gw needs no pod subnet (no source VIP)
    hostgw = dict(KUBE_PROXY, kube_proxy=dict(KUBE_PROXY["kube_proxy"], backend="host-gw", pod_cidr=None))
    assert not make_action(ActionModule, hostgw, scm.host).run(task_vars={}).get("failed")
    assert "--source-vip" not in scm.services["kube-proxy"]["image_path"]
