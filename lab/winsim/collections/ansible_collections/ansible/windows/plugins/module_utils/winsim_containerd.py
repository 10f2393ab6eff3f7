# Test-lab only: containerd's configuration on a simulated host (`containerd.exe config dump`) and the CNI
# directories the CRI plugin reads.
"""containerd on Windows, as far as the CNI directories go.

Sources (containerd repository):
- defaults: v1.7 pkg/cri/config/config_windows.go DefaultConfig, v2.x internal/cri/config/config_windows.go
  (``filepath.Join(os.Getenv("ProgramFiles"), "containerd", "cni", "bin" | "conf")``); the default config file
  is defaults.DefaultConfigDir\\config.toml = C:\\Program Files\\containerd\\config.toml (defaults_windows.go),
  overridden by the global ``--config``/``-c`` flag.
- `config dump` (cmd/containerd/command/config.go dumpConfig): loads the file (a missing file is not an error),
  migrates older versions (2.x: plugins/cri/runtime/plugin.go configMigration moves the v2 section
  ``io.containerd.grpc.v1.cri``'s ``cni`` to ``io.containerd.cri.v1.runtime``, ``bin_dir`` into ``bin_dirs``
  when those are unset), decodes every plugin's config over its defaults and prints the whole with the TOML
  encoder of the release: 1.7 github.com/pelletier/go-toml v1 (``"..."`` strings with escapes, keys in
  alphabetical order, sub-tables indented), 2.x go-toml/v2 with SetIndentTables (``'...'`` literal strings,
  struct field order, quoted keys in single quotes). 1.7 refuses config version 3 ("unsupported config
  version `3`", services/server/config/config.go); a file that is not TOML fails with "failed to load TOML".
- The dump holds every plugin's full configuration; the stand-in prints the top-level keys, [grpc] and
  the CRI section with its [cni] table only (what a reader of the CNI directories needs), in the same
  encoding. The runtime uses bin_dir (1.7) or bin_dirs, where a set deprecated bin_dir replaces the
  default bin_dirs (2.x internal/cri/config/config.go ValidateRuntimeConfig).
"""

from __future__ import annotations

import json
import os

try:
    import tomllib
except ImportError:  # pragma: no cover - the lab runs Python >= 3.11
    tomllib = None

from ansible_collections.ansible.windows.plugins.module_utils.winsim_cmdline import split_command_line
from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError

PROGRAM_FILES = "C:\\Program Files"
DEFAULT_CONFIG = PROGRAM_FILES + "\\containerd\\config.toml"
DEFAULT_BIN_DIR = PROGRAM_FILES + "\\containerd\\cni\\bin"
DEFAULT_CONF_DIR = PROGRAM_FILES + "\\containerd\\cni\\conf"
V2_CRI = "io.containerd.grpc.v1.cri"
V3_CRI = "io.containerd.cri.v1.runtime"


class ContainerdError(Exception):
    """What containerd prints (after "containerd: ") and exits 1 with."""


def _major(version):
    return int(str(version).lstrip("v").split(".")[0])


