"""Where upstream publishes the Windows node artifacts, and what the lab mirror serves.

One table for the lab and the roles: the mirror is laid out like the upstream release trees, so a
role default (a base URL) is switched to the mirror by changing the base only.

Kubernetes (base https://dl.k8s.io/release, role variable kubewin_kubernetes_download_url):
    {version}/bin/windows/amd64/{kubelet,kubeadm,kube-proxy,kubectl,kube-log-runner}.exe
    checksum: {file}.sha512, the hex digest only
    (kube-log-runner is a node binary: kubernetes hack/lib/golang.sh node_targets lists
    staging/src/k8s.io/component-base/logs/kube-log-runner, so KUBE_NODE_BINARIES_WIN and the
    kubernetes-node-windows-amd64.tar.gz archive hold kube-log-runner.exe)
flannel (base https://github.com/flannel-io/flannel/releases/download, kubewin_flannel_download_url):
    {version}/flanneld.exe
    checksum: none published upstream, so pin it (kubewin_checksums); the mirror adds
    flanneld.exe.sha512 ("<hex>  flanneld.exe") for convenience
CNI plugins (base https://github.com/containernetworking/plugins/releases/download, kubewin_cni_download_url):
    {version}/cni-plugins-windows-amd64-{version}.tgz
    members: ./ then one ./<name>.exe per line of the tag's plugins/windows_only.txt (v1.6.2: ./host-local.exe
    ./win-bridge.exe ./win-overlay.exe; flannel left in v1.0.0, containernetworking/plugins PR #633), and
    ./README.md, ./LICENSE (the release workflow copies them into bin/ before tarring it)
    checksum: {file}.sha512, sha512sum format "<hex>  <file>"
flannel CNI plugin (base https://github.com/flannel-io/cni-plugin/releases/download,
kubewin_flannel_cni_download_url):
    {version}/cni-plugin-flannel-windows-amd64-{version}.tgz   ({version} like v1.7.1-flannel1)
    members: flannel-amd64.exe (no ./ prefix: scripts/package.sh tars the one file by name)
    checksum: {file}.sha512, sha512sum format "<hex>  <file>"
Windows container networking (base https://github.com/microsoft/windows-container-networking/releases/download,
kubewin_sdn_cni_download_url):
    {tag}/windows-container-networking-cni-amd64-{version}.zip   ({version}: the tag without its "v" for the
    tags built by the release workflow of v0.2.2 to v0.3.1, version="${ref#refs/tags/v}"; the tag itself before)
    members: Makefile `release` = `zip -jrmv release/<zip> out` after `all`: sdnbridge.exe sdnoverlay.exe nat.exe,
    and for v0.2.2/v0.3.1 generateCNIConfig.ps1 (`all` copies scripts/autogencniconf/generateCNIConfig.ps1 to out/);
    -j keeps no directory entries
    checksum: {file}.sha512 from `shasum -a 512 ./release/<zip>`, so "<hex>  ./release/<zip>"

NSSM (full URL https://nssm.cc/release/nssm-2.24.zip, role variable kubewin_nssm_download_url):
    nssm/release/nssm-2.24.zip
    members: nssm-2.24/win64/nssm.exe nssm-2.24/win32/nssm.exe (the real zip also holds the sources
    and README/ChangeLog, left out of the stand-in)
    checksum: none published upstream, so pin it (kubewin_checksums["nssm-2.24.zip"]); the mirror
    adds nssm-2.24.zip.sha512 ("<hex>  nssm-2.24.zip") for convenience

windows_exporter (base https://github.com/prometheus-community/windows_exporter/releases/download,
kubewin_windows_exporter_download_url):
    {tag}/windows_exporter-{tag without v}-amd64.exe   (its release workflow, .github/workflows/release.yml: "$Version =
    git describe --tags" minus the v, output/windows_exporter-$Version-$Arch.exe; the .msi beside it is not used)
    checksum: upstream publishes sha256sums.txt only (`promu checksum output`), so pin the SHA-512
    (kubewin_checksums); the mirror adds windows_exporter-<version>-amd64.exe.sha512 ("<hex>  <file>") for convenience
containerd (base https://github.com/containerd/containerd/releases/download, kubewin_containerd_download_url):
    v{version}/containerd-{version}-windows-amd64.tar.gz
    members: bin/ then bin/ctr.exe bin/containerd.exe bin/containerd-stress.exe bin/containerd-shim-runhcs-v1.exe
    (Makefile COMMANDS=ctr containerd containerd-stress, Makefile.windows adds .exe and WINDOWS_SHIM; pack_release:
    tar -czf releases/<RELEASE>.tar.gz -C releases/<RELEASE> bin; v2.1.4)
    checksum: {file}.sha256sum from `sha256sum <RELEASE>.tar.gz > <RELEASE>.tar.gz.sha256sum` ("<hex>  <file>")
crictl (base https://github.com/kubernetes-sigs/cri-tools/releases/download, kubewin_crictl_download_url):
    v{version}/crictl-v{version}-windows-amd64.tar.gz
    members: crictl.exe
    checksum: {file}.sha256 (the release page lists one beside each archive; the stand-in writes the hex only, the
    stricter reading: the collection must not need the file name after it)

Sources (upstream build scripts): containernetworking/plugins scripts/release.sh (``tar -C bin -caf
... .`` then ``sha512sum $f > $f.sha512``) with plugins/windows_only.txt (v1.6.2: host-local, win-bridge,
win-overlay); flannel-io/cni-plugin scripts/package.sh (``tar ... flannel-amd64.exe``,
``sha512sum``). flannel's releases carry flanneld.exe without a checksum file.
"""

