"""The runtime's CNI directories, and the CNI config naming only plugins the downloads provide."""

import json
import posixpath
import re

import pytest

from ansible_collections.kubewin.nodes.plugins.plugin_utils import _preflight as preflight
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import network as nn
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import runtime_cni as rc

VERSIONS = {"cni": "v1.6.2", "flannel_cni": "v1.7.1-flannel1", "sdn_cni": "v0.3.1"}
BASES = {"cni": "https://github.com/containernetworking/plugins/releases/download",
         "flannel_cni": "https://github.com/flannel-io/cni-plugin/releases/download",
         "sdn_cni": "https://github.com/microsoft/windows-container-networking/releases/download"}

# What each release archive holds, written down from the release scripts (not from runtime_cni):
# containernetworking/plugins v1.6.2 plugins/windows_only.txt + .github/workflows/release.yaml (windows_releases:
# cp README.md LICENSE bin/, tar of bin/); flannel-io/cni-plugin
# scripts/package.sh; microsoft/windows-container-networking v0.3.1 Makefile (all + release targets).
ARCHIVE_MEMBERS = {
    "cni-plugins-windows-amd64-v1.6.2.tgz": {"host-local.exe", "win-bridge.exe", "win-overlay.exe", "README.md",
                                             "LICENSE"},
    "cni-plugin-flannel-windows-amd64-v1.7.1-flannel1.tgz": {"flannel-amd64.exe"},
    "windows-container-networking-cni-amd64-0.3.1.zip": {
        "sdnbridge.exe", "sdnoverlay.exe", "nat.exe", "generateCNIConfig.ps1"},
}


@pytest.mark.parametrize("runtime", ["containerd", "docker"])
@pytest.mark.parametrize("backend", ["vxlan", "host-gw"])
def test_every_plugin_the_cni_config_names_is_a_file_the_downloads_provide(runtime, backend):
    conf = nn.cni_config("10.244.0.0/16", "10.96.0.0/12", backend, 4096, "10.96.0.10", "cluster.local",
                         "192.168.1.10", runtime)
    downloads = rc.cni_downloads("C:\\Program Files\\containerd\\cni\\bin", runtime, VERSIONS, BASES)
    assert all(d["extract_dir"] == "C:\\Program Files\\containerd\\cni\\bin" for d in downloads)
    provided = set()
    for d in downloads:
        provided |= ARCHIVE_MEMBERS[posixpath.basename(d["url"])]
    parsed = json.loads(conf)
    types = [parsed["type"], parsed["delegate"]["type"], "host-local"]  # flannel adds host-local IPAM
    assert nn.cni_plugin_types(conf) == types
    # libcni looks for <type>.exe in the plugin directory (containernetworking/cni pkg/invoke/find.go).
    assert {t + ".exe" for t in types} <= provided, (types, provided)
    assert parsed["delegate"]["type"] == {"containerd": {"vxlan": "sdnoverlay", "host-gw": "sdnbridge"},
                                          "docker": {"vxlan": "win-overlay", "host-gw": "win-bridge"}}[runtime][backend]


def test_download_urls_are_the_real_release_assets():
    urls = [d["url"] for d in rc.cni_downloads("C:\\b", "containerd", VERSIONS, BASES)]
    assert urls == [
        BASES["cni"] + "/v1.6.2/cni-plugins-windows-amd64-v1.6.2.tgz",
        BASES["flannel_cni"] + "/v1.7.1-flannel1/cni-plugin-flannel-windows-amd64-v1.7.1-flannel1.tgz",
        # the v0.3.1 release workflow strips the tag's "v" from the file name
        BASES["sdn_cni"] + "/v0.3.1/windows-container-networking-cni-amd64-0.3.1.zip",
    ]
    assert rc.release_archive("sdn_cni", "v0.3.0") == "windows-container-networking-cni-amd64-v0.3.0.zip"
    assert len(rc.cni_downloads("C:\\b", "docker", VERSIONS, BASES)) == 2


