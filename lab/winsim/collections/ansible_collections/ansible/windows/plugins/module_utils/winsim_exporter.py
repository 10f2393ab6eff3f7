# Test-lab only: a stand-in windows_exporter.exe run as a Windows service.
"""prometheus-community/windows_exporter as the Service Control Manager runs it (the metrics role).

Sources (windows_exporter v0.31.8): cmd/windows_exporter/0_service.go (as a service it reports SERVICE_RUNNING at
once, in Execute, then stops with the exit code main returns), cmd/windows_exporter/main.go (kingpin flags: the
process flags below; "failed to parse flags: unknown long flag '--x'" from config.Parse; "unknown collector x" from
collectors.Enable, pkg/collector/collection.go; the collectors.enabled placeholder '[defaults]' expanded with
pkg/collector/types.go DefaultCollectors), pkg/collector/map.go (the collector names); prometheus/exporter-toolkit
v0.17.1 web/kingpinflag/flag.go (--web.listen-address, default :9182, --web.config.file) and web/tls_config.go
(the web configuration file is read when the server starts: an unreadable file, an unknown key, a missing
certificate or key file, or a user whose hash is no bcrypt hash stops it).

FLAGS is every flag `windows_exporter.exe --help` of v0.31.8 prints (kingpin's own help, help-long, help-man and
version included); lab/tests/test_windows_exporter.py compares it with the real binary's --help under Wine
(lab/bin/lab-build builds it), and runs the roles' command line through the real binary up to its collectors.
What runs is recorded in ``state["processes"]["windows_exporter"]``: the listen address, the collectors and whether
it serves TLS or asks for basic authentication.
"""

from __future__ import annotations

import re

from ansible_collections.ansible.windows.plugins.module_utils import winsim_binaries as binaries
from ansible_collections.ansible.windows.plugins.module_utils import winsim_wine
from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError

# name -> "bool" (kingpin's --name / --no-name) or "value" (--name=value or --name value)
FLAGS = {
    "help": "bool", "help-long": "bool", "help-man": "bool", "version": "bool",
    "config.file": "value", "web.listen-address": "value", "web.config.file": "value", "telemetry.path": "value",
    "web.disable-exporter-metrics": "bool", "collectors.enabled": "value", "collectors.disabled": "value",
    "scrape.timeout-margin": "value", "debug.enabled": "bool", "process.priority": "value",
    "process.memory-limit": "value", "log.level": "value", "log.format": "value", "log.file": "value",
    "collector.performancecounter.objects": "value", "collector.textfile.directories": "value",
    "collector.container.enabled": "value", "collector.container.containerd-state-dir": "value",
    "collector.dns.enabled": "value", "collector.filetime.file-patterns": "value",
    "collector.mscluster.enabled": "value", "collector.printer.include": "value",
    "collector.printer.exclude": "value", "collector.service.exclude": "value", "collector.service.include": "value",
    "collector.dhcp.enabled": "value", "collector.physical_disk.disk-exclude": "value",
    "collector.physical_disk.disk-include": "value", "collector.update.online": "bool",
    "collector.update.scrape-interval": "value", "collector.process.exclude": "value",
    "collector.process.include": "value", "collector.process.iis": "bool", "collector.process.cmdline": "bool",
    "collector.process.counter-version": "value", "collector.scheduled_task.exclude": "value",
    "collector.scheduled_task.include": "value", "collector.tcp.enabled": "value", "collector.time.enabled": "value",
    "collector.logical_disk.volume-exclude": "value", "collector.logical_disk.volume-include": "value",
    "collector.logical_disk.enabled": "value", "collector.mssql.enabled": "value",
    "collector.netframework.enabled": "value", "collector.smtp.server-exclude": "value",
    "collector.smtp.server-include": "value", "collector.dfsr.sources-enabled": "value",
    "collector.exchange.list": "bool", "collector.exchange.enabled": "value", "collector.net.nic-exclude": "value",
    "collector.net.nic-include": "value", "collector.net.enabled": "value", "collector.hyperv.enabled": "value",
    "collector.iis.app-exclude": "value", "collector.iis.app-include": "value", "collector.iis.site-exclude": "value",
    "collector.iis.site-include": "value",
}
COLLECTORS = frozenset((
    "ad", "adcs", "adfs", "cache", "container", "cpu", "cpu_info", "dfsr", "dhcp", "diskdrive", "dns", "exchange",
    "filetime", "fsrmquota", "gpu", "hyperv", "iis", "license", "logical_disk", "memory", "mscluster", "msmq",
    "mssql", "net", "netframework", "nps", "os", "pagefile", "performancecounter", "physical_disk", "printer",
    "process", "remote_fx", "scheduled_task", "service", "smb", "smbclient", "smtp", "system", "tcp",
    "terminal_services", "textfile", "thermalzone", "time", "udp", "update", "vmware"))
DEFAULT_COLLECTORS = "cpu,memory,logical_disk,physical_disk,net,os,service,system"
# exporter-toolkit web/tls_config.go Config: the top-level keys (yaml.UnmarshalStrict refuses others)
WEB_CONFIG_KEYS = ("tls_server_config", "http_server_config", "basic_auth_users")
_BCRYPT = re.compile(r"^\$2[aby]?\$\d\d\$[./A-Za-z0-9]{53}$")
# How far the real binary gets under Wine with flags and collectors it accepts: collectors.Build needs Windows' MI
# (internal/mi ApplicationInitialize), which Wine lacks.
REAL_BUILD_REACHED = ("collection.go", "initMI", "Module not found")


