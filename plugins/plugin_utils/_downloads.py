# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Downloads as the controller prepares them for a host: checksums (published files or pins), the proxy
and its bypass list (translated for .NET's WebProxy), and probing a URL the way the host will fetch it.

PRIVATE to the collection: no compatibility promise outside it.
"""

from __future__ import annotations

import ipaddress
import re
import urllib.parse
import urllib.request

from ansible_collections.kubewin.nodes.plugins.plugin_utils._host.files import HostFilesError, stamp_path

_HEX = {"sha512": re.compile(r"^[0-9a-f]{128}$"), "sha256": re.compile(r"^[0-9a-f]{64}$")}
# The checksum file each algorithm's publishers put beside a file: Kubernetes and the CNI plugins '.sha512';
# containerd '.sha256sum' (its release workflow's sha256sum output); a download may name another (checksum_url).
CHECKSUM_SUFFIX = {"sha512": ".sha512", "sha256": ".sha256sum"}
ALGORITHMS = tuple(_HEX)


def parse_checksum(text, source, algorithm="sha512"):
    """'<algorithm>:<hex>', '<hex>' or a checksum file ('<hex>  name' lines) -> lowercase hex."""
    token = ""
    for line in (text or "").splitlines():
        if line.strip():
            token = line.split()[0]
            break
    if token.lower().startswith(algorithm + ":"):
        token = token[len(algorithm) + 1:]
    token = token.lower()
    if not _HEX[algorithm].match(token):
        raise HostFilesError("%s is not a %s checksum (%d hex digits): %r" % (
            source, algorithm.upper().replace("SHA", "SHA-"), 128 if algorithm == "sha512" else 64,
            (text or "")[:80]))
    return token


def checksum_url(download):
    """The checksum file of a download: its checksum_url, else the URL with its algorithm's suffix."""
    return download.get("checksum_url") or download["url"] + CHECKSUM_SUFFIX[download.get("algorithm") or "sha512"]


def fetch_checksum_file(url, proxy=None, timeout=30, no_proxy=()):
    """Read a (small) checksum file on the controller, the way the node fetches the file: through
    the proxy, unless ``no_proxy`` (the node's bypass rules) sends that URL around it."""
    handlers = []
    if proxy:  # without one, the controller's own *_proxy environment applies, as before
        use = not bypassed(url, no_proxy)
        handlers.append(urllib.request.ProxyHandler({"http": proxy, "https": proxy} if use else {}))
    opener = urllib.request.build_opener(*handlers)
    with opener.open(url, timeout=timeout) as response:
        return response.read(65536).decode("utf-8", "replace")


def pin_checksums(downloads, checksums):
    """Add the user's pinned checksum (``kubewin_checksums``: download URL -> SHA-512) to each download.

    Pins are keyed by the full URL, so a pin holds for one version of one file only. The value is
    passed on unparsed: preflight (``resolve_downloads``) reports a malformed one by its URL.
    """
    pinned = []
    for d in downloads:
        d = dict(d)
        if checksums and d["url"] in checksums:
            d["checksum"] = str(checksums[d["url"]])
        pinned.append(d)
    return pinned


def _without_trailing_separator(path):
    """'C:\\Program Files\\x\\' -> 'C:\\Program Files\\x' (a drive's root stays): Windows PowerShell 5.1 quotes an
    argument with a space without doubling a trailing backslash, so tar.exe -C would read '...\\x"'
    (NativeCommandParameterBinder; PowerShell#4965)."""
    stripped = path.rstrip("\\/")
    return path if not stripped or stripped.endswith(":") else stripped


def resolve_checksums(downloads, fetch):
    """Each download with its checksum (``sha512``, or ``sha256`` for a download with ``algorithm: sha256``)
    instead of the ways to find it. ``fetch(url)`` returns a checksum file's text.

    A checksum already given under the algorithm's name (node_preflight resolved it) is used as it is; a pinned
    ``checksum`` wins over the checksum file; otherwise ``checksum_url`` (default: the URL + '.sha512', as
    Kubernetes and the CNI plugins publish them, or + '.sha256sum', as containerd does) is fetched. A SHA-256 is
    taken for archives only: what is unpacked is stamped with it, while a plain file is compared by its SHA-512.
    """
    resolved = []
    for d in downloads:
        if bool(d.get("dest")) == bool(d.get("extract_dir")):
            raise HostFilesError("download %s: set exactly one of dest (a file) or extract_dir (an archive)"
                                 % d["url"])
        algorithm = d.get("algorithm") or "sha512"
        if algorithm not in ALGORITHMS:
            raise HostFilesError("download %s: algorithm %r is not one of %s"
                                 % (d["url"], algorithm, ", ".join(ALGORITHMS)))
        if algorithm != "sha512" and not d.get("extract_dir"):
            raise HostFilesError("download %s: a %s checksum is taken for an archive (extract_dir) only"
                                 % (d["url"], algorithm))
        if d.get(algorithm):
            sha = parse_checksum(d[algorithm], "the %s given for %s" % (algorithm, d["url"]), algorithm)
        elif d.get("checksum"):
            sha = parse_checksum(d["checksum"], "the checksum pinned for %s" % d["url"], algorithm)
        else:
            url = checksum_url(d)
            try:
                text = fetch(url)
            except Exception as e:  # any transport error: say which URL and what to do
                raise HostFilesError(
                    "could not fetch the checksum of %s from %s (%s); publish it there, set checksum_url, or pin "
                    "the checksum" % (d["url"], url, e)) from None
            sha = parse_checksum(text, url, algorithm)
        entry = {k: d[k] for k in ("url", "dest", "extract_dir", "service") if d.get(k)}
        if entry.get("extract_dir"):
            entry["extract_dir"] = _without_trailing_separator(entry["extract_dir"])
        if algorithm != "sha512":
            entry["algorithm"] = algorithm
        entry[algorithm] = sha
        resolved.append(entry)
    return resolved


def resolve_downloads(downloads, fetch):
    """Give each download its SHA-512 (resolve_checksums) and destination: an archive's is the stamp file
    in its directory."""
    resolved = []
    for d in resolve_checksums(downloads, fetch):
        entry = {"url": d["url"], "extract_dir": d.get("extract_dir") or ""}
        if d.get("sha256"):
            entry["algorithm"], entry["sha256"] = "sha256", d["sha256"]
        else:
            entry["sha512"] = d["sha512"]
        entry["dest"] = d.get("dest") or stamp_path(entry)
        if d.get("service"):
            entry["service"] = d["service"]
        resolved.append(entry)
    return resolved


# .NET Framework's WebProxy (what WebClient on the node uses) matches each bypass entry as a regular
# expression (RegexOptions.IgnoreCase | CultureInvariant, unanchored: Regex.IsMatch) against
#     input.Scheme + "://" + input.Host + (!input.IsDefaultPort ? (":" + input.Port) : "")
# never against the bare host name: referencesource System/net/System/Net/webproxy.cs,
# WebProxy.IsMatchInBypassList, called from IsBypassedManual (which also bypasses loopback and,
# with BypassOnLocal, dot-less names and the machine's own addresses). ``Uri.Host`` is lowercase and
# an IPv6 host keeps its brackets ("[fd00::1]").
_DOTNET_SCHEME = r"^[a-z][a-z0-9+.-]*://"
_DEFAULT_PORTS = {"80": "http", "443": "https"}
_NO_PROXY_HOST = re.compile(r"^(\*\.|\.)?([a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$")


class NoProxyEntryError(ValueError):
    """A no_proxy entry none of the accepted forms describes; the message says which forms are."""


NO_PROXY_FORMS = ("a host or domain (mirror.corp, which also covers its subdomains), a domain's subdomains only "
                  "(.corp or *.corp), an IP address (10.0.0.5), an IPv4 network (10.0.0.0/8), any of these "
                  "with :port, or * for everything")


def _octet_range(low, high):
    """A regular expression for the decimal numbers low..high (0..255), as .NET writes IPv4 octets."""
    if low == 0 and high == 255:
        return r"\d{1,3}"
    return "(?:%s)" % "|".join(str(n) for n in range(low, high + 1))


def _ipv4_network_regex(net):
    """The dotted-quad addresses of an IPv4 network, octet by octet."""
    first, last = net.network_address.packed, net.broadcast_address.packed
    return r"\.".join(_octet_range(first[i], last[i]) for i in range(4))


def _with_port(host_regex, port):
    """The whole URI-string pattern for a host pattern and an optional port. .NET omits the
    scheme's default port (Uri.IsDefaultPort), so 'host:443' also matches 'https://host'."""
    if port is None:
        return r"%s%s(?::\d+)?$" % (_DOTNET_SCHEME, host_regex)
    default_scheme = _DEFAULT_PORTS.get(port)
    if default_scheme:
        return r"^(?:%s://%s|%s%s:%s)$" % (default_scheme, host_regex, _DOTNET_SCHEME[1:], host_regex, port)
    return r"%s%s:%s$" % (_DOTNET_SCHEME, host_regex, port)


def no_proxy_pattern(entry):
    """One no_proxy entry -> the .NET regular expression matching the URI strings it bypasses.

    The entry means what it means to Go programs on the node (containerd, the kubelet) and to
    kubespray: golang.org/x/net/http/httpproxy (config.init / domainMatch / ipMatch / cidrMatch):
    'mirror.corp' matches that host and its subdomains; '.corp' and '*.corp' only subdomains; an
    IP address only itself; an IPv4 network every address literal inside it (a host name that
    resolves into it is not matched: neither Go nor .NET resolve names for this); ':port' limits
    the entry to that port; '*' matches everything. IPv6 networks cannot be written as a .NET
    pattern of practical size and are refused (Windows nodes here are IPv4-only).
    Returns None for an empty entry; raises NoProxyEntryError for one no form describes.
    """
    text = str(entry if entry is not None else "").strip().lower()
    if not text:
        return None
    if text == "*":
        return _DOTNET_SCHEME
    if "://" in text or " " in text or "@" in text:
        raise NoProxyEntryError("%r: a no_proxy entry is a host, domain, IP address or network, not a URL" % entry)
    if "/" in text:
        try:
            net = ipaddress.ip_network(text, strict=False)
        except ValueError:
            raise NoProxyEntryError("%r is not a network in CIDR form (10.0.0.0/8)" % entry) from None
        if net.version != 4:
            raise NoProxyEntryError("%r is an IPv6 network; .NET's bypass list cannot express one: list the IPv6 "
                                    "addresses themselves" % entry)
        return _DOTNET_SCHEME + _ipv4_network_regex(net) + r"(?::\d+)?$"
    host, port = text, None
    m = re.match(r"^\[([0-9a-f:.]+)\](?::(\d+))?$", text) or re.match(r"^([^:]+):(\d+)$", text)
    if m:
        host, port = m.group(1), m.group(2)
    if port is not None and not 0 < int(port) < 65536:
        raise NoProxyEntryError("%r: port %s is out of range" % (entry, port))
    port = str(int(port)) if port is not None else None
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        ip = None
    if ip is not None:
        shown = ip.compressed if ip.version == 4 else "[%s]" % ip.compressed
        return _with_port(re.escape(shown), port)
    hm = _NO_PROXY_HOST.match(host)
    if not hm:
        raise NoProxyEntryError("%r is not a host name, domain, IP address or network" % entry)
    if hm.group(1):  # .corp / *.corp: subdomains only
        return _with_port(r"[^/:]+\." + re.escape(host[len(hm.group(1)):]), port)
    return _with_port(r"(?:[^/:]+\.)?" + re.escape(host), port)


def proxy_bypass_patterns(no_proxy):
    """no_proxy entries -> the regular expressions for .NET's WebProxy bypass list (see no_proxy_pattern).

    Raises NoProxyEntryError for an entry no form describes (preflight reports it first)."""
    return [p for p in (no_proxy_pattern(e) for e in no_proxy or []) if p is not None]


def dotnet_uri_string(url):
    """What WebProxy.IsMatchInBypassList matches: scheme://host[:port], the port only when it is not
    the scheme's default (System.Uri.IsDefaultPort), the host lowercase, IPv6 in brackets."""
    parts = urllib.parse.urlsplit(url)
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    if ":" in host:
        host = "[%s]" % host
    default = {"http": 80, "https": 443, "ftp": 21}.get(scheme)
    port = parts.port
    return "%s://%s%s" % (scheme, host, "" if port is None or port == default else ":%d" % port)


def bypassed(url, no_proxy):
    """Whether a URL goes around the proxy: as the node decides it (.NET's bypass list, loopback and
    dot-less names, BypassOnLocal), so the controller's checksum fetch takes the same way."""
    host = (urllib.parse.urlsplit(url).hostname or "").lower()
    if host in ("localhost", "::1") or host.startswith("127.") or ("." not in host and ":" not in host):
        return True
    target = dotnet_uri_string(url)
    return any(re.search(p, target, re.IGNORECASE) for p in proxy_bypass_patterns(no_proxy))


def redact_url(url):
    """A URL with the password of its userinfo replaced, for messages."""
    text = str(url)
    return re.sub(r"^([a-zA-Z][a-zA-Z0-9+.-]*://[^/@:]*):[^/@]*@", r"\1:<hidden>@", text)


def proxy_problem(proxy):
    """None when ``proxy`` is an http://host[:port] proxy URL, else what is wrong with it."""
    text = str(proxy).strip()
    if "://" not in text:
        return "it has no scheme"
    parts = urllib.parse.urlsplit(text)
    if parts.scheme.lower() != "http":
        return ("its scheme is %s: the nodes' WebClient (.NET Framework) and the controller's urllib talk plain HTTP "
                "to a proxy (HTTPS downloads still pass through it encrypted, with CONNECT)" % parts.scheme)
    try:
        port = parts.port
    except ValueError:
        return "its port is not a number from 1 to 65535"
    if not parts.hostname:
        return "it names no host"
    if port == 0:
        return "its port is not a number from 1 to 65535"
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        return "it has a path or query; a proxy URL is only scheme, host and port"
    if re.search(r"\s", text):
        return "it contains white space"
    return None


def url_kind(url):
    """'https', 'insecure' (http, ftp: no authentication of the server), 'file' (file://, a UNC or
    drive path, which the node copies), or 'invalid'."""
    text = str(url or "").strip()
    if re.match(r"^(\\\\[^\\]+\\|[A-Za-z]:\\)", text):
        return "file"
    parts = urllib.parse.urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme == "file":
        return "file"
    if scheme not in ("http", "https", "ftp") or not parts.netloc or re.search(r"\s", text):
        return "invalid"
    try:
        port = parts.port
    except ValueError:
        port = -1
    if port is not None and not 0 < port < 65536:
        return "invalid"
    return "https" if scheme == "https" else "insecure"


def probe_download(url, proxy=None, timeout=30, no_proxy=()):
    """Whether ``url`` can be fetched, asked the way the node fetches it (through the proxy unless
    ``no_proxy`` or loopback sends it around, as fetch_checksum_file): one GET of its first
    byte (Range: bytes=0-0; a server that ignores Range is cut off after one byte). Raises what urllib
    raises when it cannot."""
    handlers = []
    if proxy:
        use = not bypassed(url, no_proxy)
        handlers.append(urllib.request.ProxyHandler({"http": proxy, "https": proxy} if use else {}))
    request = urllib.request.Request(url, headers={"Range": "bytes=0-0"})
    with urllib.request.build_opener(*handlers).open(request, timeout=timeout) as response:
        response.read(1)


def fetch_once(fetch):
    """``fetch`` that asks for each URL once per run of the plugin: the checksum files preflight checks are
    the ones the node's downloads are verified against, so they are fetched once per host."""
    texts = {}

    def cached(url):
        if url not in texts:
            texts[url] = fetch(url)
        return texts[url]

    return cached
