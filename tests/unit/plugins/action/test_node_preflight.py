"""The node_preflight action plugin: validation on the controller only, every failure of a host at once."""

from unittest.mock import MagicMock

import pytest
from ansible.errors import AnsibleActionFail

from ansible_collections.kubewin.nodes.plugins.action.node_preflight import ActionModule as PreflightAction
from ansible_collections.kubewin.nodes.plugins.plugin_utils import _downloads

GOOD = dict(
    node_name="win-worker-1",
    hostname="WIN-WORKER-1",
    windows_build="10.0.20348.2113",
    runtime=dict(service_exists=True, service_status="Running", pipe_exists=True, version="1.7.13"),
    kube_pods_subnet="10.244.0.0/16",
    kube_service_addresses="10.96.0.0/12",
    cluster_pod_subnet="10.244.0.0/16",
    cluster_service_subnet="10.96.0.0/12",
    kube_network_plugin="flannel",
    cluster_flannel=dict(backend_type="vxlan", vni=4096, port=4789, network="10.244.0.0/16"),
    kube_version="v1.31.4",
    server_version="v1.31.4",
    existing_node=dict(exists=False),
    adapters=[dict(name="Ethernet0", ipv4=["192.168.10.21/24"])],
    # what the node's CNI config is made of (node_config_files)
    settings=dict(pods_subnet="10.244.0.0/16", service_subnet="10.96.0.0/12", dns_server="10.96.0.10",
                  dns_domain="cluster.local"),
    cni_dirs=dict(conf_dir="C:\\etc\\cni\\net.d", bin_dir="C:\\opt\\cni\\bin"),
)


class NoRemote:
    """Stands in for every way an action plugin reaches the host; any use fails the test."""

    def __init__(self):
        self.calls = []

    def __call__(self, *args, **kwargs):
        self.calls.append((args, kwargs))
        pytest.fail("node_preflight made a remote call: %r %r" % (args, kwargs))


@pytest.fixture(autouse=True)
def probed(monkeypatch):
    """The URLs whose first byte preflight asked for; all are there unless a test says otherwise (no network)."""

    urls = []
    monkeypatch.setattr(_downloads, "probe_download", lambda url, *a, **k: urls.append(url))
    return urls


@pytest.fixture
def make_preflight():
    def _make(args, check_mode=False):
        task = MagicMock()
        task.args = args
        task.async_val = 0
        task.check_mode = check_mode
        task.diff = False
        connection = MagicMock()
        connection._shell.tmpdir = None
        play_context = MagicMock()
        play_context.check_mode = check_mode
        action = PreflightAction(task, connection, play_context, MagicMock(), MagicMock(), MagicMock())
        action._load_name = "kubewin.nodes.node_preflight"  # set by the plugin loader in real runs
        guard = NoRemote()
        action._execute_module = guard
        action._low_level_execute_command = guard
        action._transfer_data = guard
        action._make_tmp_path = guard
        return action, guard, connection

    return _make


def test_valid_host_passes_without_remote_calls(make_preflight):
    action, guard, connection = make_preflight(dict(GOOD))
    result = action.run(task_vars={"inventory_hostname": "win1"})
    assert not result.get("failed"), result.get("msg")
    assert result["changed"] is False and result["failures"] == [] and result["warnings"] == []
    assert guard.calls == [] and connection.exec_command.call_count == 0 and connection.put_file.call_count == 0
    assert connection._connect.call_count == 0


def test_plugin_needs_no_connection():
    assert PreflightAction._requires_connection is False and PreflightAction.TRANSFERS_FILES is False


def test_all_failures_are_aggregated_one_line_each_naming_the_host(make_preflight):
    args = dict(GOOD, node_name="Win_1", windows_build="10.0.19045", flannel_vxlan_vni=1, flannel_vxlan_port=8472,
                kube_version="v1.32.1", kube_pods_subnet="10.233.64.0/18",
                existing_node=dict(exists=True, ready=True, os="windows"),
                adapters=[dict(name="Ethernet0", ipv4=["192.168.10.21"]), dict(name="Ethernet1", ipv4=["10.0.0.4"])])
    action, guard, dummy = make_preflight(args)
    result = action.run(task_vars={"inventory_hostname": "win7"})
    assert result["failed"] and guard.calls == []
    lines = result["msg"].split("\n")
    assert lines[0] == "Preflight failed on win7:"
    assert len(lines) - 1 == len(result["failures"]) and all(line.startswith("- ") for line in lines[1:])
    variables = {f["variable"] for f in result["failures"]}
    assert variables >= {"kubewin_node_name", "kubewin_supported_windows_builds", "flannel_vxlan_vni",
                         "flannel_vxlan_port", "kube_version", "kube_pods_subnet", "kubewin_network_adapter"}
    assert all(set(f) == {"check", "variable", "message"} for f in result["failures"])