K8S_FILES = ("kubelet.exe", "kubeadm.exe", "kube-proxy.exe", "kubectl.exe", "kube-log-runner.exe")
# `git show <tag>:plugins/windows_only.txt` of containernetworking/plugins, per tag the mirror serves.
CNI_WINDOWS_ONLY = {
    "v1.6.2": ("plugins/ipam/host-local", "plugins/main/windows/win-bridge", "plugins/main/windows/win-overlay"),
}
# Besides the plugins, containernetworking/plugins' release workflow packs these two (windows_releases job).
CNI_RELEASE_EXTRAS = ("README.md", "LICENSE")
FLANNEL_CNI_FILES = ("flannel-amd64.exe",)
# microsoft/windows-container-networking: tags whose release workflow strips the "v" (and whose `all`
# target adds generateCNIConfig.ps1), and the Makefile's plugin targets in build order.
SDN_CNI_WORKFLOW_TAGS = ("v0.2.2", "v0.3.1")
SDN_CNI_PLUGINS = ("sdnbridge.exe", "sdnoverlay.exe", "nat.exe")
CONTAINERD_MEMBERS = ("bin/ctr.exe", "bin/containerd.exe", "bin/containerd-stress.exe",
                      "bin/containerd-shim-runhcs-v1.exe")
NSSM_VERSION = "2.24"
NSSM_ARCHIVE = "nssm-%s.zip" % NSSM_VERSION
NSSM_MEMBERS = ("nssm-%s/win64/nssm.exe" % NSSM_VERSION, "nssm-%s/win32/nssm.exe" % NSSM_VERSION)

# Upstream base URL -> the same tree under the mirror (path prefixes, no leading slash).
BASES = {
    "kubernetes": ("https://dl.k8s.io/release", "release"),
    "flannel": ("https://github.com/flannel-io/flannel/releases/download", "flannel-io/flannel/releases/download"),
    "cni": ("https://github.com/containernetworking/plugins/releases/download",
            "containernetworking/plugins/releases/download"),
    "flannel_cni": ("https://github.com/flannel-io/cni-plugin/releases/download",
                    "flannel-io/cni-plugin/releases/download"),
    "sdn_cni": ("https://github.com/microsoft/windows-container-networking/releases/download",
                "microsoft/windows-container-networking/releases/download"),
    "windows_exporter": ("https://github.com/prometheus-community/windows_exporter/releases/download",
                         "prometheus-community/windows_exporter/releases/download"),
    # The role variable is the zip's full URL, so "base" here is the whole URL.
    "nssm": ("https://nssm.cc/release/" + NSSM_ARCHIVE, "nssm/release/" + NSSM_ARCHIVE),
    "containerd": ("https://github.com/containerd/containerd/releases/download",
                   "containerd/containerd/releases/download"),
    "crictl": ("https://github.com/kubernetes-sigs/cri-tools/releases/download",
               "kubernetes-sigs/cri-tools/releases/download"),
}