def test_sdnoverlay_config_uses_hns_v2_policies():
    conf = json.loads(nn.cni_config("10.244.0.0/16", "10.96.0.0/12", "vxlan", 4096, "10.96.0.10", "cluster.local",
                                    "192.168.1.10", "containerd"))
    assert conf["name"] == "flannel.4096"
    assert conf["delegate"]["AdditionalArgs"] == [
        {"Name": "EndpointPolicy", "Value": {"Type": "OutBoundNAT",
                                             "Settings": {"Exceptions": ["10.244.0.0/16", "10.96.0.0/12"]}}},
        {"Name": "EndpointPolicy", "Value": {"Type": "SDNRoute",
                                             "Settings": {"DestinationPrefix": "10.96.0.0/12", "NeedEncap": True}}},
        {"Name": "EndpointPolicy", "Value": {"Type": "ProviderAddress",
                                             "Settings": {"ProviderAddress": "192.168.1.10"}}},
    ]
    with pytest.raises(nn.NetworkConfigError, match="kubewin_container_runtime"):
        nn.cni_config("10.244.0.0/16", "10.96.0.0/12", "vxlan", 4096, "x", "y", "1.2.3.4", "cri-o")


# containerd 1.7 `config dump` (go-toml v1 encoder: double-quoted strings, indented tables), trimmed.
DUMP_17 = r'''disabled_plugins = []
imports = []
oom_score = 0
plugin_dir = ""
required_plugins = []
root = "C:\\ProgramData\\containerd\\root"
state = "C:\\ProgramData\\containerd\\state"
temp = ""
version = 2

[grpc]
  address = "\\\\.\\pipe\\containerd-containerd"

[plugins]

  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "registry.k8s.io/pause:3.8"

    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "%s"
      conf_dir = "%s"
      conf_template = ""
      ip_pref = ""
      max_conf_num = 1
      setup_serially = false
'''

# containerd 2.x `config dump` (go-toml v2 encoder: literal strings, quoted keys), trimmed.
DUMP_2 = r'''version = 3
root = 'C:\ProgramData\containerd\root'
state = 'C:\ProgramData\containerd\state'
temp = ''
disabled_plugins = []
required_plugins = []
oom_score = 0
imports = []

[grpc]
  address = '\\.\pipe\containerd-containerd'

[plugins]
  [plugins.'io.containerd.cri.v1.runtime']
    enable_selinux = false

    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dir = '%s'
      bin_dirs = [%s]
      conf_dir = '%s'
      max_conf_num = 1
      setup_serially = false
      conf_template = ''
      ip_pref = ''
      use_internal_loopback = false
'''
PF_BIN = "C:\\Program Files\\containerd\\cni\\bin"
PF_CONF = "C:\\Program Files\\containerd\\cni\\conf"


def test_containerd_17_dirs_default_and_moved():
    def esc(path):
        return path.replace("\\", "\\\\")

    assert rc.containerd_cni_dirs(DUMP_17 % (esc(PF_BIN), esc(PF_CONF))) == {
        "bin_dir": PF_BIN, "conf_dir": PF_CONF, "source": "containerd config dump"}
    # sig-windows-tools' Install-Containerd.ps1 -CNIBinPath "c:/opt/cni/bin" -CNIConfigPath "c:/etc/cni/net.d"
    moved = rc.containerd_cni_dirs(DUMP_17 % ("c:/opt/cni/bin", "c:/etc/cni/net.d"))
    assert (moved["bin_dir"], moved["conf_dir"]) == ("c:\\opt\\cni\\bin", "c:\\etc\\cni\\net.d")


def test_containerd_2_dirs_bin_dirs_and_the_deprecated_bin_dir():
    default = "'%s'" % PF_BIN
    assert rc.containerd_cni_dirs(DUMP_2 % ("", default, PF_CONF))["bin_dir"] == PF_BIN
    assert rc.containerd_cni_dirs(DUMP_2 % ("", "'C:\\cni\\bin', 'D:\\more'", "C:\\cni\\conf")) == {
        "bin_dir": "C:\\cni\\bin", "conf_dir": "C:\\cni\\conf", "source": "containerd config dump"}
    # bin_dir set in config.toml replaces the default bin_dirs (ValidateRuntimeConfig)...
    assert rc.containerd_cni_dirs(DUMP_2 % ("C:\\opt\\cni\\bin", default, PF_CONF))["bin_dir"] == "C:\\opt\\cni\\bin"
    # ...and is refused next to custom bin_dirs.
    with pytest.raises(rc.CniDirsError, match="both cni.bin_dir"):
        rc.containerd_cni_dirs(DUMP_2 % ("C:\\a", "'C:\\b'", PF_CONF))


