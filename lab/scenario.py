"""Run the collection's playbooks against the lab: the real control plane, the loopback mirror and
simulated Windows hosts. Used by the end-to-end tests, `make demo` and the benchmark."""

import json
import os
import subprocess
import sys

LAB = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(LAB)
# The lab the tests run against: the default one (lab/_run) or, with LAB_FLAVOUR=kubespray, the control plane as
# kubespray builds it (lab/_run-kubespray; lab/bin/lab-up).
FLAVOUR = os.environ.get("LAB_FLAVOUR") or "default"
RUN = os.path.join(LAB, "_run" if FLAVOUR == "default" else "_run-" + FLAVOUR)
ADMIN_CONF = os.path.join(RUN, "admin.conf")
if LAB not in sys.path:
    sys.path.insert(0, LAB)

from mirror import layout  # noqa: E402
from winsim import core, make_inventory  # noqa: E402

MIRROR = "http://127.0.0.1:%s" % (os.environ.get("LAB_MIRROR_PORT") or 18080)


def lab_version():
    with open(os.path.join(RUN, "VERSION")) as f:
        return f.read().strip()


def lab_vars(**overrides):
    """Inventory variables that point the roles at the lab (kubespray names where they exist)."""
    values = {
        "kube_version": lab_version(),
        "kube_pods_subnet": "10.244.0.0/16",
        "kube_service_addresses": "10.96.0.0/12",
        "flannel_backend_type": "vxlan",
        "flannel_vxlan_vni": 4096,
        "flannel_vxlan_port": 4789,
        "kubewin_kubeconfig": ADMIN_CONF,
        # kubespray's name: where the API server listens. The lab's controlPlaneEndpoint is on 127.0.0.1 (like
        # kubespray's local load balancer), so the nodes use the first control-plane host's ip and this port.
        "kube_apiserver_port": int(os.environ.get("LAB_APISERVER_PORT") or 16443),
        "kubewin_kubernetes_download_url": "%s/%s" % (MIRROR, layout.BASES["kubernetes"][1]),
        "kubewin_flannel_download_url": "%s/%s" % (MIRROR, layout.BASES["flannel"][1]),
        "kubewin_cni_download_url": "%s/%s" % (MIRROR, layout.BASES["cni"][1]),
        "kubewin_flannel_cni_download_url": "%s/%s" % (MIRROR, layout.BASES["flannel_cni"][1]),
        "kubewin_sdn_cni_download_url": "%s/%s" % (MIRROR, layout.BASES["sdn_cni"][1]),
        "kubewin_nssm_download_url": "%s/%s" % (MIRROR, layout.BASES["nssm"][1]),
        "kubewin_windows_exporter_download_url": "%s/%s" % (MIRROR, layout.BASES["windows_exporter"][1]),
        "kubewin_containerd_download_url": "%s/%s" % (MIRROR, layout.BASES["containerd"][1]),
        "kubewin_crictl_download_url": "%s/%s" % (MIRROR, layout.BASES["crictl"][1]),
        # The loopback mirror is plain http: allowed explicitly, as preflight refuses it otherwise.
        "kubewin_allow_insecure_downloads": True,
        "kubewin_ready_timeout": 120,
        # The simulated vSwitch blip takes the next remote operation, not seconds (winsim_hns): no settling time.
        "kubewin_vswitch_settle_seconds": 1,
    }
    values.update(overrides)
    # None means unset: the variable is left out of the inventory (e.g. no kube_version anywhere).
    return {k: v for k, v in values.items() if v is not None}


