# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Preflight: the metrics exporter's settings (kubewin_windows_exporter_*), before any host changes.

What windows_exporter accepts is read from its source (prometheus-community/windows_exporter v0.31.8):
cmd/windows_exporter/main.go (--collectors.enabled with the '[defaults]' placeholder, --web.listen-address from
exporter-toolkit's kingpinflag with default ':9182', --web.config.file), pkg/collector/map.go (the collector names)
and, for the web configuration file, prometheus/exporter-toolkit docs/web-configuration.md (tls_server_config's
cert_file/key_file, basic_auth_users as bcrypt hashes).

PRIVATE to the collection: no compatibility promise outside it.
"""

from __future__ import annotations

import re

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight.findings import Findings

ENABLED_VAR = "kubewin_windows_exporter_enabled"
VERSION_VAR = "kubewin_windows_exporter_version"
COLLECTORS_VAR = "kubewin_windows_exporter_collectors"
PORT_VAR = "kubewin_windows_exporter_port"
TLS_CERT_VAR = "kubewin_windows_exporter_tls_cert"
TLS_KEY_VAR = "kubewin_windows_exporter_tls_key"
USERS_VAR = "kubewin_windows_exporter_basic_auth_users"
VARIABLES = (ENABLED_VAR, VERSION_VAR, COLLECTORS_VAR, PORT_VAR, TLS_CERT_VAR, TLS_KEY_VAR, USERS_VAR)

# pkg/collector/map.go of v0.31.8: every collector the release knows (an unknown name stops windows_exporter at
# start-up: "unknown collector"). Another version may know others, so a name outside this list is a warning.
KNOWN_COLLECTORS = frozenset((
    "ad", "adcs", "adfs", "cache", "container", "cpu", "cpu_info", "dfsr", "dhcp", "diskdrive", "dns", "exchange",
    "filetime", "fsrmquota", "gpu", "hyperv", "iis", "license", "logical_disk", "memory", "mscluster", "msmq",
    "mssql", "net", "netframework", "nps", "os", "pagefile", "performancecounter", "physical_disk", "printer",
    "process", "remote_fx", "scheduled_task", "service", "smb", "smbclient", "smtp", "system", "tcp",
    "terminal_services", "textfile", "thermalzone", "time", "udp", "update", "vmware"))
DEFAULTS_PLACEHOLDER = "[defaults]"
# Ports the node's own components listen on: the kubelet (10250), kube-proxy's metrics (10249) and health (10256).
TAKEN_PORTS = {10250: "the kubelet's", 10249: "kube-proxy's metrics", 10256: "kube-proxy's health check"}
# golang.org/x/crypto/bcrypt, which exporter-toolkit compares the password with: $2a$/$2b$/$2y$, cost, 53 characters.
_BCRYPT = re.compile(r"^\$2[aby]?\$\d\d\$[./A-Za-z0-9]{53}$")
_TAG = re.compile(r"^v\d+\.\d+\.\d+$")
_COLLECTOR = re.compile(r"^[a-z][a-z0-9_]*$")
_CERT_HEADER = "-----BEGIN CERTIFICATE-----"
_KEY_HEADER = re.compile(r"^-----BEGIN ([A-Z]+ )?PRIVATE KEY-----$")


def _enabled(value):
    try:
        return boolean(value) if value not in (None, "") else False
    except TypeError:
        return None


def check_windows_exporter(values):
    """The exporter's variables in their forms while it is enabled (off, the metrics role only removes what an earlier
    run made, and reads none of them)."""
    f = Findings("metrics")
    values = values or {}
    enabled = _enabled(values.get(ENABLED_VAR))
    if enabled is None:
        f.fail(ENABLED_VAR, "%s is %r, not a boolean: set it to true or false" % (ENABLED_VAR, values.get(ENABLED_VAR)))
    if not enabled:
        return f.result()

    version = str(values.get(VERSION_VAR) or "").strip()
    if not _TAG.match(version):
        f.fail(VERSION_VAR, "%s is %r: write the release's Git tag, like v0.31.8 (the node downloads "
                            "<base>/<tag>/windows_exporter-<tag without v>-amd64.exe)" % (VERSION_VAR, version))

    collectors = values.get(COLLECTORS_VAR)
    if isinstance(collectors, str) or not isinstance(collectors, (list, tuple)) or not collectors:
        f.fail(COLLECTORS_VAR, "%s is %r: give a non-empty list of collector names, e.g. [cpu, memory, net] or "
                               "['[defaults]', container]" % (COLLECTORS_VAR, collectors))
    else:
        names = [str(n).strip() for n in collectors]
        for name in names:
            if name == DEFAULTS_PLACEHOLDER:
                continue
            if not _COLLECTOR.match(name):
                f.fail(COLLECTORS_VAR, "%s has %r, which is no collector name (lower case letters, digits and _, one "
                                       "name a list item, or '[defaults]')" % (COLLECTORS_VAR, name))
            elif name not in KNOWN_COLLECTORS:
                f.warn(COLLECTORS_VAR, "%s has %r, which windows_exporter v0.31.8 does not know "
                                       "(pkg/collector/map.go); an unknown collector stops it at start-up: check the "
                                       "name against the release in %s" % (COLLECTORS_VAR, name, VERSION_VAR))
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            f.fail(COLLECTORS_VAR, "%s names %s more than once: list each collector once"
                   % (COLLECTORS_VAR, ", ".join(dupes)))

    port = values.get(PORT_VAR)
    try:
        if isinstance(port, bool):
            raise ValueError(port)
        number = int(str(port).strip())
    except ValueError:
        number = None
    if number is None or not 0 < number < 65536:
        f.fail(PORT_VAR, "%s is %r: set a TCP port from 1 to 65535 (windows_exporter's default is 9182)"
               % (PORT_VAR, port))
    elif number in TAKEN_PORTS:
        f.fail(PORT_VAR, "%s is %s, %s port on every Windows node: pick another (windows_exporter's default is 9182)"
               % (PORT_VAR, number, TAKEN_PORTS[number]))

    cert = str(values.get(TLS_CERT_VAR) or "").strip()
    key_header = str(values.get(TLS_KEY_VAR) or "").strip()
    if bool(cert) != bool(key_header):
        given, missing = (TLS_CERT_VAR, TLS_KEY_VAR) if cert else (TLS_KEY_VAR, TLS_CERT_VAR)
        f.fail(missing, "%s is set but %s is not: windows_exporter serves TLS with both (exporter-toolkit's "
                        "tls_server_config cert_file and key_file); set %s too, or neither" % (given, missing, missing))
    if cert and not cert.startswith(_CERT_HEADER):
        f.fail(TLS_CERT_VAR, "%s does not start with %s: give the PEM text of the certificate (e.g. "
                             "lookup('file', 'exporter.crt')), not a path" % (TLS_CERT_VAR, _CERT_HEADER))
    if key_header and not _KEY_HEADER.match(key_header):
        f.fail(TLS_KEY_VAR, "%s does not start with a PEM private key header (-----BEGIN PRIVATE KEY----- or "
                            "-----BEGIN RSA/EC PRIVATE KEY-----): give the key's PEM text (e.g. "
                            "lookup('file', 'exporter.key'), kept in Ansible Vault), not a path"
               % TLS_KEY_VAR)

    users = values.get(USERS_VAR)
    if users in (None, ""):
        users = {}
    if not isinstance(users, dict):
        f.fail(USERS_VAR, "%s is a %s: give a mapping of user name to bcrypt hash" % (USERS_VAR, type(users).__name__))
        return f.result()
    for user, hashed in sorted((str(u), v) for u, v in users.items()):
        if not user or ":" in user:
            f.fail(USERS_VAR, "%s has the user name %r: a basic authentication user name cannot be empty or hold ':' "
                              "(RFC 7617)" % (USERS_VAR, user))
        if not _BCRYPT.match(str(hashed or "").strip()):
            # never the value: it may be the plain password someone put there
            f.fail(USERS_VAR, "%s[%r] is not a bcrypt hash: exporter-toolkit compares passwords with bcrypt hashes "
                              "only ($2y$..., 60 characters); make one with `htpasswd -nBC 10 %s` (the part after "
                              "':') and put that there, not the password" % (USERS_VAR, user, user or "USER"))
    if users and not cert:
        f.warn(USERS_VAR, "%s is set without %s: basic authentication without TLS sends the password readable over "
                          "the network; give the exporter a certificate and key too" % (USERS_VAR, TLS_CERT_VAR))
    return f.result()
