import base64
import hashlib
import json
import re

import pytest

from ansible_collections.kubewin.nodes.plugins.plugin_utils import _downloads
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import files as nfiles

SHA = hashlib.sha512(b"kubelet").hexdigest()
URL = "http://mirror.example/release/v1.33.2/bin/windows/amd64/kubelet.exe"


def resolved(**over):
    entry = {"url": URL, "dest": "C:\\k\\kubelet.exe", "checksum": None, "checksum_url": None, "extract_dir": None}
    entry.update(over)
    return _downloads.resolve_downloads([entry], fetch={URL + ".sha512": SHA + "\n"}.__getitem__)


@pytest.mark.parametrize("text", [SHA, "sha512:" + SHA.upper(), "%s  kubelet.exe\n" % SHA, "\n%s\n" % SHA])
def test_checksum_forms(text):
    assert _downloads.parse_checksum(text, "x") == SHA


@pytest.mark.parametrize("text", ["", "abc", hashlib.sha256(b"x").hexdigest(), "<html>Not Found</html>"])
def test_non_sha512_checksums_are_refused_with_their_source(text):
    with pytest.raises(nfiles.HostFilesError, match="http://m/c is not a SHA-512"):
        _downloads.parse_checksum(text, "http://m/c")


def test_published_checksum_is_fetched_next_to_the_download():
    assert resolved()[0]["sha512"] == SHA


def test_pinned_checksum_needs_no_fetch():
    out = _downloads.resolve_downloads([{"url": URL, "dest": "C:\\k\\kubelet.exe", "checksum": "sha512:" + SHA}],
                                       fetch=lambda url: pytest.fail("fetched %s" % url))
    assert out[0]["sha512"] == SHA


def test_a_checksum_preflight_resolved_is_used_without_a_fetch():
    """node_preflight hands the node role each download with its sha512: checksums are fetched once per host."""
    given = [{"url": URL, "dest": "C:\\k\\kubelet.exe", "sha512": SHA.upper(), "checksum": "f" * 128},
             {"url": URL + ".zip", "extract_dir": "C:\\k\\nssm", "sha512": SHA}]
    out = _downloads.resolve_downloads(given, fetch=lambda url: pytest.fail("fetched %s" % url))
    assert [(d["url"], d["dest"], d["sha512"]) for d in out] == [
        (URL, "C:\\k\\kubelet.exe", SHA), (URL + ".zip", "C:\\k\\nssm\\.kubewin-kubelet.exe.zip.sha512", SHA)]


def test_resolved_checksums_keep_the_shape_win_host_files_takes():
    """What preflight returns goes back into win_host_files unchanged: url, dest or extract_dir, and sha512."""
    out = _downloads.resolve_checksums([{"url": URL, "dest": "C:\\k\\kubelet.exe", "checksum_url": URL + ".sha512",
                                         "checksum": None, "extract_dir": None}],
                                       fetch={URL + ".sha512": SHA + "  kubelet.exe\n"}.__getitem__)
    assert out == [{"url": URL, "dest": "C:\\k\\kubelet.exe", "sha512": SHA}]
    assert _downloads.resolve_downloads(out, fetch=lambda url: pytest.fail("fetched"))[0]["sha512"] == SHA


@pytest.mark.parametrize("given, extract_dir", [("C:\\Program Files\\cni\\", "C:\\Program Files\\cni"),
                                                ("C:\\opt\\cni\\bin/", "C:\\opt\\cni\\bin"), ("D:\\", "D:\\")])
def test_an_extract_dir_reaches_tar_without_a_trailing_backslash(given, extract_dir):
    """5.1 quotes 'C:\\Program Files\\cni\\' as "C:\\Program Files\\cni\\" for tar.exe -C, whose C runtime reads the
    closing quote as part of the path (lab/tests/test_psnative.py): the directory loses its trailing separator."""
    out = _downloads.resolve_downloads([{"url": URL + ".zip", "extract_dir": given, "sha512": SHA}],
                                       fetch=lambda url: pytest.fail("fetched %s" % url))
    assert out[0]["extract_dir"] == extract_dir


def test_a_given_sha512_that_is_none_is_refused():
    with pytest.raises(nfiles.HostFilesError, match="the sha512 given for %s" % re.escape(URL)):
        _downloads.resolve_checksums([{"url": URL, "dest": "C:\\k\\kubelet.exe", "sha512": "abc"}], fetch=None)