def load(host, version, config_path=None):
    """The effective CNI settings: {"version": dumped config version, "bin_dir", "bin_dirs", "conf_dir"}."""
    path = config_path or DEFAULT_CONFIG
    file_conf = {}
    local = host.local_path(path)
    if os.path.isfile(local):
        with open(local, "rb") as f:
            raw = f.read()
        try:
            file_conf = tomllib.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            raise ContainerdError("failed to load TOML: %s: %s" % (path, e)) from None
    major = _major(version)
    # No file: the defaults (version 2 in 1.x, 3 in 2.x); a file without `version` is version 1 (GetVersion).
    file_version = int(file_conf.get("version") or 1) if os.path.isfile(local) else (3 if major >= 2 else 2)
    plugins = file_conf.get("plugins") or {}
    if major < 2:
        if file_version > 2:
            raise ContainerdError("unsupported config version `%d`" % file_version)
        if file_version < 2:
            raise SimError("winsim: containerd config version 1 (plugins.cri) is not simulated")
        cni = (plugins.get(V2_CRI) or {}).get("cni") or {}
        return {"version": 2, "bin_dir": cni.get("bin_dir", DEFAULT_BIN_DIR), "bin_dirs": None,
                "conf_dir": cni.get("conf_dir", DEFAULT_CONF_DIR)}
    if file_version < 2:
        raise SimError("winsim: containerd config version 1 (plugins.cri) is not simulated")
    if file_version == 2:  # configMigration
        src = (plugins.get(V2_CRI) or {}).get("cni") or {}
        cni = {}
        for k, v in src.items():
            if k == "bin_dir":
                cni["bin_dirs"] = [v]
            else:
                cni[k] = v
    else:
        cni = (plugins.get(V3_CRI) or {}).get("cni") or {}
    return {"version": 3, "bin_dir": cni.get("bin_dir", ""), "bin_dirs": list(cni.get("bin_dirs") or [DEFAULT_BIN_DIR]),
            "conf_dir": cni.get("conf_dir", DEFAULT_CONF_DIR)}


def effective_dirs(host, version, config_path=None):
    """(plugin directories, config directory) the CRI plugin uses, as containerd would start with them."""
    c = load(host, version, config_path)
    if c["version"] == 2:
        return [c["bin_dir"]], c["conf_dir"]
    if c["bin_dir"]:
        if c["bin_dirs"] != [DEFAULT_BIN_DIR]:
            raise ContainerdError("`cni.bin_dir` and `cni.bin_dirs` cannot be set at the same time")
        return [c["bin_dir"]], c["conf_dir"]
    return c["bin_dirs"], c["conf_dir"]


def _basic(value):
    """go-toml v1 string: double quotes, backslash and quote escaped."""
    return '"%s"' % value.replace("\\", "\\\\").replace('"', '\\"')


def _literal(value):
    """go-toml/v2 string: a literal string unless it holds a single quote or a control character."""
    if "'" in value or any(ord(ch) < 0x20 for ch in value):
        return _basic(value)
    return "'%s'" % value


def dump(host, version, config_path=None):
    """The text `containerd.exe [--config <path>] config dump` prints (see the module docstring)."""
    c = load(host, version, config_path)
    if c["version"] == 2:
        s = _basic
        cni = [("bin_dir", s(c["bin_dir"])), ("conf_dir", s(c["conf_dir"])), ("conf_template", s("")),
               ("ip_pref", s("")), ("max_conf_num", "1"), ("setup_serially", "false")]
        lines = ["disabled_plugins = []", "imports = []", "oom_score = 0", 'plugin_dir = ""',
                 "required_plugins = []", "root = %s" % s("C:\\ProgramData\\containerd\\root"),
                 "state = %s" % s("C:\\ProgramData\\containerd\\state"), 'temp = ""', "version = 2", "",
                 "[grpc]", "  address = %s" % s("\\\\.\\pipe\\containerd-containerd"), "", "[plugins]", "",
                 '  [plugins."%s"]' % V2_CRI,
                 "    sandbox_image = %s" % s("mcr.microsoft.com/oss/kubernetes/pause:3.9"),
                 "", '    [plugins."%s".cni]' % V2_CRI] + ["      %s = %s" % kv for kv in cni]
    else:
        s = _literal
        cni = [("bin_dir", s(c["bin_dir"])), ("bin_dirs", "[%s]" % ", ".join(s(d) for d in c["bin_dirs"])),
               ("conf_dir", s(c["conf_dir"])), ("max_conf_num", "1"), ("setup_serially", "false"),
               ("conf_template", s("")), ("ip_pref", s("")), ("use_internal_loopback", "false")]
        lines = ["version = 3", "root = %s" % s("C:\\ProgramData\\containerd\\root"),
                 "state = %s" % s("C:\\ProgramData\\containerd\\state"), "temp = ''", "disabled_plugins = []",
                 "required_plugins = []", "oom_score = 0", "imports = []", "", "[grpc]",
                 "  address = %s" % s("\\\\.\\pipe\\containerd-containerd"), "", "[plugins]",
                 "  [plugins.'%s']" % V3_CRI, "    enable_selinux = false", "",
                 "    [plugins.'%s'.cni]" % V3_CRI] + ["      %s = %s" % kv for kv in cni]
    return "\n".join(lines) + "\n"


