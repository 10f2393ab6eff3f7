#!/usr/bin/env python3
"""Save the flag list of the lab's Windows kubelet.exe of VERSION: `kubelet.exe --help` and `kubelet.exe --version`
under the lab's Wine (a throw-away prefix, generate.py's wine()), into lab/_cache/<VERSION>/kubelet-flags.txt.

The simulated Windows nodes read that file (winsim_kube.kubelet_flag_spec: which flags take a value, and which are
unknown when the lab has no kubelet.exe to run). It is the Windows kubelet's own list: --windows-service and
--windows-priorityclass are in it (cmd/kubelet/app/options/osflags_windows.go), the Linux-only ones (cAdvisor's
--housekeeping-interval, globalflags_linux.go) are not. lab/bin/lab-build runs it once the binary and the prefix exist.

Usage: python3 lab/kubelet_flags/save_help.py VERSION [CACHE]   (CACHE: default lab/_cache)
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate  # noqa: E402

# a flag line of pflag's usage, as winsim_kube.kubelet_flag_spec reads it
FLAG_LINE = re.compile(r"^\s+(?:-\w, )?--([a-z0-9][a-z0-9-]*)(?: ([A-Za-z0-9.]+))?(?:\s{2,}|$)", re.M)


def flag_list(cache, version):
    """The text of `kubelet.exe --help` then `kubelet.exe --version` of that version; SystemExit when it is not a
    kubelet's flag list of that version."""
    exe = os.path.join(cache, version, "win", "kubelet.exe")
    if not os.path.isfile(exe):
        raise SystemExit("save_help: no %s (lab/bin/lab-build builds it)" % exe)
    _, out, err = generate.wine(exe, ["--help"], cache=cache)
    help_text = out + err
    _, out, err = generate.wine(exe, ["--version"], cache=cache)
    version_text = out + err
    names = set(m.group(1) for m in FLAG_LINE.finditer(help_text))
    missing = {"config", "windows-service"} - names
    if missing:
        raise SystemExit("save_help: %s --help under Wine printed no flag list (missing: %s):\n%s"
                         % (exe, ", ".join(sorted(missing)), help_text[-2000:]))
    if version_text.strip() != "Kubernetes %s" % version:
        raise SystemExit("save_help: %s --version printed %r, not Kubernetes %s" % (exe, version_text, version))
    return help_text + version_text


def main(argv):
    if len(argv) not in (1, 2):
        raise SystemExit(__doc__)
    version = argv[0]
    cache = os.path.abspath(argv[1]) if len(argv) > 1 else generate.CACHE
    text = flag_list(cache, version)
    path = os.path.join(cache, version, "kubelet-flags.txt")
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)
    print("kubelet-flags.txt %s: %d flags, from the Windows kubelet.exe" % (version, len(FLAG_LINE.findall(text))))


if __name__ == "__main__":
    main(sys.argv[1:])