def test_unreachable_checksum_says_what_to_do():
    def fetch(url):
        raise OSError("connection refused")

    with pytest.raises(nfiles.HostFilesError, match="pin the checksum") as err:
        _downloads.resolve_downloads([{"url": URL, "dest": "C:\\k\\kubelet.exe"}], fetch)
    assert URL + ".sha512" in str(err.value) and "connection refused" in str(err.value)


def test_archive_gets_a_stamp_file_in_its_directory():
    entry = resolved(dest=None, extract_dir="C:\\opt\\cni\\bin\\", url=URL)[0]
    assert entry["dest"] == "C:\\opt\\cni\\bin\\.kubewin-kubelet.exe.sha512"
    assert nfiles.expected_file_hash(entry) == hashlib.sha512(SHA.encode()).hexdigest()


def test_dest_and_extract_dir_are_exclusive():
    with pytest.raises(nfiles.HostFilesError, match="exactly one of dest"):
        resolved(extract_dir="C:\\x")


DIRS = [{"path": "C:\\k", "restricted": True}, {"path": "C:\\var\\log", "restricted": False}]
FILES = [{"path": "C:\\etc\\cni\\net.d\\10-flannel.conf", "content": "{}", "restricted": False, "secret": False},
         {"path": "C:\\etc\\kube-proxy\\kubeconfig", "content": "token: s3cret", "restricted": True, "secret": True}]


def test_fresh_node_gets_everything_in_one_sync():
    params, report = nfiles.plan(DIRS, resolved(), FILES, {"files": {}, "dirs": {}})
    assert [d["sddl"] for d in params["Dirs"]] == ["O:BA" + nfiles.RESTRICTED_DIR_SDDL, ""]
    assert params["Downloads"][0]["sha512"] == SHA
    secret = params["Files"][1]
    assert base64.b64decode(secret["content"]) == b"token: s3cret"
    assert secret["sddl"] == "O:BA" + nfiles.RESTRICTED_FILE_SDDL
    assert "s3cret" not in str(report) and report["after"][FILES[0]["path"]] == "{}"


def test_node_in_the_desired_state_needs_nothing():
    live = {"files": {"C:\\k\\kubelet.exe": SHA,
                      FILES[0]["path"]: hashlib.sha512(b"{}").hexdigest(),
                      FILES[1]["path"]: hashlib.sha512(b"token: s3cret").hexdigest()},
            "dirs": {"C:\\k": "O:BA" + nfiles.RESTRICTED_DIR_SDDL, "C:\\var\\log": "O:BAD:AI(A;OICIID;FA;;;BU)"},
            "acls": {"C:\\k\\kubelet.exe": "O:SYD:AI(A;ID;FA;;;SY)", FILES[0]["path"]: "O:BAD:AI(A;ID;FA;;;BU)",
                     FILES[1]["path"]: "O:BA" + nfiles.RESTRICTED_FILE_SDDL}}
    params, report = nfiles.plan(DIRS, resolved(), FILES, live)
    assert params is None and report["downloads"] == [] and report["directories"] == []


def test_wrong_binary_and_loose_acl_are_repaired():
    live = {"files": {"C:\\k\\kubelet.exe": hashlib.sha512(b"old").hexdigest()},
            "dirs": {"C:\\k": "O:BAD:AI(A;OICIID;FA;;;BU)"}}
    params, report = nfiles.plan(DIRS[:1], resolved(), [], live)
    assert report["downloads"] == ["C:\\k\\kubelet.exe"] and report["directories"] == ["C:\\k"]
    assert report["before"]["C:\\k"].startswith("owner: BA, access: D:AI")


def test_state_query_covers_every_managed_path():
    q = nfiles.state_query(DIRS, resolved(), FILES)
    assert q == {"Files": ["C:\\k\\kubelet.exe", FILES[0]["path"], FILES[1]["path"]],
                 "Dirs": ["C:\\k", "C:\\var\\log"], "Paths": [],
                 "Acls": ["C:\\k\\kubelet.exe", FILES[0]["path"], FILES[1]["path"]]}


def _converged(acl):
    return {"files": {FILES[1]["path"]: hashlib.sha512(b"token: s3cret").hexdigest()},
            "acls": {FILES[1]["path"]: acl if acl is None or acl.startswith("O:") else "O:BA" + acl}}


