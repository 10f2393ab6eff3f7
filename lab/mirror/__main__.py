"""Lab mirror command line (from the repository: python lab/mirror <command>).

  build            write the tree into $LAB_MIRROR_ROOT (default lab/_run/mirror)/www
  serve [--port N] serve it on 127.0.0.1 (default $LAB_MIRROR_PORT or 18080); foreground
  vars [--url U]   JSON inventory variables pointing the roles at the mirror
  list             served paths and SHA-512s (the manifest)
  clean            delete the mirror root
Background start/stop: lab/mirror/mirror-up, mirror-down.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import mirror  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(prog="mirror", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["build", "serve", "vars", "list", "clean"])
    ap.add_argument("--root", default=mirror.root())
    ap.add_argument("--port", type=int, default=mirror.port())
    ap.add_argument("--url", default=None, help="base URL for 'vars' (default http://127.0.0.1:PORT)")
    a = ap.parse_args(argv)
    if a.command == "build":
        manifest = mirror.build(a.root)
        print("mirror: %d files under %s (kubernetes %s)" % (len(manifest["files"]), mirror.docroot(a.root),
                                                             " ".join(manifest["versions"]["kubernetes"])))
    elif a.command == "serve":
        mirror.serve(a.root, a.port)
    elif a.command == "vars":
        manifest = mirror.build(a.root)
        print(json.dumps(mirror.role_vars(a.url or "http://127.0.0.1:%d" % a.port, manifest), indent=1, sort_keys=True))
    elif a.command == "list":
        print(json.dumps(mirror.build(a.root), indent=1, sort_keys=True))
    elif a.command == "clean":
        mirror.clean(a.root)


if __name__ == "__main__":
    main()