def test_warnings_are_returned_and_do_not_fail(make_preflight):
    args = dict(GOOD, flannel_backend_type="host-gw", cluster_flannel=dict(backend_type="host-gw",
                                                                           network="10.244.0.0/16"),
                runtime=dict(GOOD["runtime"], version="1.6.20"))
    action, guard, dummy = make_preflight(args)
    result = action.run(task_vars={"inventory_hostname": "win1"})
    assert not result.get("failed")
    assert len(result["warnings"]) == 2 and any("L2 network segment" in w for w in result["warnings"])
    assert {w["variable"] for w in result["warning_findings"]} == {"flannel_backend_type",
                                                                   "kubewin_container_runtime"}


def test_check_mode_runs_the_same_checks(make_preflight):
    action, guard, dummy = make_preflight(dict(GOOD, kube_version="v1.27.0"), check_mode=True)
    result = action.run(task_vars={"inventory_hostname": "win1"})
    assert result["failed"] and "kube_version v1.27.0 is too old" in result["msg"] and guard.calls == []


def test_a_typo_in_an_enumerated_variable_is_a_preflight_failure_naming_the_variable(make_preflight):
    action, guard, dummy = make_preflight(dict(GOOD, container_runtime="containerdd", deployment_mode="service"))
    result = action.run(task_vars={"inventory_hostname": "win1"})
    assert result["failed"] and result["msg"].startswith("Preflight failed on win1:")
    assert "kubewin_container_runtime is 'containerdd'; it must be one of: containerd, docker (did you mean " \
           "containerd?)" in result["msg"]
    assert "kubewin_deployment_mode is 'service'; it must be one of: services, hostprocess (did you mean " \
           "services?)" in result["msg"]


def test_invalid_options_are_refused_by_the_argspec(make_preflight):
    action, guard, dummy = make_preflight(dict(GOOD, runtime=dict(GOOD["runtime"], pipe="x")))
    with pytest.raises(AnsibleActionFail, match="pipe"):
        action.run(task_vars={"inventory_hostname": "win1"})
    action, guard, dummy = make_preflight({"hostname": "x"})
    with pytest.raises(AnsibleActionFail, match="node_name"):
        action.run(task_vars={"inventory_hostname": "win1"})
    assert guard.calls == []


def test_an_unreachable_checksum_stops_the_run_before_any_change(make_preflight, monkeypatch):

    fetched = []

    def fetch(url, proxy=None, timeout=30, no_proxy=()):
        fetched.append((url, proxy))
        raise OSError("404 Not Found")

    monkeypatch.setattr(_downloads, "fetch_checksum_file", fetch)
    url = "https://mirror.example/flannel/v9.9.9/flanneld.exe"
    action, guard, connection = make_preflight(dict(GOOD, proxy="http://proxy:3128", downloads=[
        {"url": url, "dest": "C:\\k\\flanneld.exe"},
        {"url": "https://mirror.example/k/kubelet.exe", "dest": "C:\\k\\kubelet.exe", "checksum": "a" * 128}]))
    result = action.run(task_vars={"inventory_hostname": "win1"})
    assert result["failed"] and guard.calls == []
    assert fetched == [(url + ".sha512", "http://proxy:3128")]  # the pinned one needs no fetch
    assert "kubewin_checksums" in result["msg"] and url + ".sha512 (404 Not Found)" in result["msg"]