@pytest.mark.parametrize("acl", [
    None,                                                   # unreadable / never set
    "D:AI(A;ID;FA;;;SY)(A;ID;FA;;;BA)",                     # inherited, not protected
    "D:PAI(A;;FA;;;SY)(A;;FA;;;BA)(A;;0x1200a9;;;BU)",      # Users added back
    "D:PAI(A;;FA;;;SY)",                                    # Administrators removed
])
def test_a_secret_file_whose_access_rules_drifted_is_written_again(acl):
    params, report = nfiles.plan([], [], [FILES[1]], _converged(acl))
    assert params["Files"] == [{"path": FILES[1]["path"], "content": base64.b64encode(b"token: s3cret").decode(),
                                "sddl": "O:BA" + nfiles.RESTRICTED_FILE_SDDL}]
    assert report["files"] == [FILES[1]["path"]] and "s3cret" not in str(report)
    assert report["after"][FILES[1]["path"]] == "(secret), owner: BA, access: %s" % nfiles.RESTRICTED_FILE_SDDL


@pytest.mark.parametrize("acl", ["D:PAI(A;;FA;;;SY)(A;;FA;;;BA)", "D:P(A;;FA;;;BA)(A;;FA;;;SY)",
                                 "D:PAIAR(A;;FA;;;BA)(A;;FA;;;SY)"])
def test_a_secret_file_with_its_access_rules_in_any_order_or_auto_inherit_flag_is_left_alone(acl):
    assert nfiles.plan([], [], [FILES[1]], _converged(acl))[0] is None


def test_an_unrestricted_file_access_rules_are_not_compared_but_its_owner_is():
    live = {"files": {FILES[0]["path"]: hashlib.sha512(b"{}").hexdigest()},
            "acls": {FILES[0]["path"]: "O:BAD:AI(A;ID;0x1200a9;;;BU)"}}
    assert nfiles.plan([], [], [FILES[0]], live)[0] is None
    assert nfiles.state_query([], [], [FILES[0]])["Acls"] == [FILES[0]["path"]]


def test_directory_access_compares_the_granted_access_not_the_auto_inherit_flag():
    live = {"dirs": {"C:\\k": "O:BAD:P(A;OICI;FA;;;BA)(A;OICI;FA;;;SY)"}}
    assert nfiles.plan([DIRS[0]], [], [], live)[0] is None
    live = {"dirs": {"C:\\k": "O:BAD:AI(A;OICIID;FA;;;SY)(A;OICIID;FA;;;BA)"}}
    # drifted access rules: node_sync lists what is in it once it is secured (issue 20 N4)
    assert nfiles.plan([DIRS[0]], [], [], live)[0]["Dirs"] == [
        {"path": "C:\\k", "sddl": "O:BA" + nfiles.RESTRICTED_DIR_SDDL, "scan": True, "skip": []}]


USER = "S-1-5-21-1004336348-1177238915-682003330-1001"


def test_a_directory_a_user_owns_is_taken_over_even_with_the_right_access_rules():
    live = {"dirs": {"C:\\k": "O:%s%s" % (USER, nfiles.RESTRICTED_DIR_SDDL)}}
    params, report = nfiles.plan([DIRS[0]], [], [], live)
    assert params["Dirs"] == [{"path": "C:\\k", "sddl": "O:BA" + nfiles.RESTRICTED_DIR_SDDL, "scan": True,
                               "skip": []}]
    assert report["before"]["C:\\k"].startswith("owner: %s" % USER)
    assert report["after"]["C:\\k"] == "directory, owner: BA, access: %s" % nfiles.RESTRICTED_DIR_SDDL
    # SYSTEM as owner (a directory SYSTEM made) is fine as it is
    live = {"dirs": {"C:\\k": "O:SY" + nfiles.RESTRICTED_DIR_SDDL}}
    assert nfiles.plan([DIRS[0]], [], [], live)[0] is None


def test_directories_that_were_not_protected_are_listed_before_anything_is_written():
    live = {"dirs": {"C:\\k": "O:%sD:AI(A;OICIID;FA;;;BA)" % USER, "C:\\var\\log": None}}
    assert nfiles.scan_needed(DIRS, live) == ["C:\\k"]
    # listed by node_sync once secured (issue 20 N4: no second read in which a user's additions are adopted)
    assert [d["scan"] for d in nfiles.plan(DIRS, [], [], live)[0]["Dirs"]] == [True, False]
    assert nfiles.plan(DIRS, [], [], live)[0]["Owners"] == list(nfiles.TRUSTED_OWNERS)
    converged = {"dirs": {"C:\\k": "O:BA" + nfiles.RESTRICTED_DIR_SDDL}}
    assert nfiles.scan_needed(DIRS, converged) == []


