# Test-lab only: the header line of kubewin.nodes' PowerShell scripts.
"""kubewin.nodes scripts carry their id in their header line (``# kubewin.nodes script: <id>``, see
kubewin.nodes win_scripts.script_id; the script's file is plugins/plugin_utils/scripts/<id>.ps1, and its
text arrives here as the action plugin sent it). Every one of them runs as written through the lab's PowerShell
interpreter (lab/winsim/ps; the win_powershell stand-in's INTERPRETED list): no Python
re-implementation of a script is left here, and a script the interpreter is not given fails loudly.
"""

from __future__ import annotations

import base64

from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError

HEADER_PREFIX = "# kubewin.nodes script: "


def script_id(text):
    first = text.lstrip().splitlines()[0] if text.strip() else ""
    return first[len(HEADER_PREFIX):].strip() if first.startswith(HEADER_PREFIX) else None


def run_script(host, text, params, check_mode):
    """A win_powershell script the interpreter is not given: the lab cannot run it."""
    sid = script_id(text)
    if sid is None:
        raise SimError("winsim cannot run this PowerShell script: it has no '%s<id>' header line. First line: %r"
                       % (HEADER_PREFIX, text.strip()[:80]))
    raise SimError("winsim has no implementation of kubewin.nodes script %r: the lab runs kubewin.nodes scripts only "
                   "as written through its PowerShell interpreter, and this one is not in the win_powershell "
                   "stand-in's INTERPRETED list" % sid)


def b64(data):
    return base64.b64encode(data).decode("ascii")