def test_the_node_and_its_verified_downloads_are_returned_with_each_checksum_fetched_once(
        make_preflight, monkeypatch):
    """preflight is the one producer of the node (name, IP, adapter) and of the downloads' checksums: the node
    role installs what it returns, and no checksum file is read twice."""

    fetched = []
    monkeypatch.setattr(_downloads, "fetch_checksum_file",
                        lambda url, *a, **k: fetched.append(url) or ("c" * 128 + "  kubelet.exe\n"))
    url = "https://mirror.example/release/v1.31.4/bin/windows/amd64/kubelet.exe"
    action, guard, dummy = make_preflight(dict(GOOD, downloads=[
        {"url": url, "dest": "C:\\k\\kubelet.exe"},
        {"url": "https://mirror.example/nssm.zip", "extract_dir": "C:\\k\\nssm", "checksum": "sha512:" + "D" * 128}]))
    result = action.run(task_vars={"inventory_hostname": "win1"})
    assert not result.get("failed"), result.get("msg")
    assert fetched == [url + ".sha512"] and guard.calls == []
    files = result["node"].pop("config_files")
    # flanneld's command line (services mode, the default; its bytes: test_network_services_golden.py): v1.31.4's
    # kube-log-runner has no rotation
    assert result["node"].pop("flanneld_argv") == [
        "C:\\k\\kube-log-runner.exe", "-log-file=C:\\var\\log\\flanneld\\flanneld.log", "C:\\k\\flanneld.exe",
        "--kube-subnet-mgr", "--kubeconfig-file=C:\\etc\\kubernetes\\kubelet.conf",
        "--net-config-path=C:\\etc\\kube-flannel\\net-conf.json", "--iface=192.168.10.21", "--ip-masq=false"]
    assert result["node"] == {"name": "win-worker-1", "ip": "192.168.10.21", "adapter": "Ethernet0",
                              "subnet": "192.168.10.0/24", "firewall_remoteip": "any", "hostprocess_images": None,
                              "sandbox_image": None, "images_to_pull": []}
    # what the node role writes (their content: test_node_config_files.py)
    assert [f["path"] for f in files] == ["C:\\etc\\cni\\net.d\\10-flannel.conf",
                                          "C:\\var\\lib\\kubelet\\config.d\\50-kubewin-node-log-query.conf"]
    assert result["downloads"] == [
        {"url": url, "dest": "C:\\k\\kubelet.exe", "sha512": "c" * 128},
        {"url": "https://mirror.example/nssm.zip", "extract_dir": "C:\\k\\nssm", "sha512": "d" * 128}]


def test_a_malformed_version_is_named_and_no_checksum_is_fetched_for_it(make_preflight, monkeypatch):
    """A bad version used to surface as 'could not fetch the checksum of .../1.36/...'."""

    fetched = []
    monkeypatch.setattr(_downloads, "fetch_checksum_file", lambda url, *a, **k: fetched.append(url) or "")
    url = "https://dl.k8s.io/release/1.36/bin/windows/amd64/kubelet.exe"
    action, guard, dummy = make_preflight(dict(GOOD, kube_version="1.36", downloads=[
        {"url": url, "dest": "C:\\k\\kubelet.exe"}]))
    result = action.run(task_vars={"inventory_hostname": "win1"})
    assert result["failed"] and fetched == []
    assert "kube_version '1.36' is not a Kubernetes release version" in result["msg"]
    assert "checksum" not in result["msg"]


@pytest.mark.parametrize("kube_version", ["1.31.4", "v1.31.4", None])
def test_both_version_spellings_and_none_pass_against_the_api_server(make_preflight, kube_version):
    args = dict(GOOD, kube_version=kube_version)
    if kube_version is None:
        del args["kube_version"]
    action, guard, dummy = make_preflight(args)
    result = action.run(task_vars={"inventory_hostname": "win1"})
    assert not result.get("failed"), result.get("msg")


def test_the_bootstrap_token_is_never_in_the_result(make_preflight):
    secret = "abcdef.0123456789ABCDEF"
    action, guard, dummy = make_preflight(dict(GOOD, kubeadm_token=secret))
    result = action.run(task_vars={"inventory_hostname": "win1"})
    assert result["failed"] and "kubeadm_token" in result["msg"]
    assert "0123456789" not in repr(result) and "abcdef" not in repr(result)


def test_plain_http_is_refused_unless_allowed(make_preflight, monkeypatch):

    monkeypatch.setattr(_downloads, "fetch_checksum_file", lambda url, *a, **k: "a" * 128)
    base = "http://mirror.corp/release"
    args = dict(GOOD, download_bases={"kubewin_kubernetes_download_url": base},
                downloads=[{"url": base + "/v1.31.4/bin/windows/amd64/kubelet.exe", "dest": "C:\\k\\kubelet.exe"}])
    action, guard, dummy = make_preflight(dict(args))
    result = action.run(task_vars={"inventory_hostname": "win1"})
    assert result["failed"] and "kubewin_kubernetes_download_url http://mirror.corp/release is plain http" \
        in result["msg"] and "kubewin_allow_insecure_downloads: true" in result["msg"]
    action, guard, dummy = make_preflight(dict(args, allow_insecure_downloads=True))
    result = action.run(task_vars={"inventory_hostname": "win1"})
    assert not result.get("failed"), result.get("msg")


