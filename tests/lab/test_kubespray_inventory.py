"""kubespray inventories as kubespray users have them, run as kubespray is run (ansible-playbook -b):
the current layout (group_vars/all/*.yml and group_vars/k8s_cluster/*.yml directories, no static
k8s_cluster group: kubespray >= v2.27, inventory/sample and docs/ansible/inventory.md) and the older one
(static [k8s_cluster:children], single files group_vars/all.yml and group_vars/k8s_cluster.yml,
kube_version with a v), with kubespray's proxy and download variables (roles/kubespray_defaults/defaults/
main/download.yml, inventory/sample/group_vars/all/{all,offline}.yml) and one Windows group added."""

import http.server
import json
import os
import stat
import sys
import threading
import urllib.error
import urllib.request

import scenario
import yaml
from mirror import ForwardProxy, layout

# The lab cluster's networks (not kubespray's defaults), where kubespray keeps them: group_vars/k8s_cluster,
# which the Windows hosts do not see (they take them from the cluster; these are only compared with it).
# The lab's controlPlaneEndpoint is loopback, like kubespray's with its local load balancer: the Windows hosts
# join through the first control-plane host's `ip` and kube_apiserver_port, as kubespray's own join does.
CLUSTER = {"kube_pods_subnet": "10.244.0.0/16", "kube_service_addresses": "10.96.0.0/12",
           "kube_network_plugin": "flannel",
           "kube_apiserver_port": scenario.lab_vars()["kube_apiserver_port"]}
FLANNEL = {"flannel_backend_type": "vxlan", "flannel_vxlan_vni": 4096, "flannel_vxlan_port": 4789}
# A proxy nothing listens on: a download sent there fails.
DEAD_PROXY = "http://127.0.0.1:9"


def write(path, values, comment=""):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("---\n%s" % ("".join("# %s\n" % line for line in comment.splitlines())))
        f.write(json.dumps(values, indent=2) + "\n" if values else "")  # JSON is YAML


def sudo_shim(directory):
    """A stand-in for passwordless sudo on the control-plane host (this machine runs the lab as root and has
    no sudo): it logs how it was called, drops sudo's options (-H -S -n, -u USER, -p PROMPT) and runs the
    command. Ansible's sudo plugin calls it as `sudo -H -S -n -u root /bin/sh -c '...'`."""
    os.makedirs(directory, exist_ok=True)
    log = os.path.join(directory, "sudo.log")
    path = os.path.join(directory, "sudo")
    with open(path, "w") as f:
        f.write('#!/bin/sh\necho "$*" >> %s\n'
                'while [ $# -gt 0 ]; do case "$1" in -u|-p|-g) shift 2;; -*) shift;; *) break;; esac; done\n'
                'exec "$@"\n' % log)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return log


def windows_group(sc, extra=None):
    """The Windows hosts' connection (the lab's simulated hosts) and ansible_become: false, as the sample has it."""
    with open(os.path.join(sc.root, "inventory.yml")) as f:
        generated = yaml.safe_load(f)["all"]["children"]["kube_windows_nodes"]
    values = dict(generated["vars"], ansible_become=False, **(extra or {}))
    return generated["hosts"], values


def ini(sc, static_k8s_cluster):
    hosts, dummy = windows_group(sc)
    lines = ["[kube_control_plane]",
             "localhost ansible_connection=local ansible_python_interpreter=%s ip=127.0.0.1" % sys.executable, "",
             "[etcd:children]", "kube_control_plane", "", "[kube_node]", ""]
    if static_k8s_cluster:
        lines += ["[k8s_cluster:children]", "kube_control_plane", "kube_node", ""]
    lines += ["[kube_windows_nodes]"] + ["%s ansible_host=%s" % (h, v["ansible_host"]) for h, v in hosts.items()]
    return "\n".join(lines) + "\n"


def lab_settings(**extra):
    """What only the lab needs: its kubeconfig, its plain-http mirror allowed, a short Ready timeout."""
    return dict({"kubewin_kubeconfig": scenario.ADMIN_CONF, "kubewin_allow_insecure_downloads": True,
                 "kubewin_ready_timeout": 120, "kubewin_deployment_mode": "services"}, **extra)


def run(sc, playbook, inventory, sudo_dir, *args):
    """ansible-playbook -b, with the sudo stand-in first on PATH. The lab's control-plane host is this
    machine, where Ansible connects as root already: it skips become when the become user is the connection
    user (ActionBase._low_level_execute_command) unless become_allow_same_user is set, as it is here so the
    control-plane tasks really go through sudo as on a kubespray host reached as a normal user."""
    saved = dict(os.environ)
    os.environ["PATH"] = "%s:%s" % (sudo_dir, saved["PATH"])
    os.environ["ANSIBLE_BECOME_ALLOW_SAME_USER"] = "true"
    try:
        return sc.run(playbook, "-b", "-i", inventory, *args)
    finally:
        os.environ.clear()
        os.environ.update(saved)


