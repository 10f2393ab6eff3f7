"""win_host_files' remove_cni: reset removes what the roles put in the runtime's CNI directories, and nothing else;
forget_transport_key: reset deletes the transport key in the same node_sync run."""

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
        calls.append(params)
        return {}

    return RemoteHost({"files_state": files_state, "node_sync": node_sync}), calls


def test_reset_removes_the_cni_files_and_prunes_their_directories_before_the_others(make_action):
    paths = {CONF + "\\10-flannel.conf": "file", BIN + "\\win-overlay.exe": "file", BIN + "\\mine.exe": "file",
             CONF: "dir", BIN: "dir", "C:\\Program Files\\containerd\\cni": "dir", "C:\\k": "dir"}
    host, calls = _host(paths)
    args = {"absent": ["C:\\k"], "prune": ["C:\\etc"],
            "remove_cni": {"dirs": {"bin_dir": BIN, "conf_dir": CONF}, "container_runtime": "containerd",
                           "versions": VERSIONS}}
    result = make_action(ActionModule, args, host).run(task_vars={})
    assert result["changed"] and host.names() == ["files_state", "node_sync"]
    sync = calls[1]
    assert sync["Remove"][0] == "C:\\k" and CONF + "\\10-flannel.conf" in sync["Remove"]
    assert BIN + "\\win-overlay.exe" in sync["Remove"] and BIN + "\\mine.exe" not in sync["Remove"]
    assert sync["Prune"] == [CONF, BIN, "C:\\Program Files\\containerd\\cni"]
    assert calls[0]["Paths"][-1] == "C:\\etc"  # the task's own prune list comes after the CNI directories


def test_unknown_cni_directories_remove_nothing_there(make_action):
    host, calls = _host({"C:\\k": "dir"})
    args = {"absent": ["C:\\k"],
            "remove_cni": {"dirs": {"error": "containerd config dump failed"}, "container_runtime": "containerd",
                           "versions": VERSIONS}}
    make_action(ActionModule, args, host).run(task_vars={})
    assert calls[0]["Paths"] == ["C:\\k"] and calls[1]["Remove"] == ["C:\\k"]


def test_without_remove_cni_only_the_given_paths_are_read(make_action):
    host, calls = _host({})
    result = make_action(ActionModule, {"absent": ["C:\\k"]}, host).run(task_vars={})
    assert result["changed"] is False and calls[0]["Paths"] == ["C:\\k"] and host.names() == ["files_state"]


def test_forget_transport_key_rides_on_the_same_node_sync_and_is_no_change(make_action):
    # reset: the removal happens in node_sync, also when nothing else is left to remove (a second reset; the facts
    # read at its start made the key again), and never as a change of its own
    host, calls = _host({})
    result = make_action(ActionModule, {"absent": ["C:\\k"], "forget_transport_key": True}, host).run(task_vars={})
    assert host.names() == ["files_state", "node_sync"] and calls[1]["ForgetTransportKey"] is True
    assert result["changed"] is False and calls[1]["Remove"] == [] and calls[1]["Prune"] == []


def test_forget_transport_key_with_files_to_remove_is_one_node_sync(make_action):
    host, calls = _host({"C:\\k": "dir", "C:\\etc": "dir"})
    args = {"absent": ["C:\\k"], "prune": ["C:\\etc"], "forget_transport_key": True}
    result = make_action(ActionModule, args, host).run(task_vars={})
    assert result["changed"] and host.names() == ["files_state", "node_sync"]
    assert calls[1]["Remove"] == ["C:\\k"] and calls[1]["ForgetTransportKey"] is True


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
