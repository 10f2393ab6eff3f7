"""The playbooks' tags (docs/tags.md) against the lab: each tag runs what it claims and nothing of the other roles,
the plays tagged always still make every fact the tagged ones read, and an operator's own play that includes only
the node role joins a node with the kubeconfig the role sets itself."""

import os
import re
import subprocess
import sys

import pytest
import scenario
import yaml
from kubernetes.client.exceptions import ApiException

ROLES = os.path.join(scenario.REPO, "roles")
PLAYBOOKS = os.path.join(scenario.REPO, "playbooks")
VALIDATION = "Validating arguments against arg spec"
AGENT = ("default", "tags-agent")  # a Linux DaemonSet without an OS selector: control_plane's prepare pins it
KUBELET_RULE = "kubewin-kubelet-10250-tcp"
VXLAN_RULE = "kubewin-flannel-vxlan-4789-udp"
EXPORTER_RULE = "kubewin-windows-exporter-tcp"


def task_names(role, tasks_file="main"):
    """'kubewin.nodes.<role> : <name>' of every task of a role's task file, with its blocks' tasks and the files
    it imports statically, as the JSON callback names them."""
    def walk(tasks, directory):
        for task in tasks or []:
            if "ansible.builtin.import_tasks" in task:
                with open(os.path.join(directory, task["ansible.builtin.import_tasks"])) as f:
                    yield from walk(yaml.safe_load(f), directory)
            elif "block" in task:
                for section in ("block", "rescue", "always"):
                    yield from walk(task.get(section), directory)
            elif "ansible.builtin.include_role" in task:
                yield None, task["name"]  # the JSON callback names an include_role task without its role
            else:
                yield role, task["name"]

    directory = os.path.join(ROLES, role, "tasks")
    with open(os.path.join(directory, tasks_file + ".yml")) as f:
        return {"kubewin.nodes.%s : %s" % (r, name) if r else name for r, name in walk(yaml.safe_load(f), directory)}


DISCOVER = task_names("control_plane", "discover") | {
    "Put this host in k8s_cluster as kubespray does at run time, so group_vars/k8s_cluster apply to it"}
PREFLIGHT = task_names("preflight")
PREPARE = task_names("control_plane", "prepare")
HOSTPROCESS = task_names("control_plane", "hostprocess")
FINALIZE = task_names("control_plane", "finalize")
RUNTIME = task_names("runtime")
NODE = task_names("node")
NETWORK = task_names("network")
METRICS = task_names("metrics")
UPGRADE = task_names("upgrade")
RESET = task_names("reset")
RESET_DRAIN = task_names("control_plane", "reset_drain")
RESET_FINISH = task_names("control_plane", "reset_finish")
CONFIRM = {"Ask before removing nodes (skip with -e skip_confirmation=true, as in kubespray's remove-node)",
           "Stop unless confirmed",
           "This host's node, for the control plane (the preflight role sets it in the other playbooks)"}


def selected(doc):
    """Names of the tasks the run selected (ran or skipped by a condition), without the argument checks."""
    return {t["task"]["name"] for p in doc["plays"] for t in p["tasks"] if VALIDATION not in t["task"]["name"]}


def ran(doc):
    """Names of the tasks that ran on at least one host (not skipped), without the argument checks."""
    return {t["task"]["name"] for p in doc["plays"] for t in p["tasks"]
            if VALIDATION not in t["task"]["name"] and any(not r.get("skipped") for r in t["hosts"].values())}


def changed_names(doc):
    return {name for names in scenario.changed_tasks(doc).values() for name in names}


def run_ok(sc, *args):
    rc, doc, text = sc.run(*args)
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
    return doc


def normalized(dump):
    """A host's dump with its firewall rules by name: a rule put back is appended, its place in the list moves."""
    dump = dict(dump, firewall=dict(dump["firewall"]))
    dump["firewall"]["rules"] = sorted(dump["firewall"].get("rules", []), key=lambda r: r.get("Name") or "")
    return dump


def firewall_rule(sc, host, name):
    return [r for r in sc.dump(host)["firewall"].get("rules", []) if r.get("Name") == name]


def edit_host(sc, host, fn):
    from winsim import core
    with core.Host(sc.root, host).open() as h:
        fn(h)


def agent_selector(apps):
    return apps.read_namespaced_daemon_set(AGENT[1], AGENT[0]).spec.template.spec.node_selector