@pytest.mark.parametrize("dump, message", [
    ("", "did not answer"),
    ("error: exit code 1", "did not answer (error: exit code 1)"),
    ("containerd: failed to load TOML", "not TOML"),
    ("version = 1\n", "config version 1"),
    ("version = 2\n[plugins]\n", "no [plugins.'io.containerd.grpc.v1.cri'.cni] section"),
])
def test_containerd_dump_that_cannot_be_used(dump, message):
    with pytest.raises(rc.CniDirsError) as e:
        rc.containerd_cni_dirs(dump)
    assert message in str(e.value)


def test_cri_dockerd_dirs_from_its_command_line():
    assert rc.cri_dockerd_cni_dirs('"C:\\Program Files\\cri-dockerd\\cri-dockerd.exe" --run-service') == {
        "bin_dir": "C:\\k\\cni\\bin", "conf_dir": "C:\\k\\cni\\config", "source": "cri-dockerd command line"}
    moved = rc.cri_dockerd_cni_dirs('C:\\cri-dockerd.exe --cni-bin-dir=C:\\opt\\cni\\bin,D:\\x '
                                    '--cni-conf-dir "C:\\etc\\cni\\net.d"')
    assert (moved["bin_dir"], moved["conf_dir"]) == ("C:\\opt\\cni\\bin", "C:\\etc\\cni\\net.d")


def test_runtime_cni_dirs_reports_errors_instead_of_raising():
    assert rc.runtime_cni_dirs("containerd", {}) == {"error": "the containerd service does not exist"}
    assert "did not answer" in rc.runtime_cni_dirs(
        "containerd", {"containerd": {"exists": True, "config_dump": "error: boom"}})["error"]


def test_installed_files_are_exactly_what_the_archives_and_the_config_put_there():
    files = rc.installed_files("C:\\cni\\bin", "C:\\cni\\conf", "containerd", VERSIONS)
    assert files[0] == "C:\\cni\\conf\\10-flannel.conf"
    members = set().union(*ARCHIVE_MEMBERS.values())
    assert {f.rsplit("\\", 1)[1] for f in files[1:] if not f.rsplit("\\", 1)[1].startswith(".kubewin-")} == members


def test_preflight_stops_when_the_cni_directories_are_unknown():
    # in both deployment modes: the node role writes the CNI config where the runtime reads it
    error = "`containerd.exe config dump` did not answer (error: exit code 1)"
    failures, dummy = preflight.check_cni_dirs("containerd", {"error": error})
    assert len(failures) == 1 and failures[0]["variable"] == "kubewin_container_runtime"
    msg = failures[0]["message"]
    assert "exit code 1" in msg and "config.toml" in msg and "containerd" in msg
    assert preflight.check_cni_dirs("containerd", {"bin_dir": "C:\\b", "conf_dir": "C:\\c"}) == ([], [])
    assert preflight.check_cni_dirs("containerd", None) == ([], [])


def test_reset_prunes_the_cni_directories_then_their_common_parent():
    assert rc.installed_dirs(PF_BIN, PF_CONF) == [PF_CONF, PF_BIN, "C:\\Program Files\\containerd\\cni"]
    assert rc.installed_dirs("C:\\opt\\cni\\bin", "C:\\etc\\cni\\net.d") == ["C:\\etc\\cni\\net.d", "C:\\opt\\cni\\bin",
                                                                             "C:\\etc\\cni", "C:\\opt\\cni"]
    assert rc.installed_dirs("C:\\cni\\bin", "C:\\cni\\conf") == ["C:\\cni\\conf", "C:\\cni\\bin", "C:\\cni"]
    assert rc.installed_dirs("C:\\bin", "C:\\conf") == ["C:\\conf", "C:\\bin"]  # never C:\\


_CONTAINERD = '"C:\\Program Files\\containerd\\containerd.exe" --run-service '