def default_config(version):
    """What `containerd.exe config default` prints on Windows: the built-in defaults, never the config file
    (cmd/containerd/command/config.go: outputConfig(defaultConfig()), config version 3 in 2.x, 2 in 1.7), in the
    release's TOML encoding. The sections the collection reads and sets are written as the sources have them
    (v2.1.4 internal/cri/config/config_windows.go DefaultImageConfig: pinned_images sandbox = DefaultSandboxImage
    'registry.k8s.io/pause:3.10' (config.go), the registry table's config_path ''; DefaultRuntimeConfig's cni with
    bin_dirs; v1.7 pkg/cri/config/config_windows.go: sandbox_image "registry.k8s.io/pause:3.8", cni bin_dir).
    Every other plugin's table is left out, as in ``dump``; a reader that needs one fails here first."""
    if _major(version) >= 2:
        s = _literal
        images = "    [plugins.'%s'" % "io.containerd.cri.v1.images"
        lines = ["version = 3", "root = %s" % s("C:\\ProgramData\\containerd\\root"),
                 "state = %s" % s("C:\\ProgramData\\containerd\\state"), "temp = ''", "disabled_plugins = []",
                 "required_plugins = []", "oom_score = 0", "imports = []", "", "[grpc]",
                 "  address = %s" % s("\\\\.\\pipe\\containerd-containerd"), "", "[plugins]",
                 "  [plugins.'io.containerd.cri.v1.images']", "    snapshotter = 'windows'",
                 "    disable_snapshot_annotations = false", "    discard_unpacked_layers = false",
                 "    max_concurrent_downloads = 3", "    image_pull_progress_timeout = '5m0s'",
                 "    image_pull_with_sync_fs = false", "    stats_collect_period = 10", "",
                 images + ".pinned_images]", "      sandbox = 'registry.k8s.io/pause:3.10'", "",
                 images + ".registry]", "      config_path = ''", "",
                 images + ".image_decryption]", "      key_model = 'node'", "",
                 "  [plugins.'%s']" % V3_CRI, "    enable_selinux = false", "",
                 "    [plugins.'%s'.cni]" % V3_CRI, "      bin_dir = ''",
                 "      bin_dirs = [%s]" % s(DEFAULT_BIN_DIR), "      conf_dir = %s" % s(DEFAULT_CONF_DIR),
                 "      max_conf_num = 1", "      setup_serially = false", "      conf_template = ''",
                 "      ip_pref = ''", "      use_internal_loopback = false"]
    else:
        s = _basic
        lines = ["disabled_plugins = []", "imports = []", "oom_score = 0", 'plugin_dir = ""', "required_plugins = []",
                 "root = %s" % s("C:\\ProgramData\\containerd\\root"),
                 "state = %s" % s("C:\\ProgramData\\containerd\\state"), 'temp = ""', "version = 2", "",
                 "[grpc]", "  address = %s" % s("\\\\.\\pipe\\containerd-containerd"), "", "[plugins]", "",
                 '  [plugins."%s"]' % V2_CRI, '    sandbox_image = "registry.k8s.io/pause:3.8"', "",
                 '    [plugins."%s".cni]' % V2_CRI, "      bin_dir = %s" % s(DEFAULT_BIN_DIR),
                 "      conf_dir = %s" % s(DEFAULT_CONF_DIR), '      conf_template = ""', '      ip_pref = ""',
                 "      max_conf_num = 1", "", '    [plugins."%s".registry]' % V2_CRI, '      config_path = ""']
    return "\n".join(lines) + "\n"


