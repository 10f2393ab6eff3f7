"""Ready is earned (issue 11 items 3 and 6): the simulated kubelet posts the Ready condition the real kubelet
would, from the host's runtime and CNI state (winsim_kubelet_status.py), and containerd 2.x hosts (config
version 3, bin_dirs) join as well as a containerd 1.7 host (version 2, bin_dir), a containerd whose config.toml
moved the CNI directories and Docker with cri-dockerd (one run, one host each)."""

import os
import time
import tomllib

import mirror
import pytest
import scenario
from ansible_collections.ansible.windows.plugins.module_utils import (
    winsim_containerd,
    winsim_crictl,
    winsim_docker,
    winsim_kubelet_status,
    winsim_tasks,
)
from mirror import layout
from winsim import core

CNI_NOT_INITIALIZED = ("container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady "
                       "message:Network plugin returns error: cni plugin not initialized")
CONF_DIR = "C:\\Program Files\\containerd\\cni\\conf"


def ready_condition(core_api, name):
    return next((c for c in core_api.read_node(name).status.conditions or [] if c.type == "Ready"), None)


def operation(sc, host):
    """What every remote operation on a simulated host ends with: the kubelet posts its status if it changed."""
    with core.Host(sc.root, host).open() as h:
        winsim_kubelet_status.sync(h)


def write_file(sc, host, win_path, text):
    local = core.Host(sc.root, host).local_path(win_path)
    os.makedirs(os.path.dirname(local), exist_ok=True)
    with open(local, "w") as f:
        f.write(text)


def test_a_cni_config_containerd_cannot_load_makes_the_node_not_ready_and_preflight_names_it(tmp_path, api):
    """containerd loads only the first file of its conf dir (go-cni, max_conf_num 1): a leftover that is not a
    network config sorts before 10-flannel.conf, so no network loads and the kubelet reports NotReady; preflight
    names the file before anything changes (realnode.md F4), and once it is gone the node is Ready again."""
    core_api, _ = api
    sc = scenario.Scenario(tmp_path, nodes=1, kubewin_node_name="nr-{{ inventory_hostname }}",
                           kubewin_ready_timeout=20)
    rc, doc, text = sc.run("scale_up.yml")
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    write_file(sc, "win-1", CONF_DIR + "\\00-leftover.conf", "")
    operation(sc, "win-1")
    ready = ready_condition(core_api, "nr-win-1")
    assert (ready.status, ready.reason, ready.message) == ("False", "KubeletNotReady", CNI_NOT_INITIALIZED)
    rc, doc, text = sc.run("scale_up.yml")
    messages = "\n".join(scenario.failures(doc))
    assert rc != 0 and "00-leftover.conf sorts before 10-flannel.conf" in messages, messages

    # the leftover goes: the next operation on the host reports Ready, and a re-run passes
    os.remove(core.Host(sc.root, "win-1").local_path(CONF_DIR + "\\00-leftover.conf"))
    rc, doc, text = sc.run("scale_up.yml")
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    ready = ready_condition(core_api, "nr-win-1")
    assert (ready.status, ready.reason, ready.message) == ("True", "KubeletReady", "kubelet is posting ready status")

    # A config of cniVersion >= 1.1.0 runs each plugin's STATUS (libcni GetStatusNetworkList), which needs the
    # plugin binary; the collection's 0.3.0 config does not, so a missing binary fails pods, not readiness.
    host = core.Host(sc.root, "win-1")
    plugin = host.local_path("C:\\Program Files\\containerd\\cni\\bin\\flannel-amd64.exe")
    os.rename(plugin, plugin + ".gone")
    operation(sc, "win-1")
    assert ready_condition(core_api, "nr-win-1").status == "True"  # cniVersion 0.3.0: no STATUS
    with host.open(save=False) as h:
        assert any("flannel-amd64" in p for p in winsim_containerd.cni_problems(h))  # but every pod ADD fails
    write_file(sc, "win-1", CONF_DIR + "\\05-status.conflist",
               '{"cniVersion": "1.1.0", "name": "flannel.4096", "plugins": [{"type": "flannel-amd64"}]}')
    operation(sc, "win-1")
    ready = ready_condition(core_api, "nr-win-1")
    assert ready.status == "False" and ready.message.startswith(
        "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network "
        'plugin returns error: failed to find plugin "flannel-amd64" in path ['), ready.message
    os.rename(plugin + ".gone", plugin)
    operation(sc, "win-1")
    assert ready_condition(core_api, "nr-win-1").status == "True"

    # the runtime stops: "container runtime is down" (pkg/kubelet/runtime.go)
    with core.Host(sc.root, "win-1").open() as h:
        h.state["services"]["containerd"]["status"] = "Stopped"
    operation(sc, "win-1")
    ready = ready_condition(core_api, "nr-win-1")
    assert (ready.status, ready.message) == ("False", "container runtime is down")
    core_api.delete_node("nr-win-1")


