"""`make demo`: scale up two simulated Windows nodes into the running lab, then show the nodes.

Everything on the control-plane side is real (kube-apiserver, controller-manager, scheduler built
from Kubernetes' own Go modules, bootstrapped by kubeadm); the Windows hosts are simulated.
"""

import os
import subprocess
import sys

import scenario

root = os.path.join(scenario.RUN, "demo")
print("Inventory and simulated hosts: %s" % root)
sc = scenario.Scenario(root, nodes=2, kubewin_node_name="demo-{{ inventory_hostname }}")
print("Running: ansible-playbook playbooks/scale_up.yml (takes a minute or two)")
rc, doc, text = sc.run("scale_up.yml")
if rc != 0:
    print("\n".join(scenario.failures(doc)) or text[-4000:])
    sys.exit(rc)
for host, stats in doc["stats"].items():
    print("  %-10s ok=%d changed=%d failed=%d" % (host, stats["ok"], stats["changed"], stats["failures"]))
kubectl = os.path.join(scenario.LAB, "_cache", scenario.lab_version(), "bin", "kubectl")
subprocess.run([kubectl, "--kubeconfig", scenario.ADMIN_CONF, "get", "nodes", "-o", "wide"], check=True)
print("\nRe-run it to see changed=0, or remove the nodes: ANSIBLE_CONFIG=%s/ansible.cfg "
      "ansible-playbook playbooks/reset.yml -e skip_confirmation=true" % root)
