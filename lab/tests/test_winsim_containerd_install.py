"""containerd's install on a bare host in the simulator (issue 23): the Containers feature and the restart it asks for
(winsim_features), `containerd.exe config default`, `--register-service` and `--unregister-service` (winsim_containerd),
and kubewin.nodes.win_containerd run by ansible-playbook against them. No control plane."""

import os
import sys
import tomllib
from unittest import mock

import pytest
import yaml
from winsim import core
from winsim.testing import Lab

# isort: split
# winsim.core has put the stand-in ansible.windows collection on sys.path.
from ansible_collections.ansible.windows.plugins.module_utils import (
    winsim_binaries,
    winsim_containerd,
    winsim_features,
    winsim_files,
    winsim_scm,
    winsim_tasks,
)

from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import containerd as kc

EXE = kc.EXE


@pytest.fixture
def bare(tmp_path):
    host = core.create_host(str(tmp_path), "b", profile="ws2022-no-containers")
    core.write_binary(host.local_path(EXE), "containerd", "2.3.5")
    return host


def _run(host, *argv):
    with host.open():
        return winsim_binaries.run(host, list(argv), shell="powershell")


def test_the_bare_profile_has_no_containers_feature_no_hcs_and_no_runtime(bare):
    with bare.open(save=False):
        st = bare.state
        assert st["features"] == {"Containers": "Available"} and st["runtime"] is None and st["pipes"] == []
        assert "vmcompute" not in st["services"] and "containerd" not in st["services"]


def test_the_containers_feature_asks_for_a_restart_and_is_installed_by_it(bare):
    with bare.open():
        first = winsim_features.install(bare.state, ["Containers"])
        again = winsim_features.install(bare.state, ["Containers"])
    assert first["changed"] and first["reboot_required"] and first["exitcode"] == "SuccessRestartRequired"
    # before the restart: still pending, nothing changed, a restart still asked for (the stricter reading)
    assert not again["changed"] and again["reboot_required"] and again["feature_result"] == []
    core.reboot(bare.root, bare.name)
    with bare.open():
        assert bare.state["features"]["Containers"] == "Installed"
        assert winsim_scm.find(bare.state, "vmcompute")["status"] == "Running"
        done = winsim_features.install(bare.state, ["Containers"])
    assert done == {"changed": False, "exitcode": "NoChangeNeeded", "reboot_required": False, "success": True,
                    "feature_result": []}


@pytest.mark.parametrize("version, key", [("2.3.5", 3), ("1.7.27", 2)])
def test_config_default_is_toml_the_collection_configures(version, key):
    text = winsim_containerd.default_config(version)
    assert tomllib.loads(text)["version"] == key
    got = tomllib.loads(kc.render_config(text, "mcr.microsoft.com/oss/kubernetes/pause:3.9", kc.CNI_BIN_DIR,
                                         kc.CNI_CONF_DIR, kc.HOSTS_DIR))
    plugins = got["plugins"]
    if key == 3:
        assert plugins[kc.V3_IMAGES]["pinned_images"]["sandbox"] == "mcr.microsoft.com/oss/kubernetes/pause:3.9"
        assert plugins[kc.V3_RUNTIME]["cni"]["bin_dirs"] == [kc.CNI_BIN_DIR]
    else:
        assert plugins[kc.V2_CRI]["registry"]["config_path"] == kc.HOSTS_DIR


def test_config_default_ignores_the_config_file(bare):
    with bare.open():
        path = bare.local_path(winsim_containerd.DEFAULT_CONFIG)
        with open(path, "w") as f:
            f.write("version = = broken")
    rc, out, err = _run(bare, EXE, "config", "default")
    assert rc == 0 and out == winsim_containerd.default_config("2.3.5") and err == ""


