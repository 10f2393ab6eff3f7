# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fixed PowerShell the collection runs on Windows hosts: one file per script, scripts/<id>.ps1.

Every script is run through ``ansible.windows.win_powershell`` with user values passed only as
``parameters`` (never spliced into the text). Each one starts with a header line naming its identifier
(``# kubewin.nodes script: <id>``, the file's name) that the test lab uses to name the script it runs
as written through its PowerShell interpreter. Scripts only fetch or apply; every decision is made on
the controller. Read-only scripts declare ``SupportsShouldProcess`` so win_powershell runs them in
check mode too. Each script sets ``$Ansible.Result``; its contract is the comment under its header.
"""

from __future__ import annotations

import os

HEADER_PREFIX = "# kubewin.nodes script: "
SCRIPT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts")

_loaded = {}


def names(directory=SCRIPT_DIR):
    """The identifiers of the scripts in ``directory``, sorted."""
    return sorted(f[:-len(".ps1")] for f in os.listdir(directory) if f.endswith(".ps1"))


def load(name, directory=SCRIPT_DIR):
    """The text of script ``name`` as it is sent to the host (read once per process)."""
    path = os.path.join(directory, name + ".ps1")
    if path not in _loaded:
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
        if script_id(text) != name:
            raise ValueError("%s does not start with '%s%s'" % (path, HEADER_PREFIX, name))
        _loaded[path] = text
    return _loaded[path]


def load_all(directory=SCRIPT_DIR):
    """{identifier: text} of every script in ``directory``."""
    return dict((name, load(name, directory)) for name in names(directory))


def script_id(text):
    """Return the stable identifier a script declares in its first line, or None."""
    first = text.lstrip().splitlines()[0] if text.strip() else ""
    if first.startswith(HEADER_PREFIX):
        return first[len(HEADER_PREFIX):].strip()
    return None
