# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Preflight: every download named, allowed, reachable and with a checksum, before any host changes.

PRIVATE to the collection: no compatibility promise outside it.
"""

from __future__ import annotations

import re
import urllib.parse

from ansible_collections.kubewin.nodes.plugins.module_utils import _versions as versions
from ansible_collections.kubewin.nodes.plugins.plugin_utils import _downloads
from ansible_collections.kubewin.nodes.plugins.plugin_utils._downloads import redact_url, url_kind
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import files as host_files
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import runtime_cni
from ansible_collections.kubewin.nodes.plugins.plugin_utils._preflight.findings import VARIABLES, Findings, finding

# Where each CNI plugin release is downloaded from: the variable that names its base URL (download_bases).
CNI_BASE_VARIABLES = {"cni": "kubewin_cni_download_url", "flannel_cni": "kubewin_flannel_cni_download_url",
                      "sdn_cni": "kubewin_sdn_cni_download_url"}


def cni_plugin_downloads(cni_dirs, container_runtime, cni_versions, download_bases):
    """The CNI plugin archives the runtime needs, unpacked where it looks for plugins (``cni_dirs``: win_host_facts'
    ``cni[runtime]``); none while those directories are unknown (check_cni_dirs then stops with the reason) or
    no versions are given."""
    if not runtime_cni.dirs_known(cni_dirs) or not cni_versions:
        return []
    bases = {source: (download_bases or {}).get(variable) or "" for source, variable in CNI_BASE_VARIABLES.items()}
    return runtime_cni.cni_downloads(cni_dirs["bin_dir"], container_runtime, cni_versions, bases)


def check_downloads(downloads, download_bases=None, allow_insecure=False, checksums=None):
    """Where the node's files come from: every base URL and download is a URL the node can fetch,
    plain http only when kubewin_allow_insecure_downloads says so, and every pin is keyed by the URL
    of a download and holds a SHA-512."""
    f = Findings("downloads")
    insecure_var = VARIABLES["allow_insecure_downloads"]
    pins_var = VARIABLES["checksums"]
    insecure_fix = ("the file and its checksum then come over one unauthenticated connection, so anyone on the "
                    "path can replace both: use https://, or set %s: true to accept that (an isolated lab, a mirror "
                    "on a network you trust)" % insecure_var)
    bases = dict((k, v) for k, v in (download_bases or {}).items() if v)
    named = []
    for var in sorted(bases):
        kind = url_kind(bases[var])
        named.append((str(bases[var]), var))
        if kind == "invalid":
            f.fail(var, "%s %r is not a download location: write https://host/path, or a file share as "
                        "\\\\server\\share\\path" % (var, redact_url(bases[var])))
        elif kind == "insecure" and not allow_insecure:
            f.fail(var, "%s %s is plain %s; %s"
                   % (var, redact_url(bases[var]), urllib.parse.urlsplit(str(bases[var])).scheme, insecure_fix))
        if kind != "invalid" and redact_url(bases[var]) != str(bases[var]):
            f.fail(var, "%s %s carries a password (kubespray's files_repo may, as its offline docs show); the download "
                        "URLs are shown in the node role's --diff output and task results, so the password would be "
                        "too: give the Windows nodes a location that needs none (e.g. a read-only path of the "
                        "mirror) and set %s to it" % (var, redact_url(bases[var]), var))
    for d in downloads or []:
        for url in (d.get("url"), d.get("checksum_url")):
            if not url or any(url.startswith(base) for base, dummy in named):
                continue  # judged with its base URL above
            kind = url_kind(url)
            if kind == "invalid":
                f.fail(insecure_var, "download %r is not a URL the node can fetch" % redact_url(url))
            elif kind == "insecure" and not allow_insecure:
                f.fail(insecure_var, "download %s is plain http; %s" % (redact_url(url), insecure_fix))
    urls = [d.get("url") for d in downloads or []]
    for key in sorted(str(k) for k in (checksums or {})):
        if "://" not in key and not key.startswith("\\\\"):
            matches = [u for u in urls if u and host_files.windows_basename(u.split("?", 1)[0]) == key]
            f.fail(pins_var, "%s key %r is a file name; pins are keyed by the full download URL, so a pin holds "
                             "for one version of the file only: %s"
                   % (pins_var, key, "use %r" % matches[0] if matches else
                      "use the URL the node downloads it from (the base URL, the version and the file name)"))
        elif key not in urls:
            f.warn(pins_var, "%s has a pin for %s, which this node does not download (another version, or a "
                             "different base URL?); it is not used" % (pins_var, redact_url(key)))
    return f.result()


def _fetch_reason(error):
    """A transport error in a few words: 'HTTP 404 Not Found', 'no such file', or the error's text."""
    code = getattr(error, "code", None)
    if code is not None:
        return "HTTP %s %s" % (code, getattr(error, "reason", "") or "")
    reason = getattr(error, "reason", None)
    if isinstance(reason, FileNotFoundError) or isinstance(error, FileNotFoundError):
        return "no such file"
    return str(reason or error) or error.__class__.__name__


