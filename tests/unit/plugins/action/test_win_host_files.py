"""win_host_files' remove_cni: reset removes what the roles put in the runtime's CNI directories, and nothing else;
forget_transport_key: reset deletes the transport key in the same node_sync run. A removal alone (no check or diff
mode) is one node_sync, without a files_state read (issue 22): node_sync says what it removed."""

from remote_host import RemoteHost

from ansible_collections.kubewin.nodes.plugins.action.win_host_files import ActionModule

BIN = "C:\\Program Files\\containerd\\cni\\bin"
CONF = "C:\\Program Files\\containerd\\cni\\conf"
VERSIONS = {"cni": "v1.6.2", "flannel_cni": "v1.7.1-flannel1", "sdn_cni": "v0.3.1"}


def _host(paths):
    calls = []

    def files_state(params):
        calls.append(params)
        return {"paths": {p: paths[p] for p in params.get("Paths", []) if p in paths}}

    def node_sync(params):
        # node_sync removes what is there (Remove) and each Prune directory then empty, and says which it removed
        calls.append(params)
        removed = [p for p in params.get("Remove", []) if paths.pop(p, None)]
        for d in params.get("Prune", []):
            inside = [p for p in paths if p.lower().startswith(d.lower() + "\\")]
            if paths.get(d) in ("dir", "empty-dir") and not inside:
                paths.pop(d)
                removed.append(d)
        return {"removed": removed}

    return RemoteHost({"files_state": files_state, "node_sync": node_sync}), calls


def test_reset_removes_the_cni_files_and_prunes_their_directories_before_the_others(make_action):
    paths = {CONF + "\\10-flannel.conf": "file", BIN + "\\win-overlay.exe": "file", BIN + "\\mine.exe": "file",
             CONF: "dir", BIN: "dir", "C:\\Program Files\\containerd\\cni": "dir", "C:\\k": "dir"}
    host, calls = _host(paths)
    args = {"absent": ["C:\\k"], "prune": ["C:\\etc"],
            "remove_cni": {"dirs": {"bin_dir": BIN, "conf_dir": CONF}, "container_runtime": "containerd",
                           "versions": VERSIONS}}
    result = make_action(ActionModule, args, host).run(task_vars={})
    assert result["changed"] and host.names() == ["node_sync"]
    sync = calls[0]
    assert sync["Remove"][0] == "C:\\k" and CONF + "\\10-flannel.conf" in sync["Remove"]
    assert BIN + "\\win-overlay.exe" in sync["Remove"] and BIN + "\\mine.exe" not in sync["Remove"]
    # the CNI directories first, then the task's own prune list
    assert sync["Prune"] == [CONF, BIN, "C:\\Program Files\\containerd\\cni", "C:\\etc"]
    # what node_sync removed: the operator's mine.exe keeps its directory and the one above
    assert result["removed"] == ["C:\\k", CONF + "\\10-flannel.conf", BIN + "\\win-overlay.exe", CONF]


def test_unknown_cni_directories_remove_nothing_there(make_action):
    host, calls = _host({"C:\\k": "dir"})
    args = {"absent": ["C:\\k"],
            "remove_cni": {"dirs": {"error": "containerd config dump failed"}, "container_runtime": "containerd",
                           "versions": VERSIONS}}
    make_action(ActionModule, args, host).run(task_vars={})
    assert calls[0]["Remove"] == ["C:\\k"] and calls[0]["Prune"] == []


def test_a_removal_of_what_is_not_there_is_one_operation_and_no_change(make_action):
    host, calls = _host({})
    result = make_action(ActionModule, {"absent": ["C:\\k"]}, host).run(task_vars={})
    assert result["changed"] is False and host.names() == ["node_sync"] and result["removed"] == []


def test_a_removal_in_check_or_diff_mode_reads_first_and_reports_what_would_go(make_action):
    for mode in ({"check_mode": True}, {"diff": True}):
        host, calls = _host({"C:\\k": "dir"})
        result = make_action(ActionModule, {"absent": ["C:\\k"]}, host, **mode).run(task_vars={})
        assert result["changed"] and result["removed"] == ["C:\\k"], mode
        assert host.names() == (["files_state"] if mode.get("check_mode") else ["files_state", "node_sync"]), mode


def test_forget_transport_key_rides_on_the_same_node_sync_and_is_no_change(make_action):
    # reset: the removal happens in node_sync, also when nothing else is left to remove (a second reset; the facts
    # read at its start made the key again), and never as a change of its own
    host, calls = _host({})
    result = make_action(ActionModule, {"absent": ["C:\\k"], "forget_transport_key": True}, host).run(task_vars={})
    assert host.names() == ["node_sync"] and calls[0]["ForgetTransportKey"] is True
    assert result["changed"] is False and result["removed"] == []