def unpin_agent(apps):
    apps.patch_namespaced_daemon_set(AGENT[1], AGENT[0], [
        {"op": "remove", "path": "/spec/template/spec/nodeSelector"}])
    assert not agent_selector(apps)


def upgrade_from():
    with open(os.path.join(scenario.LAB, "controlplane", "UPGRADE_FROM")) as f:
        return f.read().strip()


def kubelet_version(core, name):
    return core.read_node(name).status.node_info.kubelet_version


@pytest.fixture(scope="module")
def agent(api):
    _, apps = api
    body = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": AGENT[1], "namespace": AGENT[0]},
            "spec": {"selector": {"matchLabels": {"app": AGENT[1]}},
                     "template": {"metadata": {"labels": {"app": AGENT[1]}},
                                  "spec": {"containers": [{"name": "a", "image": "registry.k8s.io/pause:3.10"}]}}}}
    try:
        apps.delete_namespaced_daemon_set(AGENT[1], AGENT[0])
    except ApiException as e:
        if e.status != 404:
            raise
    apps.create_namespaced_daemon_set(AGENT[0], body)
    yield "%s/%s" % AGENT
    apps.delete_namespaced_daemon_set(AGENT[1], AGENT[0])


@pytest.fixture(scope="module")
def joined(tmp_path_factory, api, agent):
    """One node scaled up with the whole playbook, on the upgrade-from version (so that upgrade.yml --tags node
    has something to do). Reset, step by step, by the last test that uses it."""
    variables = {"kubewin_node_name": "tag-{{ inventory_hostname }}", "kube_version": upgrade_from(),
                 "kubewin_pin_daemonsets": ["kube-system/kube-proxy", "kube-flannel/kube-flannel-ds", agent]}
    sc = scenario.Scenario(tmp_path_factory.mktemp("tags"), nodes=1, **variables)
    sc.variables = variables
    sc.before_scale_up = sc.dump("win-1")
    run_ok(sc, "scale_up.yml")
    yield sc
    # whatever the tests left: the node out of the shared lab (a no-op after the last test)
    sc.run("reset.yml", "-e", "skip_confirmation=true", "-e", "kubewin_reset_delete_tokens=false")


# --- scale_up.yml ------------------------------------------------------------------------------------------------

def test_network_tag_on_a_joined_node_runs_only_networking_and_changes_nothing(joined):
    doc = run_ok(joined, "scale_up.yml", "--tags", "network")
    assert not selected(doc) & (NODE | RUNTIME | FINALIZE | (PREPARE - HOSTPROCESS)), selected(doc)
    # what ran besides the network role made the facts it reads; in services mode the HostProcess DaemonSets
    # (tagged network too) are skipped
    assert ran(doc) - NETWORK <= DISCOVER | PREFLIGHT, ran(doc) - NETWORK
    assert "kubewin.nodes.network : Run flanneld as a Windows service (under NSSM)" in ran(doc)
    assert "kubewin.nodes.network : Run kube-proxy as a native Windows service" in ran(doc)
    assert scenario.changed_tasks(doc) == {}
    assert all(s["changed"] == 0 for s in doc["stats"].values()), doc["stats"]


def test_network_tag_puts_back_the_flanneld_service_and_the_vxlan_firewall_rule(joined):
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_scm
    before = joined.dump("win-1")
    assert firewall_rule(joined, "win-1", VXLAN_RULE)

    def remove(h):
        winsim_scm.stop(h, "flanneld")  # stops kube-proxy first, which depends on it
        winsim_scm.delete(h.state, "flanneld")
        h.state["firewall"]["rules"] = [r for r in h.state["firewall"]["rules"] if r.get("Name") != VXLAN_RULE]

    edit_host(joined, "win-1", remove)
    removed = joined.dump("win-1")
    assert "flanneld" not in removed["services"] and removed["services"]["kube-proxy"]["status"] == "Stopped"
    doc = run_ok(joined, "scale_up.yml", "--tags", "network")
    assert changed_names(doc) and changed_names(doc) <= NETWORK, changed_names(doc)
    after = normalized(joined.dump("win-1"))
    assert after["services"] == before["services"]
    assert after["firewall"] == normalized(before)["firewall"]
    assert after["services"]["flanneld"]["status"] == "Running" == after["services"]["kube-proxy"]["status"]