def test_a_restricted_directory_that_is_a_link_is_refused():
    live = {"dirs": {"C:\\k": "O:BA" + nfiles.RESTRICTED_DIR_SDDL}, "links": ["C:\\k"]}
    with pytest.raises(nfiles.HostFilesError, match=r"C:\\k is a junction or symbolic link.*rmdir"):
        nfiles.plan([DIRS[0]], [], [], live)


def test_a_directory_above_a_restricted_one_owned_by_a_user_is_refused():
    dirs = [{"path": "C:\\etc\\kubernetes", "restricted": True}]
    assert nfiles.state_query(dirs, [], [])["Dirs"] == ["C:\\etc\\kubernetes", "C:\\etc"]
    live = {"dirs": {"C:\\etc": "O:%sD:AI(A;OICIID;FA;;;BA)" % USER}}
    with pytest.raises(nfiles.HostFilesError, match=r"C:\\etc belongs to S-1-5-21-.*takeown /F C:\\etc /A"):
        nfiles.plan(dirs, [], [], live)
    live = {"dirs": {"C:\\etc": "O:BAD:AI(A;OICIID;FA;;;BA)"}, "links": ["C:\\etc"]}
    with pytest.raises(nfiles.HostFilesError, match="C:\\\\etc is a junction"):
        nfiles.plan(dirs, [], [], live)
    live = {"dirs": {"C:\\etc": "O:BAD:AI(A;OICIID;FA;;;BA)(A;OICIID;0x1200a9;;;BU)"}}
    assert nfiles.plan(dirs, [], [], live)[0]["Dirs"] == [
        {"path": "C:\\etc\\kubernetes", "sddl": "O:BA" + nfiles.RESTRICTED_DIR_SDDL, "scan": False, "skip": []}]


def test_a_file_a_user_owns_is_discarded_and_written_again_even_with_the_right_content():
    have = hashlib.sha512(b"token: s3cret").hexdigest()
    live = {"files": {FILES[1]["path"]: have, "C:\\k\\kubelet.exe": SHA},
            "acls": {FILES[1]["path"]: "O:%s%s" % (USER, nfiles.RESTRICTED_FILE_SDDL),
                     "C:\\k\\kubelet.exe": "O:%sD:AI(A;ID;FA;;;BA)" % USER}}
    params, report = nfiles.plan([], resolved(), [FILES[1]], live)
    assert params["Discard"] == ["C:\\k\\kubelet.exe", FILES[1]["path"]]
    assert [d["dest"] for d in params["Downloads"]] == ["C:\\k\\kubelet.exe"]
    assert [f["path"] for f in params["Files"]] == [FILES[1]["path"]]
    assert "owner: %s" % USER in report["before"][FILES[1]["path"]] and "s3cret" not in str(report)
    # a link where a file goes is discarded too (the link itself)
    live = {"files": {FILES[1]["path"]: have}, "links": [FILES[1]["path"]],
            "acls": {FILES[1]["path"]: "O:BA" + nfiles.RESTRICTED_FILE_SDDL}}
    assert nfiles.plan([], [], [FILES[1]], live)[0]["Discard"] == [FILES[1]["path"]]


def test_reset_removes_what_exists_and_prunes_only_directories_left_empty():
    absent = ["C:\\k", "C:\\var\\lib\\kubelet", "C:\\etc\\cni"]
    prune = ["C:\\var\\lib", "C:\\var", "C:\\etc"]
    live = {"paths": {"C:\\k": "dir", "C:\\var\\lib\\kubelet": "dir", "C:\\etc\\cni": None,
                      "C:\\var\\lib": "dir", "C:\\var": "dir", "C:\\etc": "dir"}}
    params, report = nfiles.plan([], [], [], live, absent, prune)
    assert params["Remove"] == ["C:\\k", "C:\\var\\lib\\kubelet"]
    assert params["Prune"] == prune  # the node decides emptiness after removing
    assert "C:\\var\\lib" in report["removed"] and "C:\\etc" not in report["removed"]
    after = {"paths": {"C:\\k": None, "C:\\var\\lib\\kubelet": None, "C:\\etc\\cni": None,
                       "C:\\var\\lib": None, "C:\\var": None, "C:\\etc": "dir"}}
    nothing_left = dict(report, removed=[], before={}, after={})
    assert nfiles.plan([], [], [], after, absent, prune) == (None, nothing_left)


