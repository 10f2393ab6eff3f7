"""winsim command line (run from the repository: python lab/winsim <command> ...).

  dump HOST               normalized state snapshot (JSON) for before/after comparisons
  ops HOST                module executions on HOST, with counts
  fault HOST OP MODE      MODE: fail_once | fail_always | timeout | clear  (OP: win_get_url, script:hns_calls, ...)
  flannel HOST [vxlan|host-gw]   create the HNS network flanneld would
  binary PATH TOOL VERSION       write a stand-in binary (kubeadm, kubelet, ...)
  create HOST... [--profile P]   (re)create hosts from a profile (wipes their state)
  --root DIR (default lab/_run/winsim)
"""

import argparse
import collections
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from winsim import core, make_inventory  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(prog="winsim", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=os.environ.get("KUBEWIN_SIM_ROOT", core.DEFAULT_ROOT))
    ap.add_argument("--profile", default="ws2022-containerd")
    ap.add_argument("command", choices=["dump", "ops", "fault", "flannel", "binary", "create"])
    ap.add_argument("args", nargs="*")
    a = ap.parse_args(argv)
    if a.command == "dump":
        print(json.dumps(core.dump(a.root, a.args[0]), indent=1, sort_keys=True))
    elif a.command == "ops":
        names = core.ops(a.root, a.args[0])
        print(json.dumps({"total": len(names), "by_module": collections.Counter(names)}, indent=1))
    elif a.command == "fault":
        host, op, mode = a.args
        core.set_fault(a.root, host, op, None if mode == "clear" else mode)
    elif a.command == "flannel":
        print(json.dumps(core.flannel(a.root, a.args[0], *(a.args[1:2] or ["vxlan"])), indent=1))
    elif a.command == "binary":
        core.write_binary(*a.args)
    elif a.command == "create":
        # the settings make_inventory writes too: without them a host has no real Windows binaries to run
        os.makedirs(a.root, exist_ok=True)
        make_inventory.write_settings(a.root)
        for name in a.args:
            core.create_host(a.root, name, a.profile)


if __name__ == "__main__":
    main()