def test_a_release_that_does_not_exist_is_named_by_its_version_variable(make_preflight, monkeypatch):

    def fetch(url, *a, **k):
        raise OSError("HTTP Error 404: Not Found")

    monkeypatch.setattr(_downloads, "fetch_checksum_file", fetch)
    url = "https://dl.k8s.io/release/v1.31.99/bin/windows/amd64/kubelet.exe"
    action, guard, dummy = make_preflight(dict(GOOD, kube_version="1.31.99", downloads=[
        {"url": url, "dest": "C:\\k\\kubelet.exe"}]))
    result = action.run(task_vars={"inventory_hostname": "win1"})
    failure = [f for f in result["failures"] if f["check"] == "downloads"][0]
    assert failure["variable"] == "kube_version"
    assert "the URLs with /v1.31.99/ hold release v1.31.99 (from kube_version): check that v1.31.99 is a " \
           "published release" in failure["message"]


def test_an_air_gapped_mirror_gets_one_message_listing_every_url_it_lacks(make_preflight, monkeypatch, probed):
    """A mirror made from kubespray's offline list: no Windows files, no .sha512. Every missing URL is
    listed in one finding (not the first only), the files and the checksum files, and nothing a pin
    makes unnecessary."""
    import urllib.error

    base = "https://files.corp/dl.k8s.io/release/v1.31.4/bin/windows/amd64/"
    present = {base + "kubelet.exe", base + "kubelet.exe.sha512"}

    def missing(url):
        return urllib.error.HTTPError(url, 404, "Not Found", {}, None)

    def fetch(url, *a, **k):
        if url not in present:
            raise missing(url)
        return "a" * 128

    def probe(url, *a, **k):
        probed.append(url)
        if url not in present:
            raise missing(url)

    monkeypatch.setattr(_downloads, "fetch_checksum_file", fetch)
    monkeypatch.setattr(_downloads, "probe_download", probe)
    flanneld = "https://files.corp/github.com/flannel-io/flannel/releases/download/v0.26.7/flanneld.exe"
    names = ("kubelet.exe", "kubeadm.exe", "kube-proxy.exe")
    downloads = [{"url": base + name, "dest": "C:\\k\\" + name} for name in names]
    downloads.append({"url": flanneld, "dest": "C:\\k\\flanneld.exe", "checksum": "b" * 128})
    action, guard, dummy = make_preflight(dict(GOOD, downloads=downloads))
    result = action.run(task_vars={"inventory_hostname": "win1"})
    failures = [f for f in result["failures"] if f["check"] == "downloads"]
    assert result["failed"] and guard.calls == [] and len(failures) == 1
    listed = [line.strip().split(" (")[0] for line in failures[0]["message"].split("\n")[1:]
              if line.startswith("    ")]
    assert listed == [base + "kubeadm.exe.sha512", base + "kubeadm.exe", base + "kube-proxy.exe.sha512",
                      base + "kube-proxy.exe", flanneld]  # pinned: only the file itself
    assert failures[0]["message"].startswith("5 download URL(s) the Windows nodes need cannot be fetched")
    assert "(HTTP 404 Not Found)" in failures[0]["message"] and "kubewin_checksums" in failures[0]["message"]
    assert result["msg"].count("cannot be fetched") == 1


def test_a_mirror_with_every_file_passes_and_each_file_is_asked_for_once(make_preflight, monkeypatch, probed):

    fetched = []
    monkeypatch.setattr(_downloads, "fetch_checksum_file", lambda url, *a, **k: fetched.append(url) or "c" * 128)
    urls = ["https://files.corp/a/kubelet.exe", "https://files.corp/b/nssm-2.24.zip"]
    action, guard, dummy = make_preflight(dict(GOOD, downloads=[
        {"url": urls[0], "dest": "C:\\k\\kubelet.exe"},
        {"url": urls[1], "extract_dir": "C:\\k\\nssm", "checksum": "d" * 128}]))
    result = action.run(task_vars={"inventory_hostname": "win1"})
    assert not result.get("failed"), result.get("msg")
    assert fetched == [urls[0] + ".sha512"] and probed == urls


def test_a_pin_applies_to_the_download_of_its_url_only(make_preflight, monkeypatch):
    """kubewin_checksums: preflight applies each pin to its URL, and returns the pinned SHA-512 for the node."""
    fetched = []
    monkeypatch.setattr(_downloads, "fetch_checksum_file",
                        lambda url, *a, **k: fetched.append(url) or ("c" * 128 + "  kubelet.exe\n"))
    new = "https://dl.k8s.io/release/v1.31.4/bin/windows/amd64/kubelet.exe"
    old = "https://dl.k8s.io/release/v1.31.3/bin/windows/amd64/kubeadm.exe"
    action, guard, dummy = make_preflight(dict(GOOD, checksums={new: "f" * 128}, downloads=[
        {"url": new, "dest": "C:\\k\\kubelet.exe"}, {"url": old, "dest": "C:\\k\\kubeadm.exe"}]))
    result = action.run(task_vars={"inventory_hostname": "win1"})
    assert not result.get("failed"), result.get("msg")
    assert fetched == [old + ".sha512"]  # the pinned one needs no checksum file
    assert [d["sha512"] for d in result["downloads"]] == ["f" * 128, "c" * 128]