class Scenario(object):
    """N simulated Windows hosts in an inventory with the lab control plane as kube_control_plane."""

    def __init__(self, root, nodes=2, profile="ws2022-containerd", second_adapter=None, profiles=None,
                 host_vars=None, **variables):
        """profiles: {host: profile} for hosts that differ from ``profile``; host_vars: {host: {var: value}}
        (inventory host variables, above the group_vars/all that ``variables`` go to); second_adapter: one
        adapter name for every host or {host: name} (make_inventory.build)."""
        self.root = make_inventory.build(str(root), nodes=nodes, profile=profile, python=sys.executable,
                                         second_adapter=second_adapter, profiles=profiles, host_vars=host_vars)
        self.hosts = ["win-%d" % (i + 1) for i in range(nodes)]
        self.set_vars(**variables)
        if "{{ inventory_hostname }}" in variables.get("kubewin_node_name", ""):
            self.forget_nodes(variables["kubewin_node_name"])

    def forget_nodes(self, name_template):
        """Delete Node objects an earlier, interrupted run of the same scenario left in the shared lab."""
        from kubernetes import client, config

        core = client.CoreV1Api(config.new_client_from_config(config_file=ADMIN_CONF))
        for host in self.hosts:
            try:
                core.delete_node(name_template.replace("{{ inventory_hostname }}", host))
            except client.exceptions.ApiException as e:
                if e.status != 404:
                    raise

    def set_vars(self, **variables):
        group_vars = os.path.join(self.root, "group_vars")
        os.makedirs(group_vars, exist_ok=True)
        with open(os.path.join(group_vars, "all.yml"), "w") as f:
            json.dump(lab_vars(**variables), f, indent=2)  # JSON is YAML

    def set_host_vars(self, host, **variables):
        """Replace a host's variables file (inventory host_vars/<host>.yml, above group_vars and the
        inventory's host entries); a value None leaves the variable out."""
        host_vars = os.path.join(self.root, "host_vars")
        os.makedirs(host_vars, exist_ok=True)
        with open(os.path.join(host_vars, host + ".yml"), "w") as f:
            json.dump({k: v for k, v in variables.items() if v is not None}, f, indent=2)

    def run(self, playbook="scale_up.yml", *args, timeout=900, callback="ansible.builtin.json"):
        """ansible-playbook with the JSON callback (or another: doc is then None); returns (rc, doc, text of
        stdout+stderr)."""
        env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(self.root, "ansible.cfg"),
                   ANSIBLE_STDOUT_CALLBACK=callback, ANSIBLE_NOCOLOR="1",
                   ANSIBLE_DEPRECATION_WARNINGS="0")
        cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
               os.path.join(REPO, "playbooks", playbook)] + list(args)
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        try:
            doc = json.loads(p.stdout[p.stdout.index("{"):])
        except ValueError:
            doc = None
        return p.returncode, doc, p.stdout + p.stderr

    def dump(self, host):
        return core.dump(self.root, host)

    def ops(self, host):
        """Module executions on the host (remote operations), in order."""
        return core.ops(self.root, host)

    def ops_detailed(self, host):
        """(time, module, script id or None) per module execution on the host, in order (core.ops_detailed)."""
        return core.ops_detailed(self.root, host)

    def reset_ops(self, host):
        core.reset_ops(self.root, host)

    def control_plane_ops(self):
        """(time, module) per module execution on kube_control_plane (core.control_plane_ops)."""
        return core.control_plane_ops(self.root)

    def reset_control_plane_ops(self):
        core.reset_control_plane_ops(self.root)


def failures(doc):
    """'host: task: msg' for every failed task result (with a loop's failed items and a failed command's output
    tail), for assertion messages."""
    out = []
    for play in (doc or {}).get("plays", []):
        for task in play["tasks"]:
            for host, res in task["hosts"].items():
                if res.get("failed") or res.get("unreachable"):
                    msg = res.get("msg")
                    items = [str(r.get("msg")) for r in res.get("results") or [] if r.get("failed")]
                    if items:  # a loop's result says only "One or more items failed"
                        msg = "%s: %s" % (msg, "; ".join(items))
                    if res.get("rc") not in (None, 0):  # a command's "non-zero return code" says nothing more
                        tail = (res.get("stderr") or res.get("stdout") or "")[-1500:]
                        msg = "%s (rc %s): %s" % (msg, res["rc"], tail)
                    out.append("%s: %s: %s" % (host, task["task"]["name"], msg))
    return out


def changed_tasks(doc):
    """{host: [task names that changed]}."""
    out = {}
    for play in (doc or {}).get("plays", []):
        for task in play["tasks"]:
            for host, res in task["hosts"].items():
                if res.get("changed"):
                    out.setdefault(host, []).append(task["task"]["name"])
    return out


def published_image(tagged):
    """The stand-in registry's digest reference (name@sha256:...) of a published `name:tag`
    (controlplane/published-images.txt, which kwok's stages read: controlplane/kwok_stages.py)."""
    with open(os.path.join(LAB, "controlplane", "published-images.txt")) as f:
        for line in f:
            if line.startswith(tagged + "@"):
                return tagged.rsplit(":", 1)[0] + "@" + line.strip().split("@", 1)[1]
    raise KeyError("%s is not in controlplane/published-images.txt" % tagged)