# The default profile (containerd 2.3.5 with a version 3 config.toml) is test_scale_up.py's. One run joins a host of
# each of the other containerd set-ups and a Docker host (one profile per host; issue 22 T6: four 1-node runs
# before); each test reads its own host.
CONTAINERD = [
    ("ws2022-containerd-2.1", "2.1.4", 3),  # no config.toml: containerd 2.1's built-in defaults
    ("ws2022-containerd-1.7", "1.7.27", 2),  # the last 1.7: version 2, bin_dir
]
# containerd installed the sig-windows-tools way: config.toml points at c:/etc/cni/net.d and c:/opt/cni/bin
MOVED_CNI_PROFILE = "ws2022-containerd-etc-cni"
DOCKER_PROFILE = "ws2022-docker-cri"  # Docker with cri-dockerd: kubewin_container_runtime docker in its host_vars
# Issue 23: a bare Windows Server (no Containers feature, no containerd): kubewin_containerd_install auto installs it
BARE_PROFILE = "ws2022-no-containers"
# Issue 23 point 4: pulled on the bare host before it joins (lab/winsim winsim_crictl's sources); the re-run in
# test_docker_with_cri_dockerd_gets_the_host_nat_network pulls nothing (changed nothing on any host)
PREPULL = ["mcr.microsoft.com/windows/nanoserver:ltsc2022", "registry.k8s.io/pause:3.10.2"]


class RuntimeRun(object):
    """scale_up.yml once over one host per runtime set-up: the hosts before, containerd's config dump."""

    def __init__(self, root):
        profiles = [c[0] for c in CONTAINERD] + [MOVED_CNI_PROFILE, DOCKER_PROFILE, BARE_PROFILE]
        mirror.ensure(layout.containerd_path(mirror.versions()["containerd"][0]))
        self.host = {p: "win-%d" % (i + 1) for i, p in enumerate(profiles)}
        self.sc = scenario.Scenario(root, nodes=len(profiles), profiles={h: p for p, h in self.host.items()},
                                    host_vars={self.host[DOCKER_PROFILE]: {"kubewin_container_runtime": "docker"},
                                               self.host[BARE_PROFILE]: {"kubewin_prepull_images": PREPULL}},
                                    kubewin_node_name="ctd-{{ inventory_hostname }}")
        self.before = {h: self.sc.dump(h) for h in self.sc.hosts}
        self.config_dump = {}
        for profile, version, _ in CONTAINERD:
            with core.Host(self.sc.root, self.host[profile]).open(save=False) as h:
                self.config_dump[profile] = winsim_containerd.command(h, version, ["config", "dump"])[:2]
        self.rc, self.doc, self.text = self.sc.run("scale_up.yml")
        self.reset_done = False

    def node(self, profile):
        return "ctd-" + self.host[profile]


@pytest.fixture(scope="module")
def runtime_run(tmp_path_factory, api):
    run = RuntimeRun(tmp_path_factory.mktemp("runtimes"))
    yield run
    if not run.reset_done:  # a selection without the reset test: the nodes go, as the 1-node tests did
        for host in run.sc.hosts:
            try:
                api[0].delete_node("ctd-" + host)
            except Exception:  # never joined
                pass


@pytest.mark.parametrize("profile, version, config_version", CONTAINERD)
def test_containerd_hosts_join_ready(runtime_run, api, profile, version, config_version):
    core_api, _ = api
    r, name = runtime_run, runtime_run.node(profile)
    rc, dump = r.config_dump[profile]
    assert rc == 0 and "version = %d" % config_version in dump
    assert r.rc == 0, "\n".join(scenario.failures(r.doc)) or r.text[-3000:]
    node = core_api.read_node(name)
    assert node.status.node_info.container_runtime_version == "containerd://" + version
    assert ready_condition(core_api, name).status == "True"
    with core.Host(r.sc.root, r.host[profile]).open(save=False) as h:
        assert winsim_containerd.cni_problems(h) == []
        assert os.path.isfile(h.local_path(CONF_DIR + "\\10-flannel.conf"))