@pytest.mark.parametrize("image_path, config", [
    # --register-service quotes each argument holding a space (x/sys/windows/svc/mgr CreateService, EscapeArg).
    (_CONTAINERD + '"--config=C:\\Program Files\\containerd\\my config.toml" --log-level debug',
     "C:\\Program Files\\containerd\\my config.toml"),
    (_CONTAINERD + '--config "C:\\Program Files\\containerd\\my config.toml"',
     "C:\\Program Files\\containerd\\my config.toml"),
    (_CONTAINERD + '--config=C:\\etc\\containerd.toml', "C:\\etc\\containerd.toml"),
    (_CONTAINERD + '-config C:\\etc\\containerd.toml', "C:\\etc\\containerd.toml"),
    (_CONTAINERD + '-c C:\\etc\\containerd.toml', "C:\\etc\\containerd.toml"),
    (_CONTAINERD + '"-c=C:\\my dir\\containerd.toml"', "C:\\my dir\\containerd.toml"),
    # No flag: config dump must read the default file, not something that merely contains "-c".
    (_CONTAINERD + '--log-file C:\\logs-c\\containerd.log', None),
    (_CONTAINERD.strip(), None),
])
def test_the_config_file_containerd_runs_with_is_found_in_its_service_command_line(image_path, config):
    # node_facts applies the pattern in .NET (-match, $Matches[1].Trim('"')); the syntax used is common to Python's re.
    match = re.search(rc.CONTAINERD_CONFIG_FLAG, image_path)
    assert (match.group(1).strip('"') if match else None) == config


@pytest.mark.parametrize("dirs", [None, {}, {"error": "containerd config dump failed"}])
def test_unknown_cni_directories_give_nothing_to_install_or_remove(dirs):
    """Preflight stops with the reason; reset must not invent a directory meanwhile."""
    assert preflight.cni_plugin_downloads(dirs, "containerd", VERSIONS, {}) == []
    assert rc.installed_paths(dirs, "containerd", VERSIONS) == ([], [])


def test_cni_archives_go_where_the_runtime_looks_and_reset_removes_exactly_them():
    dirs = {"bin_dir": PF_BIN, "conf_dir": PF_CONF}
    bases = {"kubewin_cni_download_url": BASES["cni"], "kubewin_flannel_cni_download_url": BASES["flannel_cni"],
             "kubewin_sdn_cni_download_url": BASES["sdn_cni"]}
    downloads = preflight.cni_plugin_downloads(dirs, "containerd", VERSIONS, bases)
    assert {d["extract_dir"] for d in downloads} == {PF_BIN}
    assert all(d["url"].startswith(tuple(BASES.values())) for d in downloads)
    files, pruned = rc.installed_paths(dirs, "containerd", VERSIONS)
    assert PF_CONF + "\\10-flannel.conf" in files
    assert all(f.startswith((PF_BIN + "\\", PF_CONF + "\\")) for f in files)
    assert pruned[-1] == "C:\\Program Files\\containerd\\cni"


# --- another CNI configuration in the runtime's directory (realnode.md F4) -------------------------
@pytest.mark.parametrize("names, expected", [
    (["10-flannel.conf"], []),
    # sig-windows-tools Install-Containerd.ps1 (64367ef..37ca088) wrote this one: it sorts first and wins
    (["0-containerd-nat.json", "10-flannel.conf"], ["0-containerd-nat.json"]),
    (["00-calico.conflist", "05-x.conf", "10-flannel.conf", "99-later.conf", "README.txt", "1.CONF"],
     ["00-calico.conflist", "05-x.conf"]),
    # Go's sort.Strings is byte order: upper case before lower case and digits
    (["10-Flannel.conf", "10-flannel.conf"], ["10-Flannel.conf"]),
])
def test_a_cni_configuration_sorting_before_flannels_is_named(names, expected):
    assert rc.conf_dir_conflicts(names) == expected


def test_with_more_than_one_configuration_loaded_every_other_one_is_named():
    assert rc.conf_dir_conflicts(["10-flannel.conf", "99-later.conf"], max_conf_num=0) == ["99-later.conf"]
    msg = rc.conf_dir_conflict_message(["99-later.conf"], "C:\\cni\\conf", "containerd", 0)
    assert "max_conf_num = 1" in msg and "C:\\cni\\conf\\99-later.conf" in msg


def test_the_message_names_the_file_why_and_the_fix():
    assert rc.conf_dir_conflict_message([], "C:\\cni\\conf", "containerd") is None
    msg = rc.conf_dir_conflict_message(["0-containerd-nat.json"], PF_CONF + "\\", "containerd")
    assert msg.startswith(PF_CONF + "\\0-containerd-nat.json sorts before 10-flannel.conf")
    assert "remove or rename it" in msg


def test_max_conf_num_is_read_from_the_dump():
    assert rc.containerd_max_conf_num(DUMP_17.replace("max_conf_num = 1", "max_conf_num = 0")
                                      % ("c:/b", "c:/c")) == 0
    assert rc.containerd_max_conf_num("error: not toml") == 1