def parse_flags(args):
    """kingpin's parse of the command line: {name: value} (the last one wins), or raise ValueError with kingpin's
    error text."""
    flags, i = {}, 0
    while i < len(args):
        a = args[i]
        if not a.startswith("--"):
            raise ValueError("unexpected %s" % a)
        name, eq, value = a[2:].partition("=")
        negated = name.startswith("no-") and FLAGS.get(name[3:]) == "bool"
        kind = FLAGS.get(name[3:] if negated else name)
        if kind is None:
            raise ValueError("unknown long flag '--%s'" % name)
        if kind == "bool":
            if eq:
                raise ValueError("unexpected %s" % value)  # kingpin: a boolean flag takes no value
            flags[name[3:] if negated else name] = "false" if negated else "true"
        else:
            if not eq:
                i += 1
                if i >= len(args):
                    raise ValueError("expected argument for flag '--%s'" % name)
                value = args[i]
            flags[name] = value
        i += 1
    return flags


def enabled_collectors(flags):
    """main.go expandEnabledCollectors: the list, '[defaults]' expanded, duplicates dropped; raises ValueError as
    collectors.Enable does for an unknown one."""
    names = []
    for n in flags.get("collectors.enabled", DEFAULT_COLLECTORS).replace("[defaults]", DEFAULT_COLLECTORS).split(","):
        if n not in names:
            names.append(n)
    for n in names:
        if n not in COLLECTORS:
            raise ValueError("unknown collector %s" % n)
    return names


def _read(host, win_path, what):
    try:
        with open(host.local_path(win_path), "rb") as f:
            return f.read().decode("utf-8")
    except (OSError, SimError, UnicodeDecodeError):
        raise ValueError("%s %s: open %s: The system cannot find the file specified." % (what, win_path, win_path)) \
            from None


def web_config(host, path):
    """What exporter-toolkit makes of the web configuration file: {tls, users}; raises ValueError for what stops it."""
    import yaml
    text = _read(host, path, "web config")
    try:
        conf = yaml.safe_load(text) or {}
    except yaml.YAMLError as e:
        raise ValueError("web config %s: yaml: %s" % (path, e)) from None
    if not isinstance(conf, dict):
        raise ValueError("web config %s: yaml: cannot unmarshal into web.Config" % path)
    unknown = sorted(set(conf) - set(WEB_CONFIG_KEYS))
    if unknown:
        raise ValueError("web config %s: yaml: unmarshal errors: field %s not found in type web.Config"
                         % (path, unknown[0]))
    tls = conf.get("tls_server_config") or {}
    for key in ("cert_file", "key_file"):
        if tls and not tls.get(key):
            raise ValueError("web config %s: missing %s" % (path, key))
        if tls.get(key):
            content = _read(host, tls[key], "web config " + key)
            if "-----BEGIN " not in content:
                raise ValueError("failed to load X509KeyPair: tls: failed to find any PEM data in %s" % key)
    users = conf.get("basic_auth_users") or {}
    for user, hashed in users.items():
        if not _BCRYPT.match(str(hashed)):
            raise ValueError("web config %s: user %s: crypto/bcrypt: hashedSecret too short to be a bcrypted password"
                             % (path, user))
    return {"tls": bool(tls), "users": sorted(str(u) for u in users)}


def _real_check(host, version, args):
    """The command line through the real windows_exporter.exe of that version under Wine, when the lab has it:
    None when it got as far as its collectors, else its error line."""
    cache = host.config().get("lab_cache")
    if not winsim_wine.binary(cache, version, "windows_exporter"):
        return None
    res = winsim_wine.run(cache, version, "windows_exporter", list(args), {}, timeout=60)
    out = res["output"]
    if res["rc"] is None or any(m in out for m in REAL_BUILD_REACHED):
        return None
    lines = [ln for ln in out.replace("\r\n", "\n").split("\n") if ln.strip()]
    return "real windows_exporter.exe %s under Wine: %s" % (version, lines[-1] if lines else "exit %s" % res["rc"])


def _service_start(host, version, svc, args):
    # 0_service.go: SERVICE_RUNNING is reported before main parses anything; what fails later stops the service.
    try:
        flags = parse_flags(args)
        if "config.file" in flags:
            raise ValueError("winsim: --config.file is not simulated")
        collectors = enabled_collectors(flags)
        err = _real_check(host, version, args)
        if err:
            raise ValueError(err)
        address = flags.get("web.listen-address", ":9182")
        if not re.match(r"^[^:]*:\d{1,5}$", address) or not 0 < int(address.rsplit(":", 1)[1]) < 65536:
            raise ValueError("listen tcp %s: address %s: invalid port" % (address, address))
        web = web_config(host, flags["web.config.file"]) if flags.get("web.config.file") else {"tls": False,
                                                                                                 "users": []}
    except ValueError as e:
        raise binaries.ExitsAfterRunning("windows_exporter %s: %s" % (version, e)) from None
    host.state.setdefault("processes", {})[svc["name"].lower()] = {
        "program": "windows_exporter", "listen_address": address, "collectors": collectors,
        "tls": web["tls"], "basic_auth_users": web["users"]}


@binaries.command("windows_exporter")
def _cli(host, version, args, stdin):
    if args[:1] == ["--version"]:
        return 0, "windows_exporter, version %s (branch: HEAD)\n" % version.lstrip("v"), ""
    return 1, "", "winsim: only 'windows_exporter --version' runs outside a service\n"


binaries.SERVICE_START["windows_exporter"] = _service_start