def sudo_calls(log):
    if not os.path.exists(log):
        return []
    with open(log) as f:
        return [line for line in f if line.strip()]


class FilesRepo(object):
    """kubespray's files_repo on loopback, laid out as its offline docs advise (the origin's host name as top
    directory: /dl.k8s.io/release/..., /github.com/<org>/<repo>/releases/download/..., /nssm.cc/release/...),
    serving the lab mirror's files; ``missing(path)`` says which it lacks (404), like a mirror made from
    kubespray's offline list, which has no Windows files and no .sha512."""

    def __init__(self, missing=lambda path: False):
        self.missing = missing
        self.requests = []
        repo = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, fmt, *args):
                pass

            def do_GET(self):
                repo.requests.append(self.path)
                upstream = repo.upstream_path(self.path)
                if upstream is None or repo.missing(self.path):
                    self.send_error(404)
                    return
                try:
                    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
                    with opener.open("%s/%s" % (scenario.MIRROR, upstream), timeout=30) as r:
                        body, status = r.read(), r.status
                except urllib.error.HTTPError as e:
                    body, status = e.read(), e.code
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):  # preflight reads the first byte only
                    pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @staticmethod
    def upstream_path(path):
        """/<origin host>/<upstream path> -> the lab mirror's path for the same file."""
        for upstream, mirror_path in layout.BASES.values():
            prefix = "/" + upstream.split("://", 1)[1]
            rest = path[len(prefix):]
            if path.startswith(prefix) and rest[:1] in ("", "/", "."):  # NSSM's base is the zip: zip.sha512
                return mirror_path + rest
        return None

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def assert_ready_and_clean_up(core, sc, inventory, sudo_dir, names):
    for name in names:
        node = core.read_node(name)
        assert any(c.type == "Ready" and c.status == "True" for c in node.status.conditions or []), name
        assert node.status.node_info.kubelet_version == scenario.lab_version()
    rc, doc, text = run(sc, "reset.yml", inventory, sudo_dir, "-e", "skip_confirmation=true")
    assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]


def test_current_kubespray_layout_with_b_and_kubespray_proxy_and_download_variables(tmp_path, api):
    """kubespray's current layout, unchanged but for the Windows group: no kube_version anywhere, network
    settings in group_vars/k8s_cluster/, proxies in group_vars/all/all.yml, dl_k8s_io_url/github_url in
    group_vars/all/offline.yml. Run with -b: the control-plane host's tasks go through sudo, the Windows
    hosts' do not. Every download (node and controller) goes through kubespray's http_proxy (the bases are
    http://), none through its https_proxy; re-run changes nothing; reset leaves the lab as it was."""
    core, dummy = api
    sc = scenario.Scenario(tmp_path / "lab", nodes=1)
    name = "ksa-{{ inventory_hostname }}"
    sc.forget_nodes(name)
    inv = tmp_path / "mycluster"
    (inv / "inventory.ini").parent.mkdir(parents=True)
    (inv / "inventory.ini").write_text(ini(sc, static_k8s_cluster=False))
    proxy = ForwardProxy(scenario.MIRROR)
    try:
        write(str(inv / "group_vars" / "all" / "all.yml"),
              {"http_proxy": proxy.url, "https_proxy": DEAD_PROXY, "no_proxy": "localhost,127.0.0.1,svc"},
              "kubespray's group_vars/all/all.yml: its proxy settings")
        write(str(inv / "group_vars" / "all" / "offline.yml"),
              {"dl_k8s_io_url": "http://mirror.kubewin.test", "github_url": "http://mirror.kubewin.test"},
              "kubespray's group_vars/all/offline.yml: download origins (a mirror reached through the proxy)")
        write(str(inv / "group_vars" / "all" / "kubewin.yml"), lab_settings(
            kubewin_nssm_download_url="http://mirror.kubewin.test/%s" % layout.BASES["nssm"][1]))
        write(str(inv / "group_vars" / "k8s_cluster" / "k8s-cluster.yml"), CLUSTER)
        write(str(inv / "group_vars" / "k8s_cluster" / "k8s-net-flannel.yml"), FLANNEL)
        hosts, values = windows_group(sc, {"kubewin_node_name": name})
        write(str(inv / "group_vars" / "kube_windows_nodes.yml"), values)
        sudo_dir = str(tmp_path / "bin")
        log = sudo_shim(sudo_dir)

        rc, doc, text = run(sc, "scale_up.yml", str(inv / "inventory.ini"), sudo_dir)
        assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
        assert sudo_calls(log), "the control-plane host's tasks did not become root"
        kubelet = "http://mirror.kubewin.test/%s" % layout.kubernetes_path(scenario.lab_version(), "kubelet.exe")
        # once per host and run: preflight fetches it and the node role uses the checksum preflight returned
        assert proxy.requests.count(kubelet + ".sha512") == 1
        assert kubelet in proxy.requests and any(r.endswith("/flanneld.exe") for r in proxy.requests)

        rc, doc, text = run(sc, "scale_up.yml", str(inv / "inventory.ini"), sudo_dir)
        assert rc == 0 and scenario.changed_tasks(doc) == {}, scenario.changed_tasks(doc)
        assert_ready_and_clean_up(core, sc, str(inv / "inventory.ini"), sudo_dir, ["ksa-win-1"])
    finally:
        proxy.close()