def test_register_service_as_containerd_registers_it(bare):
    assert _run(bare, EXE, *kc.register_args()) == (0, "", "")
    with bare.open(save=False):
        svc = winsim_scm.find(bare.state, "containerd")
        assert svc["image_path"] == kc.service_command() and svc["start"] == 2 and svc["status"] == "Stopped"
    assert _run(bare, EXE, "--unregister-service") == (0, "", "")
    assert _run(bare, EXE, "--register-service") == (0, "", "")
    with bare.open(save=False):
        assert winsim_scm.find(bare.state, "containerd")["image_path"] == kc.service_command(log_file=False)
        assert svc["display_name"] == "Containerd" and svc["description"] == "Container runtime"
        assert bare.state["runtime"] == {"name": "containerd", "version": "2.3.5"}
    assert _run(bare, EXE, "--register-service") == (1, "", "containerd: The specified service already exists.\n")
    assert _run(bare, EXE, "--register-service", "--unregister-service")[0] == 1
    assert _run(bare, EXE, "--register-service", "--bogus") == (
        1, "", "Incorrect Usage: flag provided but not defined: -bogus\n")
    # without the Containers feature the service does not start (the stricter choice)
    with bare.open():
        with pytest.raises(Exception, match="the Containers feature is Available"):
            winsim_scm.start(bare, "containerd")
    assert _run(bare, EXE, "--unregister-service") == (0, "", "")
    with bare.open(save=False):
        assert winsim_scm.find(bare.state, "containerd") is None
    # review-s9 W4: deleted while another program holds a handle (Microsoft Learn, DeleteService), the service stays
    # marked for deletion and CreateService fails with 1072
    assert _run(bare, EXE, *kc.register_args()) == (0, "", "")
    with bare.open():
        bare.state["open_service_handles"] = ["containerd"]
    assert _run(bare, EXE, "--unregister-service") == (0, "", "")
    assert _run(bare, EXE, *kc.register_args()) == (
        1, "", "containerd: The specified service has been marked for deletion.\n")


def test_a_bare_host_gets_the_feature_the_restart_and_a_running_containerd_then_nothing_changes(tmp_path):
    lab = Lab(tmp_path, profile="ws2022-no-containers")
    core.write_binary(core.Host(lab.root, "win-1").local_path(EXE), "containerd", "2.3.5")
    tasks = """
    - name: feature
      ansible.windows.win_feature: {name: Containers, state: present}
      register: feature
    - name: reboot
      ansible.windows.win_reboot: {}
      when: feature.reboot_required
    - name: containerd
      kubewin.nodes.win_containerd:
        sandbox_image: mcr.microsoft.com/oss/kubernetes/pause:3.9
        registry_mirrors: [{prefix: docker.io, mirrors: [{host: "https://mirror.example"}]}]
    """
    rc, doc, results = lab.play(tasks)
    assert rc == 0, doc
    assert results["feature"]["win-1"]["reboot_required"] and results["reboot"]["win-1"]["rebooted"]
    assert results["containerd"]["win-1"]["changed"] and results["containerd"]["win-1"]["registered"]
    dump = lab.dump()
    assert dump["services"]["containerd"]["status"] == "Running"
    # registered with its log file, where the node log query finds query=containerd, which containerd wrote at start
    assert dump["services"]["containerd"]["image_path"] == kc.service_command()
    host = core.Host(lab.root, "win-1")
    with open(host.local_path(kc.LOG_FILE)) as f:
        assert 'msg="starting containerd" version=v2.3.5' in f.read()
    assert kc.ROTATE_SCRIPT in dump["files"] and kc.ROTATE_SETTINGS in dump["files"]
    assert "\\\\.\\pipe\\containerd-containerd" in dump["pipes"]
    assert dump["files"][kc.HOSTS_DIR + "\\docker.io\\hosts.toml"].startswith("sha256:")
    lab.reset_ops()
    rc, doc, results = lab.play(tasks)
    assert rc == 0, results["containerd"]["win-1"].get("msg")
    assert not any(r["win-1"].get("changed") for r in results.values()), results
    assert results["reboot"]["win-1"].get("skipped") and lab.dump() == dump
    assert lab.ops() == ["win_feature", "win_powershell"]