def test_node_tag_puts_back_the_kubelet_firewall_rule_and_runs_nothing_of_the_network(joined, api):
    core, _ = api
    before = joined.dump("win-1")
    edit_host(joined, "win-1", lambda h: h.state["firewall"].update(
        rules=[r for r in h.state["firewall"]["rules"] if r.get("Name") != KUBELET_RULE]))
    assert not firewall_rule(joined, "win-1", KUBELET_RULE)
    doc = run_ok(joined, "scale_up.yml", "--tags", "node")
    assert not selected(doc) & (NETWORK | RUNTIME | PREPARE), selected(doc)
    assert ran(doc) - NODE <= DISCOVER | PREFLIGHT | FINALIZE, ran(doc) - NODE
    assert "kubewin.nodes.control_plane : Wait for each Windows node to be Ready" in ran(doc)
    assert changed_names(doc) == {"kubewin.nodes.node : Allow inbound TCP 10250 to the kubelet (API server -> "
                                  "kubelet, all profiles, from kubewin_firewall_remote_addresses)"}, changed_names(doc)
    assert normalized(joined.dump("win-1")) == normalized(before)
    assert scenario_ready(core, "tag-win-1")


def test_metrics_tag_turns_windows_exporter_on_and_off_on_a_joined_node(joined):
    """kubewin_windows_exporter_enabled on a joined node with --tags metrics: the verified binary, the service running
    the expected command line, the firewall rule scoped to kubewin_firewall_remote_addresses; a re-run changes
    nothing; turned off, everything of it goes. Left on at the end, in the inventory: the reset test below then shows
    reset removes it (its host ends as it was before the scale-up)."""
    import json
    before = normalized(joined.dump("win-1"))
    settings = {"kubewin_windows_exporter_enabled": True, "kubewin_windows_exporter_port": 9200,
                "kubewin_windows_exporter_collectors": ["[defaults]", "container"],
                "kubewin_firewall_remote_addresses": ["192.0.2.0/24", "198.51.100.7"]}
    on = ("-e", json.dumps(settings))
    doc = run_ok(joined, "scale_up.yml", "--tags", "metrics", *on)
    assert not selected(doc) & (NODE | NETWORK | RUNTIME | PREPARE | FINALIZE), selected(doc)
    assert ran(doc) - METRICS <= DISCOVER | PREFLIGHT, ran(doc) - METRICS
    dump = joined.dump("win-1")
    svc = dump["services"]["windows_exporter"]
    assert svc["status"] == "Running" and svc["start"] == 2, svc
    assert svc["image_path"] == ("C:\\k\\windows_exporter.exe --collectors.enabled=[defaults],container "
                                 "--web.listen-address=:9200"), svc["image_path"]
    assert dump["processes"]["windows_exporter"]["collectors"] == [
        "cpu", "memory", "logical_disk", "physical_disk", "net", "os", "service", "system", "container"]
    assert dump["files"]["C:\\k\\windows_exporter.exe"].startswith("sha256:")
    rule, = firewall_rule(joined, "win-1", EXPORTER_RULE)
    # INetFwRule's values as winsim keeps them (winsim_firewall: TCP is 6, inbound 1, addresses as read back)
    assert (rule["LocalPorts"], rule["Protocol"], rule["Direction"], bool(rule["Enabled"])) == ("9200", 6, 1, True)
    assert sorted(rule["RemoteAddresses"].split(",")) == ["192.0.2.0/255.255.255.0", "198.51.100.7/255.255.255.255"]
    # nothing of the node or network roles moved
    assert {k: v for k, v in dump["services"].items() if k != "windows_exporter"} == before["services"]

    doc = run_ok(joined, "scale_up.yml", "--tags", "metrics", *on)
    assert scenario.changed_tasks(doc) == {}

    # Another release on the running exporter (the lab has one: the host's binary is swapped for another release's
    # stand-in, as an earlier kubewin_windows_exporter_version left it). Windows cannot overwrite a running program:
    # the files task stops the service just before it replaces the binary, and the service task starts it again.
    # Fails on the old role (ReplaceFile of the running program: "Unable to remove the file to be replaced").
    from winsim import core as sim
    running = dump["services"]["windows_exporter"]
    sim.write_binary(sim.Host(joined.root, "win-1").local_path("C:\\k\\windows_exporter.exe"), "windows_exporter",
                     "v0.31.7")
    doc = run_ok(joined, "scale_up.yml", "--tags", "metrics", *on)
    assert changed_names(doc) == {
        "kubewin.nodes.metrics : The verified windows_exporter binary and its web configuration (TLS, basic "
        "authentication)", "kubewin.nodes.metrics : Run windows_exporter as a native Windows service"}
    again = joined.dump("win-1")
    assert again["files"]["C:\\k\\windows_exporter.exe"] == dump["files"]["C:\\k\\windows_exporter.exe"]
    assert again["services"]["windows_exporter"]["status"] == "Running"
    assert again["services"]["windows_exporter"]["image_path"] == running["image_path"]

    doc = run_ok(joined, "scale_up.yml", "--tags", "metrics", "-e", "kubewin_windows_exporter_enabled=false")
    assert changed_names(doc) == {"kubewin.nodes.metrics : Remove the windows_exporter service an earlier run made",
                                  "kubewin.nodes.metrics : Remove windows_exporter's inbound rule",
                                  "kubewin.nodes.metrics : Remove windows_exporter's binary and configuration"}
    assert normalized(joined.dump("win-1")) == before

    # on again, now from the inventory as an operator keeps it, so the later tests' whole runs keep it as it is
    joined.variables = dict(joined.variables, **{k: v for k, v in settings.items() if k.startswith("kubewin_windows")})
    joined.set_vars(**joined.variables)
    run_ok(joined, "scale_up.yml", "--tags", "metrics")
    assert joined.dump("win-1")["services"]["windows_exporter"]["status"] == "Running"


