# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where kubewin.nodes puts things on a Windows host, in one place (the layout kubeadm and the
sig-windows-tools scripts use: binaries in C:\\k, kubeadm's files in C:\\etc\\kubernetes and
C:\\var\\lib\\kubelet). Shipped with the modules that name a path in their messages (k8s_node)."""

from __future__ import annotations

import posixpath

INSTALL_DIR = "C:\\k"
KUBELET_EXE = INSTALL_DIR + "\\kubelet.exe"
KUBE_LOG_RUNNER_EXE = INSTALL_DIR + "\\kube-log-runner.exe"

# kubeadm join writes these (kubeadm cmd/kubeadm/app/constants: KubeletKubeConfigFileName, ...).
KUBERNETES_DIR = "C:\\etc\\kubernetes"
KUBELET_CONF = KUBERNETES_DIR + "\\kubelet.conf"
BOOTSTRAP_CONF = KUBERNETES_DIR + "\\bootstrap-kubelet.conf"
# kubeadm's default caCertPath on Windows (apis/kubeadm/v1beta4/defaults_windows.go DefaultCACertPath); the cluster's
# certificatesDir may put the CA elsewhere (kubespray: /etc/kubernetes/ssl), see kubeadm_windows_path.
CA_CERT = KUBERNETES_DIR + "\\pki\\ca.crt"

KUBELET_DIR = "C:\\var\\lib\\kubelet"
KUBELET_CONFIG = KUBELET_DIR + "\\config.yaml"
KUBELET_PKI = KUBELET_DIR + "\\pki"
KUBEADM_FLAGS = KUBELET_DIR + "\\kubeadm-flags.env"
# The kubelet's --config-dir: drop-in KubeletConfigurations merged over --config in lexical order (kubernetes v1.37.2
# cmd/kubelet/app/server.go mergeKubeletConfigurations; kubeadm rewrites only config.yaml, so a drop-in survives
# kubeadm join and kubeadm upgrade node).
KUBELET_DROPIN_DIR = KUBELET_DIR + "\\config.d"

# The services' logs: kube-log-runner writes the kubelet's and kube-proxy's output, NSSM flanneld's. Each in
# C:\\var\\log\\<service>\\<service>.log, where the kubelet's node log query looks for a service that has no event log
# provider (kubernetes v1.37.2 pkg/kubelet/kubelet_server_journal.go: nodeLogDir "/var/log/", which Go resolves on
# the kubelet's drive, C:; heuristicsCopyFileLogs tries <service>, <service>.log, <service>/<service>.log).
LOG_ROOT = "C:\\var\\log"
LOG_DIRS = {name: "%s\\%s" % (LOG_ROOT, name) for name in ("kubelet", "kube-proxy", "flanneld")}
LOG_FILES = {name: "%s\\%s.log" % (d, name) for name, d in LOG_DIRS.items()}
# containerd's --log-file, when the collection installed containerd (plugin_utils/_host/containerd.py)
CONTAINERD_LOG_DIR = LOG_ROOT + "\\containerd"
CONTAINERD_LOG_FILE = CONTAINERD_LOG_DIR + "\\containerd.log"

FLANNEL_DIR = "C:\\etc\\kube-flannel"
FLANNEL_NET_CONF = FLANNEL_DIR + "\\net-conf.json"
# flanneld's --subnet-file default, /run/flannel/subnet.env (flannel main.go), on the service's drive.
FLANNEL_SUBNET_FILE = "C:\\run\\flannel\\subnet.env"
KUBE_PROXY_DIR = "C:\\etc\\kube-proxy"
# host-local's address reservations, one directory per network (containernetworking/plugins host-local).
HOST_LOCAL_DATA_DIR = "C:\\var\\lib\\cni\\networks"


def kubeadm_windows_path(path):
    """A path of the cluster's kubelet configuration as kubeadm join writes it on Windows: an absolute Unix path
    gains the drive of kubeadm.exe, C:\\k's (kubernetes cmd/kubeadm/app/componentconfigs/kubelet_windows.go
    mutatePaths: filepath.Join(drive, path), which also cleans "." and ".."); any other path is kept."""
    path = str(path or "")
    if path.startswith("\\") and not path.startswith("\\\\"):
        # rooted without a drive: kubeadm keeps it, and Windows resolves it on the current drive (a service's is
        # the system drive)
        return INSTALL_DIR[:2] + path
    if not path.startswith("/"):
        return path or None
    parts = [p for p in posixpath.normpath(path).split("/") if p]
    return INSTALL_DIR[:2] + "\\" + "\\".join(parts)