def dotnet_is_bypassed_by_list(url, bypass_list):
    """.NET Framework's WebProxy.IsMatchInBypassList, transcribed from the reference source
    (microsoft/referencesource, System/net/System/Net/webproxy.cs):

        string matchUriString = input.Scheme + "://" + input.Host + (!input.IsDefaultPort ? (":"+input.Port) : "" );
        ... _RegExBypassList[i].IsMatch(matchUriString)

    with each entry compiled as new Regex(entry, RegexOptions.IgnoreCase | RegexOptions.CultureInvariant)
    (UpdateRegExList). Regex.IsMatch finds a match anywhere (re.search). System.Uri lowercases the
    scheme and the host, writes an IPv6 host in brackets and reports IsDefaultPort for http:80 and
    https:443. Written out here on its own, not through the code under test."""
    import re
    import urllib.parse

    parts = urllib.parse.urlsplit(url)
    host = parts.hostname.lower()
    if ":" in host:
        host = "[" + host + "]"
    default = {"http": 80, "https": 443}[parts.scheme.lower()]
    port = parts.port if parts.port is not None else default
    match_uri_string = parts.scheme.lower() + "://" + host + (":%d" % port if port != default else "")
    return any(re.search(entry, match_uri_string, re.IGNORECASE) for entry in bypass_list)


# (no_proxy entry as users write it for Go programs and kubespray, URLs it bypasses, URLs it does not)
NO_PROXY_CASES = [
    ("mirror.corp", ["https://mirror.corp/release/kubelet.exe", "http://mirror.corp:8080/x", "https://a.mirror.corp/x",
                     "https://MIRROR.corp/x"],
     ["https://mirror.corp.evil.example/x", "https://notmirror.corp/x", "https://other.corp/x"]),
    (".corp", ["https://a.corp/x", "https://x.y.corp:8443/x"], ["https://corp.example/x", "https://a.acorp/x"]),
    ("*.corp", ["https://a.corp/x", "http://x.y.corp:8080/x"], ["https://corp.example/x", "https://a.acorp/x"]),
    ("10.0.0.1", ["http://10.0.0.1/x", "https://10.0.0.1:8443/x"],
     ["http://10.0.0.11/x", "http://110.0.0.1/x", "http://10.0.0.1.nip.example/x"]),
    ("10.0.0.0/8", ["http://10.1.2.3/x", "https://10.255.255.255:8443/x"],
     ["http://11.0.0.1/x", "http://110.1.2.3/x", "https://ten.corp/x"]),
    ("192.168.4.0/22", ["http://192.168.4.0/x", "http://192.168.7.9:8080/x"],
     ["http://192.168.8.1/x", "http://192.168.3.255/x", "http://192.168.40.1/x"]),
    ("mirror.corp:8443", ["https://mirror.corp:8443/x", "http://a.mirror.corp:8443/x"],
     ["https://mirror.corp/x", "https://mirror.corp:18443/x"]),
    ("mirror.corp:443", ["https://mirror.corp/x", "http://mirror.corp:443/x"], ["http://mirror.corp/x"]),
    ("mirror.corp:80", ["http://mirror.corp/x", "https://mirror.corp:80/x"], ["https://mirror.corp/x"]),
    ("10.0.0.1:8080", ["http://10.0.0.1:8080/x"], ["http://10.0.0.1/x"]),
    ("fd00::1", ["http://[fd00::1]/x", "https://[fd00::1]:8443/x"], ["http://[fd00::10]/x"]),
    ("[fd00::1]:8443", ["https://[fd00::1]:8443/x"], ["https://[fd00::1]/x"]),
    ("*", ["https://dl.k8s.io/release/x", "http://10.0.0.1:1/x"], []),
    ("  Mirror.CORP ", ["https://mirror.corp/x"], ["https://other.corp/x"]),
]


@pytest.mark.parametrize("entry, bypass, through", NO_PROXY_CASES, ids=[c[0].strip() for c in NO_PROXY_CASES])
def test_no_proxy_entries_bypass_under_dotnet_matching_of_full_uris(entry, bypass, through):
    patterns = _downloads.proxy_bypass_patterns([entry])
    assert len(patterns) == 1
    for url in bypass:
        assert dotnet_is_bypassed_by_list(url, patterns), (entry, url, patterns)
        assert _downloads.bypassed(url, [entry])  # the controller's checksum fetch decides the same
    for url in through:
        assert not dotnet_is_bypassed_by_list(url, patterns), (entry, url, patterns)
        assert not _downloads.bypassed(url, [entry])


