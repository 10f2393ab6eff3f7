# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where each container runtime looks for CNI configuration and plugins, and which release archives
provide the plugins the CNI configuration names.

containerd reads its CNI directories from its configuration (``containerd.exe config dump`` prints the
effective one); cri-dockerd from its command line. The roles write the CNI configuration and unpack the
plugins exactly there, so nothing depends on an installer having changed the runtime's defaults.
"""

from __future__ import annotations

import re

try:  # Python >= 3.11, as every supported ansible-core controller has
    import tomllib
except ImportError:  # pragma: no cover - only on remote Pythons, which never run this
    tomllib = None

from ansible_collections.kubewin.nodes.plugins.plugin_utils._host.service import split_windows_command_line

# containerd on Windows (containerd v1.7 pkg/cri/config/config_windows.go DefaultConfig, v2.x
# internal/cri/config/config_windows.go defaultNetworkPluginBinDirs / DefaultRuntimeConfig):
# filepath.Join(os.Getenv("ProgramFiles"), "containerd", "cni", "bin" | "conf").
CONTAINERD_DEFAULT_BIN_DIR = "C:\\Program Files\\containerd\\cni\\bin"
CONTAINERD_DEFAULT_CONF_DIR = "C:\\Program Files\\containerd\\cni\\conf"
# The CRI plugin's section in the dumped configuration: config version 2 (containerd 1.x) and 3 (2.x).
CONTAINERD_CRI_SECTIONS = {2: "io.containerd.grpc.v1.cri", 3: "io.containerd.cri.v1.runtime"}
# The containerd service's own --config / -c (cmd/containerd/command/main.go), which `config dump` must
# be given too, or it reads the default C:\Program Files\containerd\config.toml. Go's flag syntax (one or
# two dashes, `=` or a space). `containerd --register-service` writes the ImagePath with
# golang.org/x/sys/windows/svc/mgr CreateService, which quotes each argument holding a space
# (syscall.EscapeArg): `--config "C:\a b\c.toml"` or, for `--config=C:\a b\c.toml`, the whole
# `"--config=C:\a b\c.toml"`. Plain .NET/Python regex (no named groups, fixed-width look-behinds);
# group 1 is the value, maybe in double quotes.
CONTAINERD_CONFIG_FLAG = (
    r"""(?:^|\s)"?--?(?:config|c)"?(?:=|\s+)"""
    r"""((?:(?<="--config=)|(?<="-config=)|(?<="--c=)|(?<="-c=))[^"]+|"[^"]+"|\S+)"""
)

# cri-dockerd v0.4.x on Windows (cmd/cri/options/options.go NewContainerRuntimeOptions; flags in
# config/options.go: --cni-bin-dir is a comma-separated list, --cni-conf-dir one directory).
CRI_DOCKERD_DEFAULT_BIN_DIR = "C:\\k\\cni\\bin\\"
CRI_DOCKERD_DEFAULT_CONF_DIR = "C:\\k\\cni\\config"

# The runtimes' own configuration files where they read them by default (containerd: defaults/defaults_windows.go
# DefaultConfigDir, filepath.Join(os.Getenv("ProgramFiles"), "containerd"), + config.toml; Docker: Microsoft Learn,
# "Docker Engine on Windows", C:\ProgramData\docker\config\daemon.json). The support bundle reads them.
RUNTIME_CONFIG_FILES = {"containerd": "C:\\Program Files\\containerd\\config.toml",
                        "docker": "C:\\ProgramData\\docker\\config\\daemon.json"}
CNI_CONF_DIRS = {"containerd": CONTAINERD_DEFAULT_CONF_DIR, "docker": CRI_DOCKERD_DEFAULT_CONF_DIR}

CNI_CONF_FILE = "10-flannel.conf"
# The file names a runtime takes as CNI configurations (containernetworking/cni libcni ConfFiles, called by
# containerd/go-cni opts.go loadFromConfDir with these three extensions, compared as filepath.Ext returns them:
# case-sensitive); go-cni sorts them with sort.Strings (byte order) and loads the first max_conf_num, which is 1 on
# Windows (containerd v1.7 pkg/cri/config/config_windows.go, 2.x internal/cri/config/config_windows.go).
CNI_CONF_EXTENSIONS = (".conf", ".conflist", ".json")


# The directories node_facts lists (their CNI configuration files) besides the conf_dir it finds in containerd's
# dump with CONTAINERD_CONF_DIR_PATTERN: group 1 a TOML literal string (go-toml/v2, containerd 2.x), group 2 a basic
# one (go-toml v1, containerd 1.x; the script turns its \\ into \). Plain .NET/Python regex.
DEFAULT_CONF_DIRS = [CONTAINERD_DEFAULT_CONF_DIR, CRI_DOCKERD_DEFAULT_CONF_DIR]
CONTAINERD_CONF_DIR_PATTERN = r"""(?m)^\s*conf_dir\s*=\s*(?:'([^']*)'|"((?:[^"\\]|\\.)*)")"""
# cri-dockerd's --cni-conf-dir on its service command line (group 1, maybe in double quotes; a whole quoted
# "--cni-conf-dir=C:\a b" too), for the same listing; the controller parses the command line properly
# (cri_dockerd_cni_dirs) and uses the listing only when both name the same directory.
CRI_DOCKERD_CONF_DIR_PATTERN = (
    r"""(?:^|\s)"?--?cni-conf-dir(?:=|\s+)"""
    r"""((?:(?<="--cni-conf-dir=)|(?<="-cni-conf-dir=))[^"]+|"[^"]+"|[^\s"]+)"""
)


class CniDirsError(Exception):
    """The runtime's CNI directories cannot be known; the message says what was found and the fix."""


def _norm(path):
    return path.replace("/", "\\").rstrip("\\") if len(path.rstrip("\\/")) > 2 else path.replace("/", "\\")


def containerd_cni_dirs(dump):
    """Effective {bin_dir, conf_dir} from the text of ``containerd.exe config dump``.

    containerd 1.x dumps config version 2 with ``plugins."io.containerd.grpc.v1.cri".cni.bin_dir``;
    2.x dumps version 3 with ``plugins."io.containerd.cri.v1.runtime".cni.bin_dirs`` (a list) and the
    deprecated ``bin_dir``, which replaces ``bin_dirs`` when those are the default and is refused
    together with custom ``bin_dirs`` (internal/cri/config/config.go ValidateRuntimeConfig).
    The first plugin directory is where the roles unpack the plugins.
    """
    if tomllib is None:  # pragma: no cover
        raise CniDirsError("reading containerd's configuration needs Python 3.11 or later on the controller")
    text = (dump or "").strip()
    if not text or text.startswith("error:"):
        raise CniDirsError("`containerd.exe config dump` did not answer (%s)" % (text[:200] or "no output"))
    try:
        conf = tomllib.loads(text)
    except ValueError as e:
        raise CniDirsError("`containerd.exe config dump` printed something that is not TOML (%s): %r"
                           % (e, text[:200])) from None
    version = conf.get("version")
    section = CONTAINERD_CRI_SECTIONS.get(version)
    if section is None:
        raise CniDirsError("`containerd.exe config dump` reports config version %r; this collection knows "
                           "versions 2 (containerd 1.x) and 3 (containerd 2.x)" % version)
    cni = ((conf.get("plugins") or {}).get(section) or {}).get("cni")
    if cni is None:
        raise CniDirsError("`containerd.exe config dump` has no [plugins.%r.cni] section: the CRI plugin is "
                           "disabled or missing (disabled_plugins in config.toml), so the kubelet cannot use "
                           "this containerd" % section)
    conf_dir = cni.get("conf_dir") or ""
    bin_dir = cni.get("bin_dir") or ""
    bin_dirs = list(cni.get("bin_dirs") or [])
    if version == 3:
        if bin_dir and bin_dirs and [_norm(d) for d in bin_dirs] != [_norm(CONTAINERD_DEFAULT_BIN_DIR)]:
            raise CniDirsError("containerd's config.toml sets both cni.bin_dir (%s) and cni.bin_dirs (%s), which "
                               "containerd 2 refuses at start-up: keep only bin_dirs" % (bin_dir, bin_dirs))
        if bin_dir:
            bin_dirs = [bin_dir]
    else:
        bin_dirs = [bin_dir] if bin_dir else []
    if not bin_dirs or not bin_dirs[0] or not conf_dir:
        raise CniDirsError("containerd's configuration names no CNI %s directory (cni.%s is empty)"
                           % ("configuration" if not conf_dir else "plugin",
                              "conf_dir" if not conf_dir else ("bin_dirs" if version == 3 else "bin_dir")))
    return {"bin_dir": _norm(bin_dirs[0]), "conf_dir": _norm(conf_dir), "source": "containerd config dump"}


def cri_dockerd_cni_dirs(image_path):
    """Effective {bin_dir, conf_dir} of cri-dockerd from its service command line."""
    argv = split_windows_command_line(image_path or "")
    flags = {}
    i = 1
    while i < len(argv):
        a = argv[i]
        m = re.match(r"^--?(cni-bin-dir|cni-conf-dir)(?:=(.*))?$", a)
        if m:
            if m.group(2) is not None:
                flags[m.group(1)] = m.group(2)
            elif i + 1 < len(argv):
                flags[m.group(1)] = argv[i + 1]
                i += 1
        i += 1
    bin_dir = flags.get("cni-bin-dir", CRI_DOCKERD_DEFAULT_BIN_DIR).split(",")[0]
    conf_dir = flags.get("cni-conf-dir", CRI_DOCKERD_DEFAULT_CONF_DIR)
    return {"bin_dir": _norm(bin_dir), "conf_dir": _norm(conf_dir), "source": "cri-dockerd command line"}


def containerd_max_conf_num(dump):
    """cni.max_conf_num of the CRI plugin from ``containerd.exe config dump`` (how many CNI configurations it loads;
    0: all), 1 when the dump cannot be read (containerd_cni_dirs reports that)."""
    try:
        conf = tomllib.loads((dump or "").strip())
    except (ValueError, AttributeError):
        return 1
    section = CONTAINERD_CRI_SECTIONS.get(conf.get("version"))
    cni = ((conf.get("plugins") or {}).get(section) or {}).get("cni") or {}
    return cni.get("max_conf_num", 1)


def conf_dir_conflicts(names, max_conf_num=1):
    """Of the file names in the runtime's CNI configuration directory, those the runtime would load instead of (or,
    with ``max_conf_num`` other than 1, besides) the collection's 10-flannel.conf: every other CNI configuration that
    sorts before it, or with more than one configuration loaded (0: all) every other one."""
    others = sorted(n for n in names or [] if n != CNI_CONF_FILE and n.endswith(CNI_CONF_EXTENSIONS))
    if max_conf_num in (None, 1):
        return [n for n in others if n < CNI_CONF_FILE]
    return others


def conf_dir_conflict_message(conflicts, conf_dir, runtime, max_conf_num=1):
    """What to tell the user about ``conflicts`` (conf_dir_conflicts), or None: the files, why and the fix."""
    if not conflicts:
        return None
    where = "%s\\%s" % (conf_dir.rstrip("\\"), conflicts[0]) if len(conflicts) == 1 else \
        "%s: %s" % (conf_dir, ", ".join(conflicts))
    why = ("sorts before %s, and %s loads only the first CNI configuration in name order" % (CNI_CONF_FILE, runtime)
           if max_conf_num in (None, 1) else
           "would be loaded besides %s (containerd's cni.max_conf_num is %s, not 1)" % (CNI_CONF_FILE, max_conf_num))
    return ("%s %s, so pods would not get flannel's network (their addresses outside the node's podCIDR): remove or "
            "rename it (for example the 0-containerd-nat.json older sig-windows-tools Install-Containerd.ps1 wrote)%s"
            % (where, why, "" if max_conf_num in (None, 1) else ", and set max_conf_num = 1 in containerd's "
               "config.toml"))


def with_conf_files(dirs, runtime, services, listing):
    """``dirs`` (runtime_cni_dirs) with ``conf_files``: the file names node_facts listed in its conf_dir (None when
    that directory was not listed), and for containerd its ``max_conf_num``."""
    if dirs.get("error"):
        return dirs
    out = dict(dirs, conf_files=None)
    want = _norm(dirs["conf_dir"]).lower()
    for listed, names in (listing or {}).items():
        if _norm(str(listed)).lower() == want:
            out["conf_files"] = sorted(names if isinstance(names, list) else [names] if names else [])
    if runtime == "containerd":
        out["max_conf_num"] = containerd_max_conf_num(((services or {}).get("containerd") or {}).get("config_dump"))
    return out


def runtime_cni_dirs(runtime, services):
    """{bin_dir, conf_dir, source} or {error} for ``runtime`` from the node_facts services answer."""
    try:
        if runtime == "containerd":
            svc = services.get("containerd") or {}
            if not svc.get("exists"):
                return {"error": "the containerd service does not exist"}
            return containerd_cni_dirs(svc.get("config_dump"))
        if runtime == "docker":
            svc = services.get("cri-dockerd") or {}
            if not svc.get("exists"):
                return {"error": "the cri-dockerd service does not exist"}
            return cri_dockerd_cni_dirs(svc.get("image_path"))
    except CniDirsError as e:
        return {"error": str(e)}
    return {"error": "unknown container runtime %r" % runtime}


# --- which release archive provides which plugin ------------------------------------------------------
# Each entry: the archive's file name for a version and the plugin files it holds, from the release's
# own build scripts (the lab mirror keeps its own copy of these facts, from the same sources).
RELEASES = {
    # containernetworking/plugins .github/workflows/release.yaml (windows_releases job, v1.6.2): builds the
    # plugins listed in plugins/windows_only.txt (v1.0.0 and later: host-local, win-bridge, win-overlay; the
    # flannel plugin moved to flannel-io/cni-plugin), then `cp README.md LICENSE bin/` and tars bin/ whole.
    # Checksum: <archive>.sha512.
    "cni": {"archive": "cni-plugins-windows-amd64-{version}.tgz",
            "plugins": ("host-local", "win-bridge", "win-overlay"), "other_files": ("README.md", "LICENSE")},
    # flannel-io/cni-plugin scripts/package.sh: tar ... flannel-amd64.exe. Checksum: <archive>.sha512.
    "flannel_cni": {"archive": "cni-plugin-flannel-windows-amd64-{version}.tgz",
                    "plugins": ("flannel-amd64",)},
    # microsoft/windows-container-networking Makefile `release`: zip -j of out/ (sdnbridge, sdnoverlay, nat;
    # v0.3.1 also generateCNIConfig.ps1), then shasum -a 512 into <archive>.sha512. Its release workflow
    # names the zip after the tag without the "v" for v0.2.2 to v0.3.1 (version="${ref#refs/tags/v}"),
    # with it for manual releases before and since the workflow fix (#120).
    "sdn_cni": {"archive": "windows-container-networking-cni-amd64-{version}.zip",
                "plugins": ("sdnbridge", "sdnoverlay", "nat")},
}
# Tags of microsoft/windows-container-networking released by the workflow that strips the "v".
SDN_CNI_TAGS_WITHOUT_V = ("v0.2.2", "v0.3.1")

# The delegate the flannel plugin hands each pod to: HNS v2 plugins with containerd (as the
# microsoft/windows-container-networking flannel examples and sig-windows-tools do), the HNS v1
# containernetworking plugins with Docker.
DELEGATES = {
    ("containerd", "vxlan"): "sdnoverlay", ("containerd", "host-gw"): "sdnbridge",
    ("docker", "vxlan"): "win-overlay", ("docker", "host-gw"): "win-bridge",
}
# flannel-io/cni-plugin flannel_windows.go doCmdAdd: the delegate's IPAM is always host-local.
FLANNEL_IPAM = "host-local"
# The CNI type of the flannel plugin: libcni finds <type>.exe in the plugin directory
# (containernetworking/cni pkg/invoke/find.go, os_windows.go ExecutableFileExtensions = .exe, "").
FLANNEL_TYPE = "flannel-amd64"


def release_archive(source, version):
    name = RELEASES[source]["archive"]
    if source == "sdn_cni" and version in SDN_CNI_TAGS_WITHOUT_V:
        return name.format(version=version[1:])
    return name.format(version=version)


def release_sources(container_runtime):
    """The release archives a node of this runtime needs, in download order."""
    return ("cni", "flannel_cni", "sdn_cni") if container_runtime == "containerd" else ("cni", "flannel_cni")


def dirs_known(cni_dirs):
    """Whether win_host_facts found the runtime's CNI directories (``cni[runtime]``: {bin_dir, conf_dir} or
    {error}); while they are unknown nothing is installed or removed there (preflight stops with the reason)."""
    return bool(cni_dirs) and not cni_dirs.get("error") and bool(cni_dirs.get("bin_dir"))


def cni_downloads(bin_dir, container_runtime, versions, base_urls):
    """Download entries (for win_host_files) of the CNI plugin archives, unpacked into ``bin_dir``.

    ``versions`` and ``base_urls`` map each release source (cni, flannel_cni, sdn_cni) to its tag and base URL.
    """
    out = []
    for source in release_sources(container_runtime):
        version = versions[source]
        out.append({"url": "%s/%s/%s" % (base_urls[source].rstrip("/"), version, release_archive(source, version)),
                    "extract_dir": bin_dir})
    return out


def release_files(source, version):
    """Every file the archive unpacks (the plugins, README.md and LICENSE of containernetworking/plugins' release
    workflow, and generateCNIConfig.ps1 in windows-container-networking
    zips built by its Makefile's `all` target of v0.2.2 and v0.3.1)."""
    files = ["%s.exe" % p for p in RELEASES[source]["plugins"]] + list(RELEASES[source].get("other_files", ()))
    if source == "sdn_cni" and version in SDN_CNI_TAGS_WITHOUT_V:
        files.append("generateCNIConfig.ps1")
    return files


def provided_plugins(container_runtime):
    """Plugin names (CNI types) the downloads of this runtime put in the plugin directory."""
    return sorted(p for s in release_sources(container_runtime) for p in RELEASES[s]["plugins"])


def installed_files(bin_dir, conf_dir, container_runtime, versions):
    """What the roles put in the runtime's CNI directories (reset removes exactly these): the CNI
    configuration, every file of the plugin archives and the stamps recording which archive is unpacked."""
    b = bin_dir.rstrip("\\")
    out = ["%s\\%s" % (conf_dir.rstrip("\\"), CNI_CONF_FILE)]
    for source in release_sources(container_runtime):
        archive = release_archive(source, versions[source])
        out += ["%s\\%s" % (b, f) for f in release_files(source, versions[source])]
        out.append("%s\\.kubewin-%s.sha512" % (b, archive))  # host_files.stamp_path
    return out


def installed_dirs(bin_dir, conf_dir):
    """Directories reset prunes when nothing else is left in them: the two CNI directories, then their parents
    (C:\\Program Files\\containerd\\cni with containerd's defaults; C:\\etc\\cni and C:\\opt\\cni where containerd's
    config.toml moved them there, sig-windows-tools' way), never a drive's root. Reset no longer removes those
    trees whole (a local user may own folders there), so what the roles made there goes by name and by pruning."""
    dirs = [conf_dir.rstrip("\\"), bin_dir.rstrip("\\")]
    for parent in [d.rsplit("\\", 1)[0] for d in dirs]:
        if len(parent) > 3 and parent not in dirs:
            dirs.append(parent)
    return dirs


def installed_paths(cni_dirs, container_runtime, versions):
    """What reset removes from the runtime's CNI directories (win_host_files' O(remove_cni)): (files, dirs),
    the files the roles put there and the directories to prune when empty; nothing while the directories
    are unknown (``cni_dirs`` as win_host_facts reports them: preflight stops with the reason)."""
    if not dirs_known(cni_dirs):
        return [], []
    return (installed_files(cni_dirs["bin_dir"], cni_dirs["conf_dir"], container_runtime, versions),
            installed_dirs(cni_dirs["bin_dir"], cni_dirs["conf_dir"]))