def test_node_sync_checks_a_sha256_archive_and_stamps_it(bare):
    """An archive checked by SHA-256 (containerd's .sha256sum): unpacked and stamped with the SHA-256; a wrong one is
    refused with both checksums, before anything is unpacked."""
    import hashlib
    import io
    import tarfile

    from winsim.ps.winhost import run_kubewin_script

    from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import files as host_files
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        data = b"KUBEWIN-SIM-BINARY ctr 2.3.5\n"
        info = tarfile.TarInfo("bin/ctr.exe")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    archive = raw.getvalue()
    with open(bare.local_path("C:\\Windows\\Temp\\c.tar.gz"), "wb") as f:
        f.write(archive)
    entry = {"url": "C:\\Windows\\Temp\\c.tar.gz", "extract_dir": "C:\\ctr", "sha256": "0" * 64}
    entry["dest"] = host_files.stamp_path(entry)
    with bare.open():
        with pytest.raises(Exception, match="checksum mismatch for C:.*expected sha256 0{64}, got %s"
                                            % hashlib.sha256(archive).hexdigest()):
            run_kubewin_script(bare, "node_sync", {"Downloads": [entry]})
        assert not os.path.exists(bare.local_path("C:\\ctr\\bin\\ctr.exe"))
        entry["sha256"] = hashlib.sha256(archive).hexdigest()
        run_kubewin_script(bare, "node_sync", {"Downloads": [entry]})
        with open(bare.local_path(entry["dest"])) as f:
            assert f.read() == entry["sha256"]
        with open(bare.local_path("C:\\ctr\\bin\\ctr.exe"), "rb") as f:
            assert f.read() == data


def test_crictl_answers_on_the_pipe_and_a_pods_shim_keeps_its_program_in_use(bare):
    """Issue 23 point 2: the upgrade's simulated steps. crictl version (cri-tools' lines, containerd's tag as
    RuntimeVersion) only while containerd's pipe exists; a pod sandbox keeps containerd-shim-runhcs-v1.exe in use
    (tar.exe cannot write it) until crictl rmp --all --force removed it."""
    crictl = kc.CRICTL
    endpoint = ["--runtime-endpoint", kc.PIPE]
    shim = kc.PROGRAM_DIR + "\\bin\\containerd-shim-runhcs-v1.exe"
    with bare.open():
        core.write_binary(bare.local_path(crictl), "crictl", "1.34.0")
        core.write_binary(bare.local_path(shim), "containerd", "2.3.5")
        rc, _, err = winsim_binaries.run(bare, [crictl] + endpoint + ["version"], shell="powershell")
        assert rc == 1 and "connection error" in err
        bare.state["pipes"].append(r"\\.\pipe\containerd-containerd")
        bare.state["services"]["containerd"] = {"status": "Running", "image_path": kc.service_command()}
        bare.state["sandboxes"] = [{"id": "5f1e"}]
        assert winsim_binaries.run(bare, [crictl] + endpoint + ["version"], shell="powershell") == (0, (
            "Version:  0.1.0\nRuntimeName:  containerd\nRuntimeVersion:  v2.3.5\nRuntimeApiVersion:  v1\n"), "")
        from ansible_collections.ansible.windows.plugins.module_utils import winsim_files
        assert winsim_files.in_use(bare, bare.local_path(shim)) and winsim_files.in_use(bare, bare.local_path(EXE))
        assert winsim_binaries.run(bare, [crictl] + endpoint + ["rmp", "--all", "--force"], shell="powershell") == (
            0, "Removed sandbox 5f1e\n", "")
        # its shim exits a little later (review-s9 W8: containerd does not wait for it)
        assert winsim_files.in_use(bare, bare.local_path(shim))
        winsim_scm.advance(bare, winsim_binaries.SHIM_EXIT_SECONDS)
        assert not winsim_files.in_use(bare, bare.local_path(shim))