def test_empty_entries_are_skipped_and_the_patterns_are_valid_dotnet_syntax():
    import re

    patterns = _downloads.proxy_bypass_patterns(["", "  ", "a.corp", "10.0.0.0/9"])
    assert len(patterns) == 2
    for p in patterns:
        re.compile(p)  # the constructs used (groups, alternation, classes, \d{1,3}) mean the same in .NET
        assert "(?P" not in p and "(?<" not in p


@pytest.mark.parametrize("entry, phrase", [
    ("http://mirror.corp", "not a URL"), ("mirror.corp/path", "not a network in CIDR form"),
    ("fd00::/64", "IPv6 network"), ("mirror.corp:99999", "out of range"), ("mir ror.corp", "not a URL"),
    ("a..corp", "not a host name"), ("*corp", "not a host name")])
def test_entries_of_no_known_form_are_refused(entry, phrase):
    with pytest.raises(_downloads.NoProxyEntryError, match=re.escape(phrase)):
        _downloads.proxy_bypass_patterns([entry])


def test_the_controller_fetches_a_bypassed_checksum_without_the_proxy(monkeypatch):
    import urllib.request

    seen = []

    class Opener:
        def __init__(self, handlers):
            self.handlers = handlers

        def open(self, url, timeout):
            proxies = [h.proxies for h in self.handlers if isinstance(h, urllib.request.ProxyHandler)]
            seen.append((url, proxies))
            raise OSError("stop")

    monkeypatch.setattr(urllib.request, "build_opener", lambda *h: Opener(h))
    for url in ("https://mirror.corp/x.sha512", "https://dl.k8s.io/x.sha512", "http://winmirror/x.sha512"):
        with pytest.raises(OSError):
            _downloads.fetch_checksum_file(url, "http://proxy.corp:3128", 5, no_proxy=[".corp"])
    assert seen == [("https://mirror.corp/x.sha512", [{}]),
                    ("https://dl.k8s.io/x.sha512", [{"http": "http://proxy.corp:3128",
                                                     "https": "http://proxy.corp:3128"}]),
                    ("http://winmirror/x.sha512", [{}])]  # dot-less: BypassOnLocal, as on the node


def test_pins_are_keyed_by_url_so_they_hold_for_one_version():
    old = {"url": "https://github.com/flannel-io/flannel/releases/download/v0.26.7/flanneld.exe", "dest": "C:\\k\\f"}
    new = dict(old, url=old["url"].replace("v0.26.7", "v0.27.0"))
    pinned = _downloads.pin_checksums([old, new], {old["url"]: "sha512:" + SHA, "flanneld.exe": SHA})
    assert pinned[0]["checksum"] == "sha512:" + SHA and "checksum" not in pinned[1]
    # a malformed pin is not a template error: it is named by its URL when the checksums are resolved
    bad = _downloads.pin_checksums([old], {old["url"]: "abc"})
    with pytest.raises(nfiles.HostFilesError, match="the checksum pinned for %s" % re.escape(old["url"])):
        _downloads.resolve_downloads(bad, fetch=None)


def test_json_content_decoded_by_the_templating_is_written_as_the_filter_wrote_it():
    # ansible-core 2.18 turns the net_conf filter's text (JSON without true/false/null) into a dict on its way
    # to the module; flanneld must still get JSON, byte for byte what 2.19 (which keeps the text) writes.
    from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import network as node_network

    text = node_network.net_conf("10.244.0.0/16", "vxlan", 4096, 4789)
    path = "C:\\etc\\kube-flannel\\net-conf.json"
    as_text = [{"path": path, "content": text, "restricted": False, "secret": False}]
    as_dict = [dict(as_text[0], content=json.loads(text))]
    params, report = nfiles.plan([], [], as_dict, {"files": {}, "dirs": {}})
    assert base64.b64decode(params["Files"][0]["content"]).decode() == text and report["after"][path] == text
    live = {"files": {path: hashlib.sha512(text.encode()).hexdigest()}, "dirs": {},
            "acls": {path: "O:BAD:AI(A;ID;FA;;;BU)"}}
    assert nfiles.plan([], [], as_dict, live)[0] is None
    assert nfiles.plan([], [], as_text, live)[0] is None


