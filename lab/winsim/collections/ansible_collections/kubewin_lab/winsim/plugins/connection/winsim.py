# Test-lab only: the connection to a simulated Windows host.
from __future__ import annotations

DOCUMENTATION = r"""
name: winsim
short_description: Run ansible.windows stand-in modules against a simulated Windows host (test lab only)
description:
  - A local connection that resolves modules like a Windows connection does (C(.ps1) first, so
    C(setup), C(slurp), C(stat) map to their C(ansible.windows) counterparts), always pipelines them,
    and runs them on the controller with the simulated host's identity and state directory.
  - Every module execution is appended to C(<root>/hosts/<host>/ops.log) as C(<time> <module> [<script id>]),
    the script id being that of the kubewin.nodes script the module runs (the id in its header line), e.g.
    C(win_powershell node_facts); several distinct ids in one payload are logged as C(batch:<id>,<id>).
  - Modules that are not
    C(ansible.windows) or C(community.windows) stand-ins, and raw commands, fail as they would not run on
    Windows either.
options:
  winsim_root:
    description: Directory holding C(hosts/<host>/) state.
    type: str
    vars: [{name: winsim_root}]
    env: [{name: KUBEWIN_SIM_ROOT}]
    required: true
  winsim_host:
    description: Name of the simulated host (its state directory).
    type: str
    vars: [{name: winsim_host}, {name: inventory_hostname}]
"""

import os  # noqa: E402 (DOCUMENTATION first, as in every Ansible plugin)
import re  # noqa: E402
import shlex  # noqa: E402
import time  # noqa: E402

from ansible.errors import AnsibleConnectionFailure, AnsibleError  # noqa: E402
from ansible.plugins.connection.local import Connection as LocalConnection  # noqa: E402

# The AnsiballZ wrapper names the module it runs in plain text.
_MODULE_FQN = re.compile(r"ansible_collections\.([a-z0-9_]+)\.([a-z0-9_]+)\.plugins\.modules\.([a-z0-9_]+)"
                         r"|ansible\.(?:modules|legacy)\.([a-z0-9_]+)")
# A kubewin.nodes script's header line (winsim_scripts.HEADER_PREFIX) inside the payload: the module arguments are
# embedded as repr(json.dumps(...)) by ansible-core 2.18 and 2.19 alike, which leaves this text as it is.
_SCRIPT_ID = re.compile(r"# kubewin\.nodes script: ([A-Za-z0-9_]+)")
ALLOWED_COLLECTIONS = {("ansible", "windows"), ("community", "windows")}
# What Ansible itself runs through the shell around modules (temporary directories, home lookup).
# lab/winsim: the lab's PowerShell interpreter (package ``ps``) that the win_powershell stand-in runs.
_LAB_LIB = os.path.abspath(os.path.join(os.path.dirname(__file__), *[".."] * 6))
_HOUSEKEEPING = re.compile(r"^\s*(?:/bin/sh -c )?'?\s*"
                           r"(?:\( umask 77 && mkdir -p|echo ~|rm -f -r |chmod |test -e |setfacl |chown )")


def _script_column(text):
    """' <id>' of the kubewin.nodes script a payload carries, ' batch:<id>,<id>' for several, '' for none."""
    ids = list(dict.fromkeys(_SCRIPT_ID.findall(text)))
    if not ids:
        return ""
    return " " + (ids[0] if len(ids) == 1 else "batch:" + ",".join(ids))


class Connection(LocalConnection):
    transport = "kubewin_lab.winsim.winsim"
    module_implementation_preferences = (".ps1", ".exe", "")
    always_pipeline_modules = True
    has_pipelining = True

    def _state_dir(self):
        root = self.get_option("winsim_root")
        host = self.get_option("winsim_host") or self._play_context.remote_addr
        return os.path.abspath(root), host

    def _check_network(self, root, host, module):
        """Right after a vSwitch change (winsim_hns: the first L2Bridge/Overlay network on an adapter, or the
        removal of the last) nothing reaches the host: the next module execution fails as WinRM's would,
        before it runs (the task is unreachable)."""
        from ansible_collections.ansible.windows.plugins.module_utils import winsim_hns, winsim_host
        with winsim_host.Host(root, host).open() as h:
            blip = winsim_hns.take_blip(h.state)
        if blip:
            raise AnsibleConnectionFailure(
                "winsim: %s unreachable: its adapter %s was just %s a Hyper-V virtual switch (HNS network %s), as "
                "WinRM sees it: HTTPConnectionPool(host='%s', port=5985): Max retries exceeded with url: /wsman "
                "(Caused by ConnectTimeoutError) [module %s not run]"
                % (host, blip.get("adapter"), "released from" if blip.get("removed") else "bound to",
                   blip.get("network"), host, module))

    def exec_command(self, cmd, in_data=None, sudoable=True):
        root, host = self._state_dir()
        hostdir = os.path.join(root, "hosts", host)
        if in_data is None:
            if _HOUSEKEEPING.search(cmd):
                return super(Connection, self).exec_command(cmd, in_data=in_data, sudoable=sudoable)
            return 1, b"", ("winsim: raw commands do not run on simulated Windows hosts: %s" % cmd[:200]).encode()
        if self.become is not None:
            # A Windows host runs modules through the PowerShell exec wrapper, which accepts only the runas
            # become method and refuses the others before anything runs: ansible-core 2.19
            # executor/powershell/module_manifest.py ("Become plugin sudo is not supported by the Windows
            # exec wrapper. Make sure to set the become method to runas."); 2.18 plugins/become/__init__.py
            # _build_success_command ("The powershell shell family is incompatible with the sudo become
            # plugin"). runas itself (a logon as become_user) is not simulated, so it is refused too: never
            # more lenient than Windows. Nothing is logged as run.
            method = str(getattr(self.become, "_load_name", None) or self.become.name).rsplit(".", 1)[-1]
            raise AnsibleError("winsim: Become plugin %s is not supported by the Windows exec wrapper. Make sure "
                               "to set the become method to runas.%s"
                               % (method, " (runas is not simulated)" if method == "runas" else ""))
        text = in_data.decode("utf-8", "replace") if isinstance(in_data, bytes) else in_data
        m = _MODULE_FQN.search(text)
        if m is None:
            return 1, b"", b"winsim: could not identify the module in the payload"
        if m.group(4) or (m.group(1), m.group(2)) not in ALLOWED_COLLECTIONS:
            name = m.group(4) and "ansible.builtin." + m.group(4) or ".".join(m.group(1, 2, 3))
            return 1, b"", ("winsim: %s is not a Windows module; it cannot run on Windows host %s"
                            % (name, host)).encode()
        if not os.path.isdir(hostdir):
            raise AnsibleConnectionFailure("winsim: no simulated host state in %s (run make_inventory)" % hostdir)
        self._check_network(root, host, m.group(3))
        with open(os.path.join(hostdir, "ops.log"), "a") as log:
            log.write("%.3f %s%s\n" % (time.time(), m.group(3), _script_column(text)))
        env = "KUBEWIN_SIM_HOST=%s KUBEWIN_SIM_ROOT=%s KUBEWIN_SIM_LIB=%s " % (
            shlex.quote(host), shlex.quote(root), shlex.quote(_LAB_LIB))
        return super(Connection, self).exec_command(env + cmd, in_data=in_data, sudoable=sudoable)