def test_a_configuration_change_restarts_containerd_and_starts_again_the_kubelet_it_stopped(tmp_path):
    """Stop-Service -Force stops containerd's dependents (the kubelet) and leaves them stopped (ServiceController.Stop):
    containerd_apply starts again those that were running, so a new sandbox image does not leave the node without its
    kubelet (h-rtup's finding; Docker hosts are not concerned)."""
    lab = Lab(tmp_path, profile="ws2022-no-containers")
    core.write_binary(core.Host(lab.root, "win-1").local_path(EXE), "containerd", "2.3.5")
    task = """
    - name: feature
      ansible.windows.win_feature: {name: Containers, state: present}
      register: feature
    - name: reboot
      ansible.windows.win_reboot: {}
      when: feature.reboot_required
    - name: containerd
      kubewin.nodes.win_containerd: {sandbox_image: "%s"}
    """
    rc, doc, _ = lab.play(task % "mcr.microsoft.com/oss/kubernetes/pause:3.9")
    assert rc == 0, doc
    host = core.Host(lab.root, "win-1")
    with host.open():
        core.write_binary(host.local_path("C:\\k\\kubelet.exe"), "kubelet", "v1.37.2")
        winsim_scm.create(host.state, "kubelet", "C:\\k\\kubelet.exe --windows-service", dependencies=["containerd"])
        winsim_scm.start(host, "kubelet")
        assert host.state["services"]["kubelet"]["status"] == "Running"
    rc, doc, results = lab.play(task % "registry.example/pause:3.10")
    assert rc == 0, results["containerd"]["win-1"].get("msg")
    assert results["containerd"]["win-1"]["changed"]
    services = lab.dump()["services"]
    assert services["containerd"]["status"] == "Running" and services["kubelet"]["status"] == "Running"
    # review-s9 W4: a dependent that does not start again is named, each tried (containerd_apply's finally)
    core.set_fault(lab.root, "win-1", "service:kubelet", "fail_always")
    rc, doc, results = lab.play(task % "registry.example/pause:3.10.2")
    msg = results["containerd"]["win-1"].get("msg") or ""
    assert rc != 0 and "did not all start again: kubelet: " in msg and "winsim fault injected" in msg, msg
    assert lab.dump()["services"]["containerd"]["status"] == "Running"


def _installed(lab, image_path, log_dir=True):
    """A host where containerd runs as an earlier run registered it (image_path), its config as win_containerd made
    it."""
    host = core.Host(lab.root, "win-1")
    core.write_binary(host.local_path(EXE), "containerd", "2.3.5")
    with host.open():
        winsim_features.install(host.state, ["Containers"])
    core.reboot(lab.root, "win-1")
    with host.open():
        winsim_scm.create(host.state, "containerd", image_path, "Containerd", start=2)
        host.state["runtime"] = {"name": "containerd", "version": "2.3.5"}
        if log_dir:
            os.makedirs(host.local_path(kc.LOG_DIR), exist_ok=True)
    return host


CONTAINERD_TASK = """
    - name: containerd
      kubewin.nodes.win_containerd:
        sandbox_image: mcr.microsoft.com/oss/kubernetes/pause:3.9
        log_max_size_mb: 1
        log_max_files: 2
"""