# Role variables holding those bases (roles/kubewin/defaults/main.yml).
ROLE_VARS = {
    "kubernetes": "kubewin_kubernetes_download_url",
    "flannel": "kubewin_flannel_download_url",
    "cni": "kubewin_cni_download_url",
    "flannel_cni": "kubewin_flannel_cni_download_url",
    "sdn_cni": "kubewin_sdn_cni_download_url",
    "nssm": "kubewin_nssm_download_url",                 # the full URL of the zip
    "windows_exporter": "kubewin_windows_exporter_download_url",
    "containerd": "kubewin_containerd_download_url",
    "crictl": "kubewin_crictl_download_url",
}

# Versions served besides the lab's Kubernetes versions and the role defaults (env overrides).
# containerd besides the role default: the release test_scenarios' containerd upgrade installs first (a 2.2 release,
# which containerd's RELEASES.md recommends for Kubernetes 1.36 as 2.2.0+)
DEFAULT_CONTAINERD_VERSIONS = ("2.2.7",)
DEFAULT_FLANNEL_VERSIONS = ("v0.26.7", "v0.27.4")          # role default; the lab's flannel image tag
DEFAULT_CNI_VERSIONS = ("v1.6.2",)                         # role default
DEFAULT_FLANNEL_CNI_VERSIONS = ("v1.7.1-flannel1",)        # role default; the lab's flannel-cni-plugin tag
DEFAULT_SDN_CNI_VERSIONS = ("v0.3.1",)                     # role default
DEFAULT_WINDOWS_EXPORTER_VERSIONS = ("v0.31.8",)           # role default


def kubernetes_path(version, name):
    return "%s/%s/bin/windows/amd64/%s" % (BASES["kubernetes"][1], version, name)


def flannel_path(version):
    return "%s/%s/flanneld.exe" % (BASES["flannel"][1], version)


def cni_archive(version):
    return "cni-plugins-windows-amd64-%s.tgz" % version


def cni_path(version):
    return "%s/%s/%s" % (BASES["cni"][1], version, cni_archive(version))


def cni_files(version):
    """The plugin files of containernetworking/plugins' Windows archive of ``version`` (never guessed)."""
    if version not in CNI_WINDOWS_ONLY:
        raise KeyError("the mirror knows plugins/windows_only.txt of %s only, not %s: add the tag's list to "
                       "CNI_WINDOWS_ONLY" % (", ".join(sorted(CNI_WINDOWS_ONLY)), version))
    # .github/workflows/release.yaml (windows_releases): `cp README.md LICENSE bin/`, then tar of bin/ whole
    return tuple(p.rsplit("/", 1)[1] + ".exe" for p in CNI_WINDOWS_ONLY[version]) + CNI_RELEASE_EXTRAS


def sdn_cni_archive(version):
    v = version[1:] if version in SDN_CNI_WORKFLOW_TAGS else version
    return "windows-container-networking-cni-amd64-%s.zip" % v


def sdn_cni_files(version):
    return SDN_CNI_PLUGINS + (("generateCNIConfig.ps1",) if version in SDN_CNI_WORKFLOW_TAGS else ())


def sdn_cni_path(version):
    return "%s/%s/%s" % (BASES["sdn_cni"][1], version, sdn_cni_archive(version))


def flannel_cni_archive(version):
    return "cni-plugin-flannel-windows-amd64-%s.tgz" % version


def flannel_cni_path(version):
    return "%s/%s/%s" % (BASES["flannel_cni"][1], version, flannel_cni_archive(version))


def containerd_archive(version):
    return "containerd-%s-windows-amd64.tar.gz" % version


def containerd_path(version):
    return "%s/v%s/%s" % (BASES["containerd"][1], version, containerd_archive(version))


def crictl_archive(version):
    return "crictl-v%s-windows-amd64.tar.gz" % version


def crictl_path(version):
    return "%s/v%s/%s" % (BASES["crictl"][1], version, crictl_archive(version))


def nssm_path():
    return BASES["nssm"][1]


def windows_exporter_file(version):
    return "windows_exporter-%s-amd64.exe" % version.lstrip("v")


def windows_exporter_path(version):
    return "%s/%s/%s" % (BASES["windows_exporter"][1], version, windows_exporter_file(version))