def test_this_hosts_inventory_values_that_differ_from_the_clusters_fail_by_name(make_preflight):
    from ansible_collections.kubewin.nodes.plugins.plugin_utils import _cluster_settings as cs

    cluster = {"kubeadm_config": {"found": True, "control_plane_endpoint": "192.0.2.10:6443",
                                  "pod_subnet": "10.233.64.0/18", "service_subnet": "10.233.0.0/18"}}
    settings = cs.resolve(cluster, "cp1", {}, "192.0.2.10")
    action, guard, dummy = make_preflight(dict(GOOD, settings=settings,
                                               host_settings={"kube_pods_subnet": "10.244.0.0/16"}))
    result = action.run(task_vars={"inventory_hostname": "win1"})
    assert result["failed"] and guard.calls == []
    conflict = [f for f in result["failures"] if f["variable"] == "kube_pods_subnet" and "win1" in f["message"]]
    assert conflict and "10.244.0.0/16" in conflict[0]["message"] and "10.233.64.0/18" in conflict[0]["message"]


def test_the_runtimes_cni_plugins_join_the_downloads_where_it_looks_for_them(make_preflight, monkeypatch):
    monkeypatch.setattr(_downloads, "fetch_checksum_file", lambda url, *a, **k: "c" * 128)
    dirs = {"bin_dir": "C:\\Program Files\\containerd\\cni\\bin",
            "conf_dir": "C:\\Program Files\\containerd\\cni\\conf"}
    bases = {"kubewin_cni_download_url": "https://files.corp/cni", "kubewin_flannel_cni_download_url":
             "https://files.corp/flannel-cni", "kubewin_sdn_cni_download_url": "https://files.corp/sdn"}
    versions = {"cni": "v1.6.2", "flannel_cni": "v1.7.1-flannel1", "sdn_cni": "v0.3.1"}
    action, guard, dummy = make_preflight(dict(GOOD, cni_dirs=dirs, cni_versions=versions, download_bases=bases))
    result = action.run(task_vars={"inventory_hostname": "win1"})
    assert not result.get("failed"), result.get("msg")
    assert result["downloads"] and {d["extract_dir"] for d in result["downloads"]} == {dirs["bin_dir"]}
    assert all(d["url"].startswith("https://files.corp/") and d["sha512"] == "c" * 128 for d in result["downloads"])


def test_a_malformed_pin_is_named_by_its_url(make_preflight, monkeypatch):

    monkeypatch.setattr(_downloads, "fetch_checksum_file", lambda url, *a, **k: "c" * 128)
    url = "https://files.corp/b/nssm-2.24.zip"
    action, guard, dummy = make_preflight(dict(GOOD, downloads=[
        {"url": url, "extract_dir": "C:\\k\\nssm", "checksum": "abc"}]))
    result = action.run(task_vars={"inventory_hostname": "win1"})
    assert result["failed"] and "the checksum pinned for %s is not a SHA-512 checksum" % url in result["msg"]


def test_a_download_base_with_a_password_is_refused_and_never_shown(make_preflight, monkeypatch):
    """kubespray's offline docs put user:password into files_repo; the URLs reach --diff output, so not here."""

    fetched = []
    monkeypatch.setattr(_downloads, "fetch_checksum_file", lambda url, *a, **k: fetched.append(url) or "a" * 128)
    base = "https://download:s3cret@files.corp/repo/dl.k8s.io/release"
    action, guard, dummy = make_preflight(dict(GOOD, download_bases={"kubewin_kubernetes_download_url": base},
                                               downloads=[{"url": base + "/v1.31.4/bin/windows/amd64/kubelet.exe",
                                                           "dest": "C:\\k\\kubelet.exe"}]))
    result = action.run(task_vars={"inventory_hostname": "win1"})
    assert result["failed"] and fetched == []
    assert "kubewin_kubernetes_download_url https://download:<hidden>@files.corp/repo/dl.k8s.io/release carries a " \
           "password" in result["msg"]
    assert "s3cret" not in repr(result)