def test_containerd_an_earlier_release_registered_without_its_log_file_is_registered_again_with_it(tmp_path):
    """review-s8 W3: the earlier registration discarded containerd's log; with kubewin_containerd_install always the
    service gets --log-file and is restarted; the next run changes nothing. review-s9 W4: its ImagePath changes in
    place (Win32_Service.Change), so another program holding the service open (services.msc) does not matter, the
    recovery actions stay and the kubelet the restart stopped runs again. Fails on the old code (delete and create:
    CreateService 1072 while the handle is open, containerd gone and the kubelet stopped)."""
    lab = Lab(tmp_path, profile="ws2022-no-containers")
    host = _installed(lab, kc.service_command(log_file=False), log_dir=False)
    with host.open():
        winsim_scm.find(host.state, "containerd")["failure_actions"] = recovery = winsim_scm.encode_failure_actions(
            86400, [("restart", 15000), ("restart", 15000), ("none", 0)])
        core.write_binary(host.local_path("C:\\k\\kubelet.exe"), "kubelet", "v1.37.2")
        winsim_scm.create(host.state, "kubelet", "C:\\k\\kubelet.exe --windows-service", dependencies=["containerd"])
        winsim_scm.start(host, "kubelet")
        host.state["open_service_handles"] = ["containerd"]
    rc, doc, results = lab.play(CONTAINERD_TASK)
    got = results["containerd"]["win-1"]
    assert rc == 0 and got["changed"] and got["registered"] and got["restarted"], got.get("msg")
    dump = lab.dump()
    assert dump["services"]["containerd"]["image_path"] == kc.service_command()
    assert dump["services"]["containerd"]["status"] == "Running"
    assert dump["services"]["containerd"]["failure_actions"] == recovery
    assert dump["services"]["kubelet"]["status"] == "Running"
    with open(host.local_path(kc.LOG_FILE)) as f:
        assert "starting containerd" in f.read()
    lab.reset_ops()
    rc, doc, results = lab.play(CONTAINERD_TASK)
    assert rc == 0 and not results["containerd"]["win-1"]["changed"], doc
    assert lab.ops() == ["win_powershell"]


def test_containerd_another_command_line_is_still_refused(tmp_path):
    lab = Lab(tmp_path, profile="ws2022-no-containers")
    _installed(lab, '"%s" --run-service --config C:\\etc\\containerd.toml' % EXE)
    rc, doc, results = lab.play(CONTAINERD_TASK)
    assert rc != 0 and "another installation of containerd" in results["containerd"]["win-1"]["msg"]


def test_containerd_does_not_start_without_its_log_files_directory(bare):
    """os.OpenFile does not make the directory: containerd ends before it reports to the SCM."""
    with bare.open():
        winsim_features.install(bare.state, ["Containers"])
    core.reboot(bare.root, bare.name)
    assert _run(bare, EXE, *kc.register_args()) == (0, "", "")
    with bare.open():
        with pytest.raises(Exception, match="open log file"):
            winsim_scm.start(bare, "containerd")
        os.makedirs(bare.local_path(kc.LOG_DIR))
        winsim_scm.start(bare, "containerd")
        assert winsim_scm.find(bare.state, "containerd")["status"] == "Running"


def _rotate(host):
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_tasks
    task = {"key": "\\kubewin-containerd-log", "actions": [{
        "path": "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe",
        "arguments": '-NoProfile -NonInteractive -ExecutionPolicy Bypass -File "%s"' % kc.ROTATE_SCRIPT}]}
    with host.open():
        return winsim_tasks.run_task(host, task)


def test_the_rotation_task_copies_and_truncates_the_log_containerd_holds_and_keeps_max_files_copies(tmp_path):
    """The script the task kubewin-containerd-log runs, through the lab's interpreter, on the log a running containerd
    holds open (it cannot be renamed or deleted then): below the size nothing happens; at the size the copies move up,
    the log is copied to containerd-1.log and truncated, and no more than max_files copies stay."""
    lab = Lab(tmp_path, profile="ws2022-no-containers")
    host = _installed(lab, kc.service_command())
    rc, doc, _ = lab.play(CONTAINERD_TASK)  # writes the script and its settings (1 MiB, 2 copies), starts containerd
    assert rc == 0, doc
    log = host.local_path(kc.LOG_FILE)
    copy = {i: host.local_path(kc.LOG_DIR + "\\containerd-%d.log" % i) for i in (1, 2, 3)}
    with host.open(save=False):
        with pytest.raises(Exception, match="being used by another process"):
            winsim_files.check_writable(host, log)
    assert _rotate(host) == (0, None)
    assert not os.path.exists(copy[1]) and os.path.getsize(log) > 0
    for n in range(3):
        with open(log, "a") as f:
            f.write(("line %d " % n) * 150000 + "\n")
        assert _rotate(host) == (0, None), n
        assert os.path.getsize(log) == 0
        with open(copy[1]) as f:
            text = f.read()
        assert ("line %d " % n) in text and ("line %d " % (n - 1)) not in text
    with open(copy[2]) as f:
        assert "line 1 " in f.read()
    assert not os.path.exists(copy[3])