def test_forget_transport_key_with_files_to_remove_is_one_node_sync(make_action):
    host, calls = _host({"C:\\k": "dir", "C:\\etc": "dir"})
    args = {"absent": ["C:\\k"], "prune": ["C:\\etc"], "forget_transport_key": True}
    result = make_action(ActionModule, args, host).run(task_vars={})
    assert result["changed"] and host.names() == ["node_sync"] and result["removed"] == ["C:\\k", "C:\\etc"]
    assert calls[0]["Remove"] == ["C:\\k"] and calls[0]["ForgetTransportKey"] is True


def test_forget_transport_key_in_check_mode_deletes_nothing(make_action):
    host, calls = _host({})
    args = {"absent": ["C:\\k"], "forget_transport_key": True}
    result = make_action(ActionModule, args, host, check_mode=True).run(task_vars={})
    assert result["changed"] is False and host.names() == ["files_state"]


# source_vip_reservation: the file that keeps kube-proxy's source VIP from pods (its bytes:
# test_network_services_golden.py)
def test_the_source_vip_reservation_is_one_more_file_of_the_same_write(make_action):
    host, calls = _host({})
    args = {"files": [{"path": "C:\\etc\\a.conf", "content": "a"}],
            "source_vip_reservation": {"pod_cidr": "10.244.3.0/24", "backend": "vxlan", "vni": 4096}}
    result = make_action(ActionModule, args, host).run(task_vars={})
    assert host.names() == ["files_state", "node_sync"]
    assert result["written"][0] == "C:\\etc\\a.conf" and result["written"][1].endswith("\\flannel.4096\\10.244.3.254")
    assert calls[0]["Files"] == result["written"]


def test_a_source_vip_reservation_without_a_pod_subnet_fails_before_any_remote_operation(make_action):
    host, calls = _host({})
    args = {"source_vip_reservation": {"pod_cidr": "", "backend": "vxlan", "vni": 4096}}
    result = make_action(ActionModule, args, host).run(task_vars={"inventory_hostname": "win-1"})
    assert result["failed"] and "win_host_files on win-1: the node has no podCIDR yet" in result["msg"]
    assert calls == []


EXE = "C:\\k\\windows_exporter.exe"
OLD = "a" * 128
NEW = "b" * 128


def _exporter_host(have):
    """A host whose windows_exporter.exe has the SHA-512 ``have``; node_sync stops the service of each download it
    puts in place (as node_sync.ps1 does when it runs) and says so."""
    calls = []

    def files_state(params):
        calls.append(params)
        return {"files": {EXE: have}, "acls": {EXE: "O:BAD:AI(A;ID;FA;;;SY)(A;ID;FA;;;BA)"}}

    def node_sync(params):
        calls.append(params)
        return {"removed": [], "stopped": [d["service"] for d in params["Downloads"] if d.get("service")]}

    return RemoteHost({"files_state": files_state, "node_sync": node_sync}), calls


def test_a_download_names_its_service_to_node_sync_only_when_the_file_changes(make_action):
    """A version change of a running program (windows_exporter): node_sync gets the service with the download and
    stops it before the replacement (Windows cannot overwrite a running program), and the result says it was
    stopped; the same file again stops nothing. Fails on the old code (no such option, nothing stopped)."""
    download = {"url": "https://m/windows_exporter-0.31.8-amd64.exe", "dest": EXE, "sha512": NEW,
                "service": "windows_exporter"}
    host, calls = _exporter_host(OLD)
    result = make_action(ActionModule, {"downloads": [download]}, host).run(task_vars={})
    assert result["changed"] and result["stopped"] == ["windows_exporter"], result
    assert calls[-1]["Downloads"] == [{"url": download["url"], "dest": EXE, "sha512": NEW, "extract_dir": "",
                                       "service": "windows_exporter"}]
    host, calls = _exporter_host(NEW)
    result = make_action(ActionModule, {"downloads": [download]}, host).run(task_vars={})
    assert not result["changed"] and result["stopped"] == [] and host.names() == ["files_state"]


def test_in_check_mode_nothing_is_stopped(make_action):
    host, calls = _exporter_host(OLD)
    download = {"url": "https://m/w.exe", "dest": EXE, "sha512": NEW, "service": "windows_exporter"}
    result = make_action(ActionModule, {"downloads": [download]}, host, check_mode=True).run(task_vars={})
    assert result["changed"] and result["stopped"] == [] and host.names() == ["files_state"]