def test_a_directory_administrators_cannot_read_stops_with_takeown_not_taken_for_absent():
    """Review finding 1: an owner who denies Administrators READ_CONTROL makes the descriptor unreadable;
    files_state says so, and neither the ancestor check nor the restricted directory treat it as absent."""
    dirs = [{"path": "C:\\var\\lib\\kubelet", "restricted": True}]
    live = {"dirs": {"C:\\var": nfiles.UNREADABLE, "C:\\var\\lib": "O:BAD:AI(A;OICIID;FA;;;BA)"}}
    with pytest.raises(nfiles.HostFilesError,
                       match=r'C:\\var cannot be read by Administrators.*takeown /F "C:\\var" /A'):
        nfiles.plan(dirs, [], [], live)
    live = {"dirs": {"C:\\k": nfiles.UNREADABLE}}
    assert nfiles.scan_needed([DIRS[0]], live) == []  # nothing to list in what cannot be read
    with pytest.raises(nfiles.HostFilesError, match=r'C:\\k cannot be read by Administrators.*takeown /F "C:\\k" /A'):
        nfiles.plan([DIRS[0]], [], [], live)


def test_a_file_that_cannot_be_read_is_discarded_and_written_again():
    """Review finding 3: files_state's hash and owner of an unreadable file are 'unreadable'."""
    live = {"files": {FILES[0]["path"]: nfiles.UNREADABLE}, "acls": {FILES[0]["path"]: nfiles.UNREADABLE}}
    params, report = nfiles.plan([], [], [FILES[0]], live)
    assert params["Discard"] == [FILES[0]["path"]] and [f["path"] for f in params["Files"]] == [FILES[0]["path"]]
    assert report["before"][FILES[0]["path"]].startswith("unreadable, owner: None")


def test_a_link_at_a_destination_is_discarded_even_when_it_leads_nowhere():
    """Review findings 3 and 5: files_state never hashes a link (a dangling one reads as null), yet the link is
    in the way of File.Move; it is discarded (the link itself) and the diff says it was a link."""
    live = {"files": {"C:\\k\\kubelet.exe": None, FILES[0]["path"]: None},
            "links": ["C:\\k\\kubelet.exe", FILES[0]["path"]]}
    params, report = nfiles.plan([], resolved(), [FILES[0]], live)
    assert params["Discard"] == ["C:\\k\\kubelet.exe", FILES[0]["path"]]
    assert report["before"]["C:\\k\\kubelet.exe"].startswith("link")
    assert report["before"][FILES[0]["path"]].startswith("link")


@pytest.mark.parametrize("kind", ["download", "file"])
def test_a_directory_at_a_file_destination_stops_the_run_and_is_never_deleted(kind):
    """Review finding 5: File.Move would fail 'Cannot create a file when that file already exists'."""
    path = "C:\\k\\kubelet.exe" if kind == "download" else FILES[0]["path"]
    live = {"files": {path: nfiles.DIRECTORY}}
    args = (resolved(), []) if kind == "download" else ([], [FILES[0]])
    with pytest.raises(nfiles.HostFilesError, match=r"%s is a directory, where kubewin.nodes puts a file.*move it"
                       % re.escape(path)):
        nfiles.plan([], *args, live)


def test_the_link_message_says_a_volume_mount_point_looks_the_same_and_what_to_do():
    """Review finding 4: a disk mounted on C:\\var\\lib\\kubelet carries the junctions' reparse tag."""
    live = {"dirs": {"C:\\k": "O:BA" + nfiles.RESTRICTED_DIR_SDDL}, "links": ["C:\\k"]}
    with pytest.raises(nfiles.HostFilesError, match=r'volume mount point.*mountvol "C:\\k" /D'):
        nfiles.plan([DIRS[0]], [], [], live)


def test_the_pods_directory_lets_container_users_read_and_write_their_volumes():
    """Issue 20 N1: C:\\var\\lib\\kubelet\\pods gets its own protected rules (Users read, add in subfolders,
    creators own what they make); the kubelet's directory stays Administrators and SYSTEM only."""
    dirs = [{"path": "C:\\var\\lib\\kubelet", "restricted": True},
            {"path": "C:\\var\\lib\\kubelet\\pods", "restricted": True}]
    sddls = [d["sddl"] for d in nfiles.plan(dirs, [], [], {"dirs": {}})[0]["Dirs"]]
    assert sddls == ["O:BA" + nfiles.RESTRICTED_DIR_SDDL, "O:BA" + nfiles.PODS_DIR_SDDL]
    assert "(A;OICI;0x1200a9;;;BU)" in nfiles.PODS_DIR_SDDL
    live = {"dirs": {d["path"]: s for d, s in zip(dirs, sddls, strict=True)}}
    assert nfiles.plan(dirs, [], [], live)[0] is None