def test_the_rotation_streams_a_log_longer_than_a_net_string_holds(tmp_path):
    """review-s9 W3b: the earlier script read the log into one string (ReadToEnd), which throws OutOfMemoryException
    past about 1 billion characters (Microsoft Learn, String class); the copy is streamed now. The interpreter's bound
    is lowered to 1 MiB here instead of writing a 1 GiB log. Fails on the old script (its task result was 1)."""
    lab = Lab(tmp_path, profile="ws2022-no-containers")
    host = _installed(lab, kc.service_command())
    rc, doc, _ = lab.play(CONTAINERD_TASK)  # 1 MiB, 2 copies
    assert rc == 0, doc
    log, copy = host.local_path(kc.LOG_FILE), host.local_path(kc.LOG_DIR + "\\containerd-1.log")
    with open(log, "a") as f:
        f.write("long " * 600000 + "\n")
    with open(log, "rb") as f:
        before = f.read()
    winsim_tasks._interpreter()  # the interpreter as the task runs it (lab/winsim/ps imported as ps)
    with mock.patch.object(sys.modules["ps.winfiles"], "MAX_STRING_CHARS", 1048576):
        assert _rotate(host) == (0, None)
    assert os.path.getsize(log) == 0
    with open(copy, "rb") as f:
        assert f.read() == before


def test_the_upgrades_stop_removes_the_pods_with_a_longer_crictl_timeout_then_stops_containerd(bare):
    """review-s9 W1: containerd_apply's Stop passes crictl --timeout 120s (its default 2 s bounds each CRI call, and
    stopping a Windows pod takes longer), removes every pod sandbox, then stops the service."""
    with bare.open():
        core.write_binary(bare.local_path(kc.CRICTL), "crictl", "1.34.0")
        winsim_scm.create(bare.state, "containerd", kc.service_command())
        bare.state["services"]["containerd"]["status"] = "Running"
        bare.state["pipes"].append(r"\\.\pipe\containerd-containerd")
        bare.state["sandboxes"] = [{"id": "5f1e"}, {"id": "77aa"}]
        result = _stop(bare)
        assert result["rmp_output"] == ["Removed sandbox 5f1e", "Removed sandbox 77aa"]
        assert result["status"] == "Stopped" and not bare.state.get("sandboxes")


def _stop(host):
    from winsim.ps.winhost import run_kubewin_script
    return run_kubewin_script(host, "containerd_apply", {
        "Stop": True, "Service": "containerd", "Crictl": kc.CRICTL, "Endpoint": kc.PIPE, "Shim": kc.SHIM,
        "ShimWaitSeconds": kc.SHIM_WAIT_SECONDS})["result"]


def _running_containerd(host, sandboxes):
    core.write_binary(host.local_path(kc.CRICTL), "crictl", "1.34.0")
    winsim_scm.create(host.state, "containerd", kc.service_command())
    host.state["services"]["containerd"]["status"] = "Running"
    host.state["pipes"].append(r"\\.\pipe\containerd-containerd")
    host.state["sandboxes"] = [{"id": i} for i in sandboxes]


