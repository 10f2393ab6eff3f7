# Test-lab only: ansible's local connection, counting module executions on the control-plane host.
from __future__ import annotations

DOCUMENTATION = r"""
name: counted_local
short_description: The local connection, logging every module execution (test lab only)
description:
  - Behaves exactly as C(ansible.builtin.local); in addition every module execution through it (pipelined or
    not, delegated tasks and each loop item included) appends a line C(<time> <module>) to
    C(<root>/control-plane.log), the module named as C(namespace.collection.name) (C(ansible.builtin.name) for
    ansible-core's own).
  - Tasks that start no module (set_fact, debug, assert, action plugins that never run one) are not logged, as the log
    counts the Python starts the control-plane host pays for.
  - Without a root (neither variable nor environment set) nothing is logged.
  - Its options are C(ansible.builtin.local)'s (those of ansible-core 2.19, which 2.18 never reads) and
    O(winsim_root); without them a task with become fails asking for C(become_success_timeout).
options:
  winsim_root:
    description: Directory that receives C(control-plane.log).
    type: str
    vars: [{name: winsim_root}]
    env: [{name: KUBEWIN_SIM_ROOT}]
  become_success_timeout:
    description: As C(ansible.builtin.local)'s.
    type: int
    default: 10
    vars: [{name: ansible_local_become_success_timeout}]
  become_strip_preamble:
    description: As C(ansible.builtin.local)'s.
    type: bool
    default: true
    vars: [{name: ansible_local_become_strip_preamble}]
extends_documentation_fragment:
  - connection_pipelining
"""

import os  # noqa: E402 (DOCUMENTATION first, as in every Ansible plugin)
import re  # noqa: E402
import time  # noqa: E402

from ansible.plugins.connection.local import Connection as LocalConnection  # noqa: E402

# The module the AnsiballZ wrapper runs: ansible-core 2.19 passes module_fqn='...', 2.18 runpy's mod_name='...'.
_WRAPPER_FQN = re.compile(r"(?:module_fqn|mod_name)=['\"]([A-Za-z0-9_.]+)['\"]")
# A non-pipelined execution: "<interpreter> <tmp>/AnsiballZ_<name>.py" (the interpreter, maybe after an
# environment string), not the housekeeping around it (chmod, rm, setfacl, chown of the same path).
_AZ_PATH = re.compile(r"(\S+/AnsiballZ_([A-Za-z0-9_]+)\.py)")
_HOUSEKEEPING = re.compile(r"^\s*(?:/bin/sh -c )?'?\s*(?:\( umask 77 && mkdir -p|echo ~|rm |chmod |test -e |setfacl "
                           r"|chown |chgrp )")


def module_name(wrapper_text):
    """namespace.collection.name of the module an AnsiballZ wrapper runs, or None."""
    m = _WRAPPER_FQN.search(wrapper_text)
    if m is None:
        return None
    fqn = m.group(1)
    parts = fqn.split(".")
    if fqn.startswith("ansible_collections.") and len(parts) >= 6 and parts[3:5] == ["plugins", "modules"]:
        return ".".join(parts[1:3] + parts[5:])
    if fqn.startswith("ansible.modules."):
        return "ansible.builtin." + ".".join(parts[2:])
    return fqn


def executed_module(cmd, in_data):
    """The module a command runs (pipelined: its wrapper arrives as in_data), or None for anything else."""
    if in_data is not None:
        text = in_data.decode("utf-8", "replace") if isinstance(in_data, bytes) else in_data
        return module_name(text) if "_ansiballz" in text.lower() or "ANSIBALLZ" in text else None
    if _HOUSEKEEPING.search(cmd):
        return None
    m = _AZ_PATH.search(cmd)
    if m is None:
        return None
    try:
        with open(m.group(1).strip("'\""), encoding="utf-8", errors="replace") as f:
            return module_name(f.read()) or m.group(2)
    except OSError:
        return m.group(2)


class Connection(LocalConnection):
    transport = "kubewin_lab.winsim.counted_local"

    def exec_command(self, cmd, in_data=None, sudoable=True):
        name = executed_module(cmd, in_data)
        root = self.get_option("winsim_root") if name else None
        if root:
            with open(os.path.join(root, "control-plane.log"), "a") as log:
                log.write("%.3f %s\n" % (time.time(), name))
        return super(Connection, self).exec_command(cmd, in_data=in_data, sudoable=sudoable)
