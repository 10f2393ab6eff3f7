import pytest

from ansible_collections.kubewin.nodes.plugins.module_utils import _windows_paths as wp
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import facts as nf


def answer(**over):
    base = {
        "computer_name": "WIN-1", "hostname": "win-1",
        "version": {"major": 10, "minor": 0, "build": "20348", "ubr": 2113},
        "adapters": [{"name": "Ethernet0", "mac": "00-15-5D-00-00-01", "ipv4": ["192.0.2.10"]}],
        "pipes": ["containerd-containerd"],
        "services": {"containerd": {"exists": True, "status": "Running",
                                    "version_output": "containerd github.com/containerd/containerd/v2 v2.0.4 1a43\r\n"},
                     "docker": {"exists": False}},
        "paths": {},
    }
    base.update(over)
    return base


def test_build_runtime_and_adapters_are_reported():
    facts = nf.node_facts(answer())
    assert facts["windows_build"] == "10.0.20348" and facts["windows_build_full"] == "10.0.20348.2113"
    assert facts["runtimes"]["containerd"] == {"service_exists": True, "service_status": "Running",
                                               "pipe_exists": True, "version": "2.0.4"}
    docker = facts["runtimes"]["docker"]
    assert docker["service_exists"] is False and docker["pipe_exists"] is False
    assert facts["adapters"][0]["ipv4"] == ["192.0.2.10"]


def test_the_collections_containerd_is_the_service_it_registered():
    """Issue 23: only the containerd --register-service made for C:\\Program Files\\containerd\\bin is upgraded."""
    def managed(image_path):
        svc = dict(answer()["services"]["containerd"], image_path=image_path)
        return nf.node_facts(answer(services={"containerd": svc}))["containerd_managed"]
    assert managed('"C:\\Program Files\\containerd\\bin\\containerd.exe" --run-service') is True
    assert managed('"C:\\Program Files\\containerd\\bin\\containerd.exe" --run-service --log-file '
                   'C:\\var\\log\\containerd\\containerd.log') is True
    assert managed('"c:\\program files\\containerd\\bin\\containerd.exe" --RUN-SERVICE') is True
    assert managed('"C:\\containerd\\containerd.exe" --run-service') is False
    assert managed(None) is False


@pytest.mark.parametrize("output, version", [
    ("Docker version 24.0.7, build afdd53b", "24.0.7"),
    ("containerd github.com/containerd/containerd v1.6.28 ae07eda", "1.6.28"),
    ("'C:\\x\\containerd.exe' is not recognized", None), (None, None),
])
def test_runtime_versions(output, version):
    assert nf.parse_runtime_version(output) == version


@pytest.mark.parametrize("present, state", [
    ([], "fresh"),
    ([wp.BOOTSTRAP_CONF], "partial"),
    ([wp.CA_CERT], "partial"),
    ([wp.KUBELET_CONF, wp.CA_CERT], "joined"),
])
def test_join_state_tells_an_interrupted_join_apart(present, state):
    paths = {p: p in present for p in nf.join_markers()}
    assert nf.node_facts(answer(paths=paths))["join_state"] == state


KUBESPRAY_CA = "C:\\etc\\kubernetes\\ssl\\ca.crt"


def test_a_ca_left_at_the_clusters_path_is_an_interrupted_join():
    # kubespray's certificatesDir: kubeadm join wrote the CA to C:\etc\kubernetes\ssl, and its preflight
    # refuses the next join while that file exists.
    paths = {KUBESPRAY_CA: True, wp.CA_CERT: False}
    assert nf.node_facts(answer(paths=paths), KUBESPRAY_CA)["join_state"] == "partial"
    assert nf.node_facts(answer(paths=paths))["join_state"] == "fresh"


def test_script_asks_for_join_markers_and_runtime_versions():
    params = nf.script_parameters(["C:\\k\\x"])
    assert set(nf.join_markers()) <= set(params["Paths"]) and "C:\\k\\x" in params["Paths"]
    assert params["VersionOf"] == ["containerd", "docker"]
    assert KUBESPRAY_CA in nf.script_parameters([], KUBESPRAY_CA)["Paths"]


def test_kubeadm_gets_the_install_dir_first_on_its_path():
    machine = "C:\\Windows\\system32;C:\\Windows;C:\\k\\;C:\\Program Files\\containerd"
    assert nf.kubeadm_process_path(machine) == "C:\\k;C:\\Windows\\system32;C:\\Windows;C:\\Program Files\\containerd"
    assert nf.kubeadm_process_path("") == "C:\\k"
    assert nf.node_facts({"machine_path": machine})["machine_path"] == machine
    assert nf.node_facts({"machine_path": machine})["kubeadm_path"] == nf.kubeadm_process_path(machine)


def test_each_runtimes_cri_endpoint_is_a_fact():
    assert nf.node_facts({})["cri_endpoints"] == {"containerd": "npipe:////./pipe/containerd-containerd",
                                                  "docker": "npipe:////./pipe/cri-dockerd"}