def unavailable_downloads(downloads, fetch, probe):
    """Every URL the node needs that cannot be had, in download order, as [(url, reason)]: each file,
    and its checksum file unless the checksum is pinned. All of them, not the first: a mirror made from
    kubespray's offline list (contrib/offline/generate_list.sh: Linux files, SHA-256 pins, no .sha512)
    lacks the Windows files and their checksum files, and the operator adds them in one go.
    ``fetch(url)`` returns a checksum file's text; ``probe(url)`` raises when the file cannot be fetched.
    Locations the controller cannot reach itself (a UNC or drive path) are left to the node."""
    out = []
    for d in downloads or []:
        url = d.get("url")
        if not url or url_kind(url) == "invalid" or re.match(r"^(\\\\|[A-Za-z]:\\)", str(url)):
            continue
        if not d.get("checksum"):
            checksum_url = _downloads.checksum_url(d)
            algorithm = d.get("algorithm") or "sha512"
            try:
                _downloads.parse_checksum(fetch(checksum_url), checksum_url, algorithm)
            except host_files.HostFilesError as e:
                out.append((checksum_url, "not a %s checksum file: %s" % (algorithm.upper().replace("SHA", "SHA-"),
                                                                          e)))
            except Exception as e:  # any transport error: the URL and the answer
                out.append((checksum_url, _fetch_reason(e)))
        try:
            probe(url)
        except Exception as e:
            out.append((url, _fetch_reason(e)))
    return out


def _tag(version):
    """containerd's and crictl's release tag of a version variable (written without the v)."""
    return "v%s" % str(version).lstrip("v") if version else None


def mismatched_pins(downloads, fetch):
    """A SHA-256 pinned in kubewin_checksums that the published checksum file contradicts (containerd and crictl
    publish theirs beside each archive): the pin or the mirror's file is wrong, and the node would refuse the archive
    only after the run changed the host. A checksum file that cannot be read says nothing here."""
    out = []
    for d in downloads or []:
        if (d.get("algorithm") or "sha512") == "sha512" or not d.get("checksum"):
            continue
        try:
            pinned = _downloads.parse_checksum(d["checksum"], "pin", d["algorithm"])
            url = _downloads.checksum_url(d)
            published = _downloads.parse_checksum(fetch(url), url, d["algorithm"])
        except Exception:  # a malformed pin is reported by download_failures; an unreadable file says nothing
            continue
        if published != pinned:
            out.append(finding("downloads", VARIABLES["checksums"], "checksum mismatch for %s: %s pins %s %s, its "
                               "published checksum file %s says %s; correct the pin (or the file on the mirror)"
                               % (redact_url(d["url"]), VARIABLES["checksums"], d["algorithm"], pinned,
                                  redact_url(url), published)))
    return out


def unavailable_failure(unavailable, inputs):
    """ONE finding for everything unavailable: which URLs must be added to the download location (or
    pinned, for a checksum file), one per line, and which version variable a release in them comes
    from, since a release that does not exist looks exactly like a file the mirror lacks."""
    kube = versions.kube_release(versions.effective_kube_version(inputs.get("kube_version"),
                                                                 inputs.get("server_version")))
    variable, hints = VARIABLES["checksums"], []
    values = inputs.get("values") or {}
    for var, tag in ((VARIABLES["kube_version"], kube), (VARIABLES["flannel_version"], inputs.get("flannel_version")),
                     (VARIABLES["cni_plugins_version"], inputs.get("cni_plugins_version")),
                     (VARIABLES["containerd_version"], _tag(values.get(VARIABLES["containerd_version"]))),
                     (VARIABLES["crictl_version"], _tag(values.get(VARIABLES["crictl_version"])))):
        if tag and any("/%s/" % tag in url for url, dummy in unavailable):
            hints.append("the URLs with /%s/ hold release %s (from %s): check that %s is a published release at "
                         "that base URL" % (tag, tag, var, tag))
            if variable == VARIABLES["checksums"]:
                variable = var
    lines = "".join("\n    %s (%s)" % (redact_url(url), reason) for url, reason in unavailable)
    message = ("%d download URL(s) the Windows nodes need cannot be fetched; add them to the download location "
               "(an air-gapped mirror made from kubespray's offline file list has no Windows files and no .sha512 "
               "files), or, for a checksum file, pin the file's SHA-512 in %s instead (the base URLs are "
               "kubewin_*_download_url, or kubespray's dl_k8s_io_url, github_url and files_repo):%s"
               % (len(unavailable), VARIABLES["checksums"], lines))
    if hints:
        message += "\n  " + "; ".join(hints)
    return finding("downloads", variable, message)


def resolved_downloads(downloads, fetch):
    """(the downloads with their SHA-512, as win_host_files takes them; failures): the one place a
    download's checksum is decided (pinned, else its checksum file). ``fetch`` should be the one
    download_failures used (fetch_once), so no checksum file is read twice."""
    try:
        return _downloads.resolve_checksums(downloads or [], fetch), []
    except host_files.HostFilesError as e:
        return None, [finding("downloads", VARIABLES["checksums"], str(e))]


def download_failures(downloads, fetch, probe, inputs):
    """The findings about the node's downloads that need the network (the controller fetches the
    checksum files and the first byte of each file): a malformed pinned checksum, by its URL, and ONE
    finding listing every URL that cannot be had (unavailable_failure)."""
    out = []
    for d in downloads or []:
        if d.get("checksum"):
            try:
                _downloads.parse_checksum(d["checksum"], "the checksum pinned for %s" % redact_url(d["url"]),
                                          d.get("algorithm") or "sha512")
            except host_files.HostFilesError as e:
                out.append(finding("downloads", VARIABLES["checksums"], str(e)))
    out.extend(mismatched_pins(downloads, fetch))
    unavailable = unavailable_downloads(downloads, fetch, probe)
    if unavailable:
        out.append(unavailable_failure(unavailable, inputs))
    return out