def test_control_plane_tag_pins_daemonsets_and_leaves_the_windows_hosts_alone(joined, api):
    _, apps = api
    unpin_agent(apps)
    before = joined.dump("win-1")
    doc = run_ok(joined, "scale_up.yml", "--tags", "control_plane")
    assert not selected(doc) & (NODE | RUNTIME | NETWORK | FINALIZE), selected(doc)
    assert ran(doc) - PREPARE <= DISCOVER | PREFLIGHT, ran(doc) - PREPARE
    assert changed_names(doc) == {"kubewin.nodes.control_plane : Keep Linux DaemonSets off the Windows nodes"}
    assert agent_selector(apps) == {"kubernetes.io/os": "linux"}
    assert joined.dump("win-1") == before


def test_runtime_tag_makes_dockers_nat_network_and_nothing_else(tmp_path, api):
    sc = scenario.Scenario(tmp_path, nodes=1, profile="ws2022-docker-cri",
                           kubewin_node_name="tagdk-{{ inventory_hostname }}", kubewin_container_runtime="docker")
    before = sc.dump("win-1")
    doc = run_ok(sc, "scale_up.yml", "--tags", "runtime")
    assert ran(doc) - RUNTIME <= DISCOVER | PREFLIGHT, ran(doc) - RUNTIME
    assert changed_names(doc) == {"kubewin.nodes.runtime : The \"host\" NAT network Docker needs for hostNetwork pods"}
    after = sc.dump("win-1")
    assert [(n["Name"], n["Type"]) for n in after["hns"]["networks"]] == [("host", "NAT")]
    assert [n["Name"] for n in after["docker"]["networks"]] == ["host"]  # in Docker's own store (review-s6 D1)
    after["hns"], after["docker"] = before["hns"], before["docker"]
    assert after == before  # no file, service, firewall rule or Path of the node role


def test_hostprocess_daemonsets_carry_the_network_tag_too(listing):
    """hostprocess mode: flannel and kube-proxy are DaemonSets that control_plane's prepare applies, so --tags
    network selects them (test_hostprocess_mode.py runs them)."""
    for playbook in ("scale_up.yml", "upgrade.yml"):
        tasks = list_tasks(listing, playbook, "--tags", "network")
        assert {n.split(" : ", 1)[1] for n in HOSTPROCESS} <= tasks, (playbook, tasks)
        assert "Keep Linux DaemonSets off the Windows nodes" not in tasks


# --- upgrade.yml -------------------------------------------------------------------------------------------------