def test_reset_makes_each_directory_it_walks_the_collections_first():
    """Issue 20 N3: node_sync gets the owner and access rules to give each directory before it lists it."""
    params = nfiles.plan([], [], [], {"paths": {"C:\\k": "dir"}}, absent=["C:\\k"])[0]
    assert params["Remove"] == ["C:\\k"] and params["RootSddl"] == "O:BA" + nfiles.RESTRICTED_DIR_SDDL


def test_the_pods_directory_is_never_scanned_and_a_scan_of_the_kubelet_directory_does_not_enter_it():
    """Review R1: a node upgraded from the previous version has pods inheriting the kubelet directory's rules; the
    kubelet's ..data links and containers' files there must not stop the run."""
    dirs = [{"path": "C:\\var\\lib\\kubelet", "restricted": True},
            {"path": "C:\\var\\lib\\kubelet\\pods", "restricted": True}]
    previous = "O:BAD:AI(A;OICIID;FA;;;SY)(A;OICIID;FA;;;BA)"
    live = {"dirs": {"C:\\var\\lib\\kubelet": "O:BA" + nfiles.RESTRICTED_DIR_SDDL,
                     "C:\\var\\lib\\kubelet\\pods": previous}}
    assert nfiles.scan_needed(dirs, live) == []
    params = nfiles.plan(dirs, [], [], live)[0]
    assert params["Dirs"] == [{"path": "C:\\var\\lib\\kubelet\\pods", "sddl": "O:BA" + nfiles.PODS_DIR_SDDL,
                               "scan": False, "skip": []}]
    # a taken-over node whose kubelet directory has loose rules: scanned, but not below pods
    live["dirs"]["C:\\var\\lib\\kubelet"] = "O:BAD:AI(A;OICIID;FA;;;BA)(A;CIID;0x4;;;BU)"
    assert nfiles.scan_needed(dirs, live) == ["C:\\var\\lib\\kubelet"]
    assert nfiles.plan(dirs, [], [], live)[0]["Dirs"][0]["skip"] == ["c:\\var\\lib\\kubelet\\pods"]


# --- SHA-256 archives (containerd publishes containerd-<v>-windows-amd64.tar.gz.sha256sum, issue 23) ---
SHA256 = "ab" * 32
CTRD = "https://github.com/containerd/containerd/releases/download/v2.1.4/containerd-2.1.4-windows-amd64.tar.gz"


def test_a_sha256_archive_fetches_its_sha256sum_file_and_is_stamped_with_it():
    fetched = []

    def fetch(url):
        fetched.append(url)
        return "%s  containerd-2.1.4-windows-amd64.tar.gz\n" % SHA256.upper()

    got = _downloads.resolve_downloads([{"url": CTRD, "extract_dir": "C:\\Program Files\\containerd\\",
                                         "algorithm": "sha256"}], fetch)
    assert fetched == [CTRD + ".sha256sum"]
    assert got == [{"url": CTRD, "extract_dir": "C:\\Program Files\\containerd", "algorithm": "sha256",
                    "sha256": SHA256,
                    "dest": "C:\\Program Files\\containerd\\.kubewin-containerd-2.1.4-windows-amd64.tar.gz.sha512"}]
    # the stamp holds the SHA-256; files_state compares the stamp's SHA-512
    assert nfiles.expected_file_hash(got[0]) == hashlib.sha512(SHA256.encode()).hexdigest()
    # win_host_files takes preflight's answer (resolve_checksums) as it is (no fetch)
    preflight = _downloads.resolve_checksums([{"url": CTRD, "extract_dir": "C:\\Program Files\\containerd",
                                               "algorithm": "sha256"}], fetch)
    assert _downloads.resolve_downloads(preflight, lambda url: pytest.fail("fetched %s" % url)) == got


def test_a_sha256_pin_and_the_wrong_length_and_a_plain_file_are_told_apart():
    pinned = _downloads.resolve_checksums([{"url": CTRD, "extract_dir": "C:\\c", "algorithm": "sha256",
                                            "checksum": "sha256:" + SHA256}], pytest.fail)
    assert pinned[0]["sha256"] == SHA256
    with pytest.raises(nfiles.HostFilesError, match=r"is not a SHA-256 checksum \(64 hex digits\)"):
        _downloads.resolve_checksums([{"url": CTRD, "extract_dir": "C:\\c", "algorithm": "sha256",
                                       "checksum": "0" * 128}], None)
    with pytest.raises(nfiles.HostFilesError, match="a sha256 checksum is taken for an archive"):
        _downloads.resolve_checksums([{"url": CTRD, "dest": "C:\\c\\x.tgz", "algorithm": "sha256",
                                       "checksum": SHA256}], None)