def test_windows_paths_have_one_home():
    """Issue 9: the host's paths are written once (module_utils/_windows_paths.py), not in each module."""
    import os
    import re

    plugins = os.path.dirname(os.path.dirname(wp.__file__))
    # The exceptions name paths in text meant for people (preflight's fixes, runtime_cni's defaults of
    # other tools) or hold the scripts' and files' own rules.
    allowed = ("module_utils/_windows_paths.py", "plugin_utils/_host/runtime_cni.py", "plugin_utils/_preflight",
               "plugin_utils/_win_scripts.py", "plugin_utils/_host/files.py")
    offenders = []
    for top in ("module_utils", "plugin_utils"):
        for root, _dirs, names in os.walk(os.path.join(plugins, top)):
            for name in names:
                rel = os.path.relpath(os.path.join(root, name), plugins)
                if name.endswith(".py") and not rel.startswith(allowed):
                    with open(os.path.join(root, name)) as f:
                        if re.search(r'"C:\\\\(k|etc|var)\b', f.read()):
                            offenders.append(rel)
    assert offenders == []
    assert wp.LOG_FILES["kube-proxy"] == "C:\\var\\log\\kube-proxy\\kube-proxy.log"


def test_the_transport_key_is_in_the_facts_for_sealing():
    # the public half node_facts returns reaches kubewin_host, where run_script finds it (no second read)
    from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import sealed

    key = "<RSAKeyValue><Modulus>AQAB</Modulus><Exponent>AQAB</Exponent></RSAKeyValue>"
    facts = nf.node_facts(dict(answer(), transport_key=key))
    assert facts["transport_key"] == key
    assert sealed.transport_key({"kubewin_host": facts}) == key
    assert sealed.transport_key({"ansible_facts": {"kubewin_host": facts}}) == key
    assert sealed.transport_key({}) is None


def test_the_facts_read_never_makes_the_transport_key():
    """A read changes nothing on the host: the key secrets are sealed to is made by the first secret write."""
    assert "MakeTransportKey" not in nf.script_parameters()


def test_install_dir_on_path_compares_each_element_as_win_path_does():
    """The inputs are what node_facts returns: the machine Path EXPANDED ([Environment]::GetEnvironmentVariable(
    'Path', 'Machine')), so a registry value %SystemDrive%\\k arrives as C:\\k (and counts as present, where win_path,
    reading the raw value, would add C:\\k: facts.path_has's docstring). Per element as win_path: its quote-aware split
    ($pathsplit_re), then Get-IndexOfPathElement's Trim('"').Trim('\\') at both ends and -ieq."""
    for machine in ("C:\\Windows;C:\\k", "C:\\Windows;c:\\K\\", 'C:\\Windows;"C:\\k"', "C:\\k;C:\\Windows",
                    "C:\\Windows\\system32;C:\\Windows;C:\\k;",  # a trailing ';' (setx and installers leave one)
                    'C:\\Windows;"C:\\Program Files\\a;b";C:\\k'):
        assert nf.node_facts({"machine_path": machine})["install_dir_on_path"] is True, machine
    for machine in ("", "C:\\Windows", "C:\\k\\bin;C:\\kube", " C:\\k;C:\\Windows",
                    # S2 (review-s4-windows): one quoted element holding a ';' is one element for win_path, which
                    # would add C:\\k; split on every ';' it read as present
                    'C:\\Windows;"C:\\tools;C:\\k"'):
        assert nf.node_facts({"machine_path": machine})["install_dir_on_path"] is False, machine


def test_the_roles_services_come_back_whole_for_their_tasks_first_look():
    """issue 22: node_facts reads the definitions of the services the roles define, so a no-op run's service tasks
    cost no remote operation; the kubelet's comes with kubeadm's flags file, as win_kubelet_service reads it."""
    kubelet = {"exists": True, "status": "Running", "image_path": "C:\\k\\kubelet.exe --windows-service", "start": 2}
    facts = nf.node_facts(answer(
        services={"kubelet": {"exists": True, "status": "Running", "definition": kubelet},
                  "flanneld": {"exists": False}, "kube-proxy": {"exists": True, "status": "Running"},
                  "containerd": {"exists": True, "status": "Running", "definition": {"environment": ["X=y"]}}},
        flags_file_content='KUBELET_KUBEADM_ARGS="--node-ip=192.0.2.10"\n'))
    definitions = facts["service_definitions"]
    assert definitions["kubelet"] == dict(kubelet, name="kubelet", flags_file=wp.KUBEADM_FLAGS,
                                          flags_file_content='KUBELET_KUBEADM_ARGS="--node-ip=192.0.2.10"\n')
    assert definitions["flanneld"] == {"exists": False, "name": "flanneld", "flags_file": "",
                                       "flags_file_content": None}
    # an existing service read without its definition is left to its task; the runtimes are never passed on (an
    # operator's service may hold a proxy's credentials in its environment, and facts are printed at -v)
    assert "kube-proxy" not in definitions and "windows_exporter" not in definitions
    assert "containerd" not in definitions
    params = nf.script_parameters()
    assert params["DefinitionOf"] == ["kubelet", "kube-proxy", "flanneld", "windows_exporter"]
    assert params["FlagsFile"] == wp.KUBEADM_FLAGS