def test_older_layout_air_gapped_files_repo_lacking_the_windows_files_then_scale_up(tmp_path, api):
    """kubespray's older layout: static [k8s_cluster:children], group_vars/all.yml and group_vars/k8s_cluster.yml
    as single files, kube_version: v1.x.y in k8s_cluster. An air-gapped files_repo (kubespray's offline layout)
    made from kubespray's offline list has no Windows files and no .sha512: preflight stops with one message
    listing every URL to add, before anything changes; once they are added, scale-up with -b works, with
    kubespray's proxies set (the loopback files_repo goes around them)."""
    core, dummy = api
    sc = scenario.Scenario(tmp_path / "lab", nodes=1)
    name = "kso-{{ inventory_hostname }}"
    sc.forget_nodes(name)
    inv = tmp_path / "oldcluster"
    inv.mkdir()
    (inv / "inventory.ini").write_text(ini(sc, static_k8s_cluster=True))
    lacking = {"yes": True}
    windows_file = ("/windows/amd64/", ".sha512", "/flanneld.exe", "windows", "nssm")
    repo = FilesRepo(missing=lambda path: lacking["yes"] and any(w in path for w in windows_file))
    try:
        write(str(inv / "group_vars" / "all.yml"),
              dict(lab_settings(), files_repo=repo.url, http_proxy=DEAD_PROXY, https_proxy=DEAD_PROXY),
              "kubespray's older single-file group_vars/all.yml")
        write(str(inv / "group_vars" / "k8s_cluster.yml"),
              dict(CLUSTER, kube_version=scenario.lab_version(), **FLANNEL),
              "kubespray's older single-file group_vars/k8s_cluster.yml (kube_version with a v, as before v2.28)")
        hosts, values = windows_group(sc, {"kubewin_node_name": name})
        write(str(inv / "group_vars" / "kube_windows_nodes.yml"), values)
        sudo_dir = str(tmp_path / "bin")
        log = sudo_shim(sudo_dir)
        before = sc.dump("win-1")

        rc, doc, text = run(sc, "scale_up.yml", str(inv / "inventory.ini"), sudo_dir)
        assert rc != 0
        messages = [m for m in scenario.failures(doc) if "cannot be fetched" in m]
        assert len(messages) == 1, scenario.failures(doc) or text[-3000:]
        listed = [line.strip().split(" (")[0] for line in messages[0].split("\n") if line.startswith("    ")]
        release = "%s/dl.k8s.io/release/%s/bin/windows/amd64/" % (repo.url, scenario.lab_version())
        for exe in ("kubelet.exe", "kubeadm.exe", "kube-log-runner.exe", "kube-proxy.exe"):
            assert release + exe in listed and release + exe + ".sha512" in listed, listed
        assert any(u.startswith(repo.url + "/github.com/flannel-io/flannel/releases/download/") for u in listed)
        assert repo.url + "/nssm.cc/release/nssm-2.24.zip" in listed
        assert any(u.startswith(repo.url + "/github.com/containernetworking/plugins/") for u in listed)
        assert len(listed) == len(set(listed)), listed
        assert "Preflight failed on win-1" in messages[0] and "kubewin_checksums" in messages[0]
        assert sc.dump("win-1") == before

        lacking["yes"] = False  # the operator added them
        rc, doc, text = run(sc, "scale_up.yml", str(inv / "inventory.ini"), sudo_dir)
        assert rc == 0, "\n".join(scenario.failures(doc)) or text[-3000:]
        assert sudo_calls(log)
        assert any(r.startswith("/dl.k8s.io/release/") for r in repo.requests)
        assert_ready_and_clean_up(core, sc, str(inv / "inventory.ini"), sudo_dir, ["kso-win-1"])
    finally:
        repo.close()


def test_b_without_ansible_become_false_stops_before_any_change_naming_the_fix(tmp_path, api):
    """The Windows group without ansible_become: false, run with -b: one message per host naming the host
    and the fix, from the first task on the host, and nothing changed on it."""
    sc = scenario.Scenario(tmp_path / "lab", nodes=1, kubewin_node_name="ksb-{{ inventory_hostname }}")
    sudo_dir = str(tmp_path / "bin")
    sudo_shim(sudo_dir)
    before = sc.dump("win-1")
    rc, doc, text = run(sc, "scale_up.yml", os.path.join(sc.root, "inventory.yml"), sudo_dir)
    assert rc != 0
    messages = "\n".join(scenario.failures(doc))
    assert "become is on for Windows host win-1 with the sudo method" in messages, messages or text[-3000:]
    assert "set ansible_become: false for the Windows hosts' group" in messages
    assert sc.dump("win-1") == before
