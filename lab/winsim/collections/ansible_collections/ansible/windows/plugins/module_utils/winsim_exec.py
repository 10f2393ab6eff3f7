# Test-lab only: what win_command and win_shell share.
"""Run a stand-in binary for win_command/win_shell and shape the result like the real modules."""

from __future__ import annotations

import datetime
import os
import re

from ansible_collections.ansible.windows.plugins.module_utils import winsim_binaries
from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError


def parse_powershell_invocation(text):
    """'& "C:\\k\\x.exe" a b' / 'C:\\k\\x.exe a b' -> argv. Anything else is real PowerShell: refused."""
    if "\n" in text.strip() or re.search(r"[;|`$()]|\b[A-Z][a-z]+-[A-Z][A-Za-z]+\b", text):
        raise SimError("winsim cannot run PowerShell; win_shell only understands one plain executable invocation, "
                       "got: %r" % text[:120])
    text = re.sub(r"^&\s*", "", text.strip())
    argv = []
    for m in re.finditer(r"'([^']*)'|\"([^\"]*)\"|(\S+)", text):
        argv.append(next(g for g in m.groups() if g is not None))
    return argv


def execute(sim, argv, cmd_text, shell):
    p = sim.params
    host = sim.host
    if p.get("creates") and os.path.exists(host.local_path(p["creates"])):
        sim.result.update(changed=False, msg="skipped, since %s exists" % p["creates"], cmd=cmd_text, rc=0)
        return
    if p.get("removes") and not os.path.exists(host.local_path(p["removes"])):
        sim.result.update(changed=False, msg="skipped, since %s does not exist" % p["removes"], cmd=cmd_text, rc=0)
        return
    start = datetime.datetime.now()
    rc, out, err = winsim_binaries.run(host, argv, cwd=p.get("chdir"), stdin=p.get("stdin"), shell=shell)
    end = datetime.datetime.now()
    sim.result.update(changed=True, cmd=cmd_text, rc=rc, stdout=out, stderr=err,
                      stdout_lines=out.splitlines(), stderr_lines=err.splitlines(),
                      start=str(start), end=str(end), delta=str(end - start))
    if rc != 0:
        sim.result.update(failed=True, msg="non-zero return code")