# containerd's global flags (cmd/containerd/command/main.go App.Flags, service_windows.go serviceFlags): name -> takes
# a value. urfave/cli refuses any other flag ("flag provided but not defined").
GLOBAL_FLAGS = {"config": True, "c": True, "log-level": True, "l": True, "address": True, "a": True, "root": True,
                "state": True, "service-name": True, "register-service": False, "unregister-service": False,
                "run-service": False, "log-file": True}


def service_command(host, version, program, args):
    """containerd.exe --register-service / --unregister-service [flags] (cmd/containerd/command/service_windows.go,
    v2.1.4): registerService creates the service (--service-name, default "containerd") for the program's absolute
    path (exec.LookPath(os.Args[0]), filepath.Abs) with ``--run-service`` and every other argument as given,
    SERVICE_WIN32_OWN_PROCESS, StartAutomatic, ErrorNormal, display name "Containerd", description "Container
    runtime", recovery: restart after 15 s twice, then nothing, reset after 24 h. It does not start the service.
    unregisterService deletes it. Both together: "--register-service and --unregister-service cannot be used
    together". Errors are printed as "containerd: <error>" with exit code 1 (main.go). A failure of CreateService is
    Windows' text (ERROR_SERVICE_EXISTS: "The specified service already exists.")."""
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_scm
    from ansible_collections.ansible.windows.plugins.module_utils.winsim_cmdline import render_command_line
    name, kept, i = "containerd", [], 0
    while i < len(args):
        a = args[i]
        flag = a.lstrip("-").split("=", 1)[0]
        if not a.startswith("-") or flag not in GLOBAL_FLAGS:
            return 1, "", "Incorrect Usage: flag provided but not defined: -%s\n" % flag
        value = None
        if GLOBAL_FLAGS[flag] and "=" not in a:
            if i + 1 >= len(args):
                return 1, "", "Incorrect Usage: flag needs an argument: -%s\n" % flag
            value, i = args[i + 1], i + 1
        if flag == "service-name":
            name = value if value is not None else a.split("=", 1)[1]
        if flag not in ("register-service", "unregister-service"):
            kept += [a] + ([value] if value is not None else [])
        i += 1
    register, unregister = "--register-service" in args, "--unregister-service" in args
    if register and unregister:
        return 1, "", ("containerd: --register-service and --unregister-service cannot be used together: invalid "
                       "argument\n")
    if unregister:
        svc = winsim_scm.find(host.state, name)
        if svc is None:
            return 1, "", "containerd: The specified service does not exist as an installed service.\n"
        winsim_scm.delete(host.state, name)
        if name == "containerd":
            host.state["runtime"] = None  # the lab's record of the runtime the service stood for
        return 0, "", ""
    existing = winsim_scm.find(host.state, name)
    if existing is not None:
        # CreateService (registerService calls it directly): ERROR_SERVICE_MARKED_FOR_DELETE (1072) for a service
        # deleted while another handle is open (winsim_scm.delete), else ERROR_SERVICE_EXISTS (1073)
        return 1, "", "containerd: %s\n" % ("The specified service has been marked for deletion."
                                            if existing["pending_delete"] else "The specified service already exists.")
    svc = winsim_scm.create(host.state, name, render_command_line([program, "--run-service"] + kept), "Containerd",
                            start=2, description="Container runtime")
    svc["failure_actions"] = winsim_scm.encode_failure_actions(86400, [("restart", 15000), ("restart", 15000),
                                                                       ("none", 0)])
    host.state["runtime"] = {"name": "containerd", "version": str(version).lstrip("v")}
    return 0, "", ""


def command(host, version, args, program=None):
    """containerd.exe [--config|-c <path>] config dump | config default | --register-service ... ->
    (rc, stdout, stderr)."""
    if "--register-service" in args or "--unregister-service" in args:
        return service_command(host, version, program, args)
    if args == ["config", "default"]:
        return 0, default_config(version), ""
    config_path, rest, i = None, [], 0
    while i < len(args):
        a = args[i]
        if a in ("--config", "-c") and i + 1 < len(args):
            config_path, i = args[i + 1], i + 2
            continue
        if a.startswith("--config="):
            config_path = a.split("=", 1)[1]
        else:
            rest.append(a)
        i += 1
    if rest != ["config", "dump"]:
        return 1, "", "winsim: containerd %s is not simulated\n" % " ".join(args)
    try:
        return 0, dump(host, version, config_path), ""
    except ContainerdError as e:
        return 1, "", "containerd: %s\n" % e