def test_upgrade_control_plane_tag_pins_daemonsets_and_upgrades_no_node(joined, api):
    core, apps = api
    unpin_agent(apps)
    joined.set_vars(**dict(joined.variables, kube_version=scenario.lab_version()))
    before = joined.dump("win-1")
    doc = run_ok(joined, "upgrade.yml", "--tags", "control_plane")
    assert not selected(doc) & (UPGRADE | NODE | NETWORK), selected(doc)
    assert agent_selector(apps) == {"kubernetes.io/os": "linux"}
    assert kubelet_version(core, "tag-win-1") == upgrade_from()
    assert joined.dump("win-1") == before


def test_upgrade_node_tag_upgrades_the_node_with_its_network_and_touches_no_daemonset(joined, api):
    core, apps = api
    unpin_agent(apps)
    joined.set_vars(**dict(joined.variables, kube_version=scenario.lab_version()))
    doc = run_ok(joined, "upgrade.yml", "--tags", "node")
    assert not selected(doc) & PREPARE, selected(doc) & PREPARE
    assert ran(doc) - UPGRADE - NODE - NETWORK <= DISCOVER | PREFLIGHT, ran(doc) - UPGRADE - NODE - NETWORK
    assert "kubewin.nodes.upgrade : Upgrade the node's kubelet configuration" in ran(doc)
    assert "kubewin.nodes.network : Run flanneld as a Windows service (under NSSM)" in ran(doc)
    assert not agent_selector(apps)
    node = core.read_node("tag-win-1")
    assert node.status.node_info.kubelet_version == scenario.lab_version() and not node.spec.unschedulable
    assert scenario_ready(core, "tag-win-1")
    # what the whole scale-up would do on the new version is done (the DaemonSet pin aside)
    doc = run_ok(joined, "scale_up.yml")
    assert changed_names(doc) == {"kubewin.nodes.control_plane : Keep Linux DaemonSets off the Windows nodes"}


def test_upgrade_runs_the_metrics_role_under_its_tag(listing):
    """An upgrade keeps windows_exporter as configured (and installs a changed kubewin_windows_exporter_version): the
    metrics role runs in upgrade.yml as in scale_up.yml, under --tags metrics and not under node. Fails on the old
    upgrade.yml (no metrics play)."""
    def metrics_tasks(*args):  # with the role's name: other roles have tasks of the same names
        out = listing("upgrade.yml", "--list-tasks", *args)
        return {line.strip().split("\t")[0] for line in out.splitlines()
                if "\tTAGS:" in line and line.strip().startswith("kubewin.nodes.metrics : ")
                and "Validating arguments against arg spec" not in line}  # the role's argument check (always)
    assert metrics_tasks("--tags", "metrics") == METRICS
    assert metrics_tasks("--tags", "node") == set()
    assert metrics_tasks() == METRICS


# --- reset.yml ---------------------------------------------------------------------------------------------------

def test_reset_in_three_tagged_steps_ends_where_a_whole_reset_ends(joined, api):
    core, _ = api
    keep_tokens = ("-e", "skip_confirmation=true", "-e", "kubewin_reset_delete_tokens=false")
    before = joined.dump("win-1")
    doc = run_ok(joined, "reset.yml", "--tags", "drain", *keep_tokens)
    assert not selected(doc) & (RESET | RESET_FINISH), selected(doc)
    assert ran(doc) - RESET_DRAIN <= DISCOVER | CONFIRM, ran(doc) - RESET_DRAIN
    assert core.read_node("tag-win-1").spec.unschedulable and joined.dump("win-1") == before

    doc = run_ok(joined, "reset.yml", "--tags", "node", *keep_tokens)
    assert not selected(doc) & (RESET_DRAIN | RESET_FINISH), selected(doc)
    assert normalized(joined.dump("win-1")) == normalized(joined.before_scale_up)
    core.read_node("tag-win-1")  # still there

    doc = run_ok(joined, "reset.yml", "--tags", "control_plane", *keep_tokens)
    assert not selected(doc) & (RESET_DRAIN | RESET), selected(doc)
    with pytest.raises(ApiException) as err:
        core.read_node("tag-win-1")
    assert err.value.status == 404

    doc = run_ok(joined, "reset.yml", *keep_tokens)
    assert scenario.changed_tasks(doc) == {}, "the three steps left something to the whole reset"


def test_every_tag_is_documented_and_only_those(listing):
    with open(os.path.join(scenario.REPO, "docs", "tags.md")) as f:
        text = f.read()
    for playbook in ("scale_up.yml", "upgrade.yml", "reset.yml"):
        section = text.split("## %s\n" % playbook, 1)[1].split("\n## ", 1)[0]
        documented = set(re.findall(r"^\| `(\w+)` \|", section, re.M))
        assert list_tags(listing, playbook) == documented | {"always"}, playbook