def test_a_removed_pods_shim_exits_a_little_later_and_the_stop_waits_for_it(bare):
    """review-s9 W8: containerd sends a removed pod's shim Shutdown and does not wait for its exit (core/runtime/v2/
    shim.go): the shim keeps containerd-shim-runhcs-v1.exe in use for SHIM_EXIT_SECONDS after rmp. The stop polls
    Get-Process until it is gone (the host's clock moves on by the Start-Sleeps), and reports no shim."""
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_files
    with bare.open():
        _running_containerd(bare, ["5f1e"])
        shim = bare.local_path(winsim_binaries.CONTAINERD_SHIM)
        assert winsim_binaries.run(bare, [kc.CRICTL, "--runtime-endpoint", kc.PIPE, "rmp", "--all", "--force"],
                                   shell="powershell")[0] == 0
        assert [s["sandbox"] for s in winsim_binaries.shims(bare)] == ["5f1e"] and winsim_files.in_use(bare, shim)
        bare.state["sandboxes"] = [{"id": "77aa"}]
        start = winsim_scm.clock(bare)
        result = _stop(bare)
        assert result["status"] == "Stopped" and result["shims"] == [], result
        waited = winsim_scm.clock(bare) - start
        assert winsim_binaries.SHIM_EXIT_SECONDS <= waited < kc.SHIM_WAIT_SECONDS, waited
        assert not winsim_binaries.shims(bare) and not winsim_files.in_use(bare, shim)


def test_a_shim_of_another_containerd_namespace_outlives_the_wait_and_its_pid_is_reported(bare):
    """review-s9 W8: a container of nerdctl's default namespace is no CRI pod (crictl does not remove it) and its shim
    runs on: the stop waits ShimWaitSeconds and reports its PID (the controller fails before the unpack)."""
    with bare.open():
        _running_containerd(bare, [])
        bare.state["shims"] = [{"pid": 7004, "namespace": "default", "sandbox": None, "exits_at": None}]
        start = winsim_scm.clock(bare)
        result = _stop(bare)
        assert result["status"] == "Stopped" and result["shims"] == [7004], result
        assert winsim_scm.clock(bare) - start >= kc.SHIM_WAIT_SECONDS
        assert kc.stop_problem(result).startswith("containerd-shim-runhcs-v1.exe still runs (PID 7004) 30 s")


def _role_task(path, name):
    """The task ``name`` of a role's tasks file, blocks included, as YAML text for Lab.play."""
    def walk(tasks):
        for task in tasks or []:
            if task.get("name") == name:
                return task
            found = walk(task.get("block")) or walk(task.get("rescue")) or walk(task.get("always"))
            if found:
                return found
        return None
    with open(os.path.join(core.REPO, path)) as f:
        task = walk(yaml.safe_load(f))
    assert task is not None, name
    return yaml.safe_dump([task], sort_keys=False)


def test_the_roles_rotation_task_rotates_containerds_log_without_a_reboot(tmp_path):
    """review-s9 W3: the task kubewin-containerd-log as the runtime role registers it, on a host that does not restart:
    it runs at its registration (the log is below the size: nothing happens), then each hour, and rotates the log
    that grew meanwhile. Fails on the old role (a boot trigger only: nothing ran until a reboot)."""
    lab = Lab(tmp_path, profile="ws2022-no-containers")
    host = _installed(lab, kc.service_command())
    rc, doc, _ = lab.play(CONTAINERD_TASK)  # the script and its settings (1 MiB, 2 copies), containerd started
    assert rc == 0, doc
    with host.open(save=False):
        reboots = host.state["reboots"]
    task = _role_task("roles/runtime/tasks/main.yml",
                      "Rotate containerd's log hourly (scheduled task kubewin-containerd-log)")
    rc, doc, results = lab.play(task)
    assert rc == 0, doc
    log, copy = host.local_path(kc.LOG_FILE), host.local_path(kc.LOG_DIR + "\\containerd-1.log")
    with host.open(save=False):
        assert [(e["task"], e["result"]) for e in host.state["task_log"]] == [("\\kubewin-containerd-log", 0)]
    assert not os.path.exists(copy)
    with open(log, "a") as f:
        f.write("grown " * 200000 + "\n")
    core.wait(lab.root, "win-1", 3600)
    assert os.path.getsize(log) == 0 and os.path.getsize(copy) > 1048576
    with host.open(save=False):
        assert host.state["reboots"] == reboots and len(host.state["task_log"]) == 2
        assert host.state["task_log"][-1]["result"] == 0