def _config_flag(image_path):
    argv = split_command_line(image_path or "")
    for i, a in enumerate(argv):
        if a in ("--config", "-c") and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--config="):
            return a.split("=", 1)[1]
    return None


def find_plugin(host, name, bin_dirs):
    """libcni FindInPath on Windows (containernetworking/cni pkg/invoke/find.go, os_windows.go): <dir>\\<type>
    plus ".exe", then without extension; a plain file."""
    if not name:
        return None
    for d in bin_dirs:
        for ext in (".exe", ""):
            path = d.replace("/", "\\").rstrip("\\") + "\\" + name + ext
            try:
                if os.path.isfile(host.local_path(path)):
                    return path
            except SimError:
                continue
    return None


def cni_config(host, conf_dir):
    """The network the CRI plugin loads from ``conf_dir``, as a conflist-shaped dict, or None.

    go-cni loadFromConfDir (opts.go, max_conf_num 1): libcni ConfFiles lists *.conf, *.conflist, *.json in
    name order; the first one is loaded, and an error in it (not JSON, a .conf without "type", a conflist
    without "name" or plugins) fails the load, leaving no network ("cni plugin not initialized")."""
    try:
        local = host.local_path(conf_dir.replace("/", "\\"))
    except SimError:
        return None
    names = sorted(n for n in (os.listdir(local) if os.path.isdir(local) else [])
                   if os.path.splitext(n)[1] in (".conf", ".conflist", ".json")
                   and os.path.isfile(os.path.join(local, n)))
    if not names:
        return None
    try:
        with open(os.path.join(local, names[0]), "rb") as f:
            conf = json.loads(f.read().decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(conf, dict):
        return None
    if names[0].endswith(".conflist"):
        if not conf.get("name") or not conf.get("plugins"):
            return None
        return conf
    if not conf.get("type"):
        return None
    return {"name": conf.get("name"), "cniVersion": conf.get("cniVersion"), "plugins": [conf]}


def cri_dockerd_conf_dir(image_path):
    """cri-dockerd's --cni-conf-dir (Windows default C:\\k\\cni\\config, cmd/cri/options/options.go)."""
    argv = split_command_line(image_path or "")
    for i, a in enumerate(argv):
        if a.lstrip("-").startswith("cni-conf-dir="):
            return a.split("=", 1)[1]
        if a.lstrip("-") == "cni-conf-dir" and i + 1 < len(argv):
            return argv[i + 1]
    return "C:\\k\\cni\\config"


def cni_problems(host):
    """Why pods on this host would get no network from containerd's CRI plugin, [] when none.

    NetworkReady stays false while no config loads (cni_config). Each pod then runs the config's plugin,
    found in the plugin directories; the flannel plugin runs its delegate (win-bridge when the delegate names
    none) with host-local IPAM (flannel-io/cni-plugin flannel_windows.go)."""
    svc = (host.state.get("services") or {}).get("containerd")
    if not svc or not host.state.get("runtime"):
        return ["containerd is not installed"]
    try:
        bin_dirs, conf_dir = effective_dirs(host, host.state["runtime"]["version"], _config_flag(svc["image_path"]))
    except ContainerdError as e:
        return ["containerd does not start: %s" % e]
    conf = cni_config(host, conf_dir)
    if conf is None:
        return ["no network config found in %s" % conf_dir]
    wanted = []
    for p in conf.get("plugins") or []:
        wanted.append(p.get("type"))
        if p.get("delegate") is not None:
            wanted += [p["delegate"].get("type") or "win-bridge", "host-local"]
    return ["failed to find plugin %r in path %s" % (t, bin_dirs) for t in wanted
            if not t or find_plugin(host, t, bin_dirs) is None]