# --- an operator's own play --------------------------------------------------------------------------------------

OWN_PLAY = """
- name: Read the cluster
  ansible.builtin.import_playbook: kubewin.nodes.discover

- name: Check the Windows hosts
  hosts: kube_windows_nodes
  gather_facts: false
  any_errors_fatal: true
  roles:
    - kubewin.nodes.preflight

- name: Join them
  hosts: kube_windows_nodes
  gather_facts: false
  tasks:
    - name: Binaries, kubelet and kubeadm join
      ansible.builtin.include_role:
        name: kubewin.nodes.node
"""

NO_KUBECONFIG_PLAY = """
- name: A Kubernetes API module with no kubeconfig of its own
  hosts: kube_control_plane[0]
  gather_facts: false
  tasks:
    - name: Read the cluster with the default kubeconfig
      kubewin.nodes.k8s_join_info:
"""


def test_an_operators_play_with_only_the_node_role_joins_with_the_roles_own_kubeconfig(tmp_path, api, monkeypatch):
    """docs/tags.md's smallest play: no module_defaults in it, and no default kubeconfig to fall back to."""
    core, _ = api
    sc = scenario.Scenario(tmp_path / "sc", nodes=1, kubewin_node_name="own-{{ inventory_hostname }}")
    for name, text in (("own.yml", OWN_PLAY), ("no_kubeconfig.yml", NO_KUBECONFIG_PLAY)):
        (tmp_path / name).write_text(text)
    home = tmp_path / "home"
    home.mkdir()
    try:
        with monkeypatch.context() as env:
            # neither ~/.kube/config nor KUBECONFIG nor K8S_AUTH_KUBECONFIG names a usable kubeconfig
            env.setenv("HOME", str(home))
            env.setenv("KUBECONFIG", str(tmp_path / "none"))
            env.setenv("K8S_AUTH_KUBECONFIG", str(tmp_path / "none"))
            rc, doc, text = sc.run(str(tmp_path / "no_kubeconfig.yml"))
            assert rc != 0, "a module without kubeconfig found one: the test below would prove nothing"
            rc, doc, text = sc.run(str(tmp_path / "own.yml"))
        assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
        token = "kubewin.nodes.node : Make a bootstrap token for the hosts joining now (deleted again at the end " \
                "of this step)"
        assert token in changed_names(doc)  # made through the delegated task's kubeconfig
        assert "kubewin.nodes.node : Run kubeadm join --config (the token is in that file, not on the command " \
               "line)" in changed_names(doc)
        assert core.read_node("own-win-1").metadata.labels["kubernetes.io/os"] == "windows"
    finally:
        rc, doc, text = sc.run("reset.yml", "-e", "skip_confirmation=true", "-e", "kubewin_reset_delete_tokens=false")
        assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]


# --- helpers ------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def listing(tmp_path_factory):
    """ansible-playbook PLAYBOOK ARGS... on a simulated inventory (for --list-tags and --list-tasks: nothing runs)."""
    from winsim import make_inventory
    root = make_inventory.build(str(tmp_path_factory.mktemp("listing")), nodes=1, python=sys.executable)

    def run(playbook, *args):
        env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(root, "ansible.cfg"), ANSIBLE_NOCOLOR="1")
        p = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
                            os.path.join(PLAYBOOKS, playbook)] + list(args), env=env, capture_output=True, text=True)
        assert p.returncode == 0, p.stdout + p.stderr
        return p.stdout
    return run


def list_tags(listing, playbook):
    out = listing(playbook, "--list-tags")
    return {t.strip() for line in re.findall(r"TASK TAGS: \[(.*)\]", out) for t in line.split(",") if t.strip()}


def list_tasks(listing, playbook, *args):
    """Task names (without the role) that --list-tasks shows."""
    out = listing(playbook, "--list-tasks", *args)
    return {line.strip().split("\t")[0].split(" : ", 1)[-1] for line in out.splitlines() if "\tTAGS:" in line}


def scenario_ready(core, name):
    node = core.read_node(name)
    return any(c.type == "Ready" and c.status == "True" for c in node.status.conditions or [])