def test_docker_with_cri_dockerd_gets_the_host_nat_network(runtime_run, api):
    """Docker with cri-dockerd beside the containerd hosts (from test_scenarios.py); the re-run changes nothing on
    any host of the run."""
    core_api, _ = api
    r, host = runtime_run, runtime_run.host[DOCKER_PROFILE]
    assert r.rc == 0, "\n".join(scenario.failures(r.doc)) or r.text[-3000:]
    assert ready_condition(core_api, r.node(DOCKER_PROFILE)).status == "True"
    dump = r.sc.dump(host)
    assert {n["Name"]: n["Type"] for n in dump["hns"]["networks"]}["host"] == "NAT"
    # review-s6 D1: made through Docker, so Docker has it in its own store, where a hostNetwork pod's sandbox
    # (NetworkMode host, cri-dockerd) is looked up
    assert dump["docker"]["networks"] == [{"Name": "host", "Driver": "nat"}]
    assert dump["services"]["kubelet"]["dependencies"] == ["cri-dockerd"]
    rc, doc, text = r.sc.run("scale_up.yml")
    assert rc == 0 and scenario.changed_tasks(doc) == {}, scenario.changed_tasks(doc)
    # Issue 21 point 1: a reboot drops HNS's NAT networks (sig-windows-tools#52, #128). dockerd makes "host" again at
    # its boot start, since Docker has it in its store (review-s6 D1); the network role's boot task (kubewin-boot,
    # PT1M after boot) starts kube-proxy.
    def hns_and_boot():
        with core.Host(r.sc.root, host).open(save=False) as h:
            log = h.local_path("C:\\var\\log\\kubelet\\kubewin-boot.log")
            text = open(log).read() if os.path.exists(log) else ""
            return ({n["Name"]: n["ID"] for n in h.state["hns"]["networks"]}, h.state.get("boot_log") or [], text,
                    h.state["services"]["kube-proxy"]["status"], winsim_docker.sandbox_error(h, host_network=True),
                    {n["Name"]: n["HnsId"] for n in winsim_docker.networks(h.state)})
    before, _, _, _, sandbox, docker = hns_and_boot()
    assert docker == {"host": before["host"]} and sandbox is None
    gone, failed = core.reboot(r.sc.root, host)
    assert "host" in gone and failed == {}
    after, boot_log, text, kube_proxy, sandbox, docker = hns_and_boot()
    assert "host" in after and after["host"] != before["host"], after
    # dockerd's start also adopted the network role's External, which HNS kept (moby initNetworkController)
    assert docker["host"] == after["host"] and set(docker) == {"host", "External"} and sandbox is None
    task = [e for e in boot_log if "task" in e]
    assert [(e["task"], e["result"]) for e in task] == [("\\kubewin-boot", 0)], task
    assert task[0]["at"] - max(e["at"] for e in boot_log if "service" in e) >= 60
    assert text.splitlines()[-2].endswith("kube-proxy and the services it depends on are started")
    assert text.splitlines()[-1].endswith("Docker's network host is there")  # checked after the start (review-s7 D3)
    assert kube_proxy == "Running"
    assert ready_condition(core_api, r.node(DOCKER_PROFILE)).status == "True"


def test_a_bare_host_gets_the_containers_feature_containerd_and_crictl_and_joins_ready(runtime_run, api):
    """Issue 23: the Containers feature (and the restart it asks for), containerd from its release archive (SHA-256
    checked), config.toml from `containerd.exe config default`, the service registered and started, crictl
    configured, in the one scale-up; the re-run of test_docker_with_cri_dockerd_gets_the_host_nat_network changes
    nothing on any host of the run, this one included."""
    core_api, _ = api
    r, host = runtime_run, runtime_run.host[BARE_PROFILE]
    assert r.rc == 0, "\n".join(scenario.failures(r.doc)) or r.text[-3000:]
    assert ready_condition(core_api, r.node(BARE_PROFILE)).status == "True"
    node = core_api.read_node(r.node(BARE_PROFILE))
    assert node.status.node_info.container_runtime_version == "containerd://" + mirror.versions()["containerd"][0]
    dump = r.sc.dump(host)
    assert dump["features"] == {"Containers": "Installed"} and dump["services"]["vmcompute"]["status"] == "Running"
    ctrd = dump["services"]["containerd"]
    assert ctrd["status"] == "Running"
    # its log where the node log query finds query=containerd (review-s8 W3), rotated by the hourly task
    assert ctrd["image_path"] == ('"C:\\Program Files\\containerd\\bin\\containerd.exe" --run-service --log-file '
                                  'C:\\var\\log\\containerd\\containerd.log')
    assert dump["env"]["CRI_CONFIG_FILE"] == "C:\\Program Files\\containerd\\crictl\\crictl.yaml"
    for path in ("bin\\containerd.exe", "crictl\\crictl.exe", "crictl\\crictl.yaml", "config.toml"):
        assert dump["files"]["C:\\Program Files\\containerd\\" + path].startswith("sha256:"), path
    with core.Host(r.sc.root, host).open(save=False) as h:
        assert winsim_containerd.cni_problems(h) == [] and h.state["reboots"] == 1
        with open(h.local_path("C:\\var\\log\\containerd\\containerd.log")) as f:
            assert 'msg="starting containerd"' in f.read()
        task = winsim_tasks.tasks(h.state)["\\kubewin-containerd-log"]
        with open(h.local_path("C:\\Program Files\\containerd\\config.toml"), "rb") as f:
            config = tomllib.load(f)
    assert task["triggers"] == [{"type": "registration", "repetition": {"interval": "PT1H"}},
                                {"type": "boot", "delay": "PT1M", "repetition": {"interval": "PT1H"}}]
    assert task["actions"][0]["arguments"].endswith('-File "C:\\Program Files\\containerd\\kubewin-log-rotate.ps1"')
    # issue 23 point 3: the pause for build 20348 from the collection's table, by digest (was the tag
    # mcr.microsoft.com/oss/kubernetes/pause:3.9 for every build)
    assert config["plugins"]["io.containerd.cri.v1.images"]["pinned_images"]["sandbox"] == \
        "registry.k8s.io/pause:3.10.2@" + winsim_crictl.PAUSE_3_10_2_DIGEST
    # issue 23 point 4: each image pulled once, before the node role's join, one task line each
    assert dump["images"] == sorted(PREPULL)
    pulls = [t["hosts"][host] for play in r.doc["plays"] for t in play["tasks"]
             if t["task"]["name"].endswith("Pull each image (kubewin_prepull_images)") and host in t["hosts"]]
    assert [(i["item"], i["changed"]) for i in pulls[0]["results"]] == [(p, True) for p in PREPULL], pulls


def test_cni_follows_a_containerd_config_that_moved_the_directories(runtime_run):
    """Last of the runtime_run tests: it resets the run's hosts (the Docker host's reset is checked here too)."""
    r, host = runtime_run, runtime_run.host[MOVED_CNI_PROFILE]
    assert r.rc == 0, "\n".join(scenario.failures(r.doc)) or r.text[-3000:]
    with core.Host(r.sc.root, host).open(save=False) as h:
        assert winsim_containerd.cni_problems(h) == []
    # keep the tokens the other tests' nodes joined with (reset deletes the collection's tokens by default)
    rc, doc, text = r.sc.run("reset.yml", "-e", "skip_confirmation=true", "-e", "kubewin_reset_delete_tokens=false")
    r.reset_done = True
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    assert r.sc.dump(host) == r.before[host]
    docker = r.host[DOCKER_PROFILE]
    after = r.sc.dump(docker)
    # reset removed host through Docker. External, which dockerd adopted at the reboot above (moby
    # daemon/daemon_windows.go initNetworkController, HNSOwned), left HNS with reset; dockerd drops it from its store at
    # its next start (a non-nat network HNS lacks), which the lab models, so that stale entry is all that is left.
    assert [n["Name"] for n in after["docker"]["networks"]] == ["External"], after["docker"]
    after["docker"] = r.before[docker]["docker"]
    assert after == r.before[docker], "reset left something behind on the Docker host %s" % docker


def test_hostprocess_pods_of_an_unpublished_image_stay_in_image_pull_backoff(api):
    """kwok runs pods on simulated nodes; a HostProcess pod's image must be in controlplane/published-images.txt."""
    core_api, _ = api
    published = scenario.published_image("registry.lab.invalid/kubewin/flannel-hostprocess:v0.26.7")
    node = "ipb-win-1"
    body = {"metadata": {"name": node, "annotations": {"kwok.x-k8s.io/node": "fake"},
                         "labels": {"kubernetes.io/os": "windows"}}}
    core_api.create_node(body)
    pods = {"ipb-published": published, "ipb-missing": "registry.lab.invalid/kubewin/flannel-hostprocess:v0.0.0"}
    try:
        for name, image in pods.items():
            core_api.create_namespaced_pod("default", {"metadata": {"name": name}, "spec": {
                "nodeName": node, "hostNetwork": True, "tolerations": [{"operator": "Exists"}],
                "securityContext": {"windowsOptions": {"hostProcess": True, "runAsUserName": "NT AUTHORITY\\system"}},
                "containers": [{"name": "c", "image": image}]}})
        deadline = time.time() + 60
        while True:
            got = {n: core_api.read_namespaced_pod(n, "default").status for n in pods}
            waiting = [(s.container_statuses or [None])[0] for s in got.values()]
            if got["ipb-published"].phase == "Running" and waiting[1] is not None and waiting[1].state.waiting:
                break
            assert time.time() < deadline, got
            time.sleep(1)
        state = got["ipb-missing"].container_statuses[0].state.waiting
        assert got["ipb-missing"].phase == "Pending" and state.reason == "ImagePullBackOff"
        assert state.message == 'Back-off pulling image "%s"' % pods["ipb-missing"]
    finally:
        for name in pods:
            core_api.delete_namespaced_pod(name, "default", grace_period_seconds=0)
        core_api.delete_node(node)
