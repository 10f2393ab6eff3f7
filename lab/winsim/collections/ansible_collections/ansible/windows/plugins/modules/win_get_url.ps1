#!/usr/bin/python
# -*- coding: utf-8 -*-
# Test-lab stand-in for ansible.windows.win_get_url: a real HTTP(S)/file download onto the simulated drive.
from __future__ import absolute_import, division, print_function
__metaclass__ = type

import hashlib
import os
import time

from ansible_collections.ansible.windows.plugins.module_utils.winsim_module import run
from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError


def _hash(data, algo):
    return hashlib.new(algo, data).hexdigest()


def _fetch(url, timeout, validate):
    import ssl
    import urllib.request
    ctx = None if validate else ssl._create_unverified_context()
    try:
        with urllib.request.urlopen(url, timeout=timeout, context=ctx) as r:
            return getattr(r, "status", 200), r.read()
    except Exception as e:
        code = getattr(e, "code", None)
        raise SimError("Error downloading '%s' to the destination: %s%s" % (url, e, "" if code is None else ""))


def body(sim):
    p = sim.params
    algo = p.get("checksum_algorithm") or "sha1"
    dest = p["dest"]
    local = sim.host.local_path(dest)
    if os.path.isdir(local):
        name = p["url"].rstrip("/").rsplit("/", 1)[-1].split("?")[0]
        dest = dest.rstrip("\\") + "\\" + name
        local = sim.host.local_path(dest)
    sim.result.update(url=p["url"], dest=dest, elapsed=0, status_code=200, msg="OK")
    expected = (p.get("checksum") or "").lower()
    if p.get("checksum_url"):
        _, text = _fetch(p["checksum_url"], p.get("url_timeout") or 30, p.get("validate_certs", True))
        expected = text.decode().split()[0].lower()
    have = None
    if os.path.isfile(local):
        with open(local, "rb") as f:
            have = f.read()
        if not p.get("force", True) or (expected and _hash(have, algo) == expected):
            sim.result.update(changed=False, checksum_dest=_hash(have, algo), size=len(have),
                              msg="file already exists")
            return
    start = time.time()
    status, data = _fetch(p["url"], p.get("url_timeout") or 30, p.get("validate_certs", True))
    sim.result.update(status_code=status, elapsed=time.time() - start, checksum_src=_hash(data, algo), size=len(data))
    if expected and _hash(data, algo) != expected:
        raise SimError("The checksum for %s did not match '%s', it was '%s'" % (dest, expected, _hash(data, algo)))
    if have == data:
        sim.result.update(changed=False, checksum_dest=_hash(data, algo))
        return
    sim.result["changed"] = True
    if not sim.check_mode:
        if not os.path.isdir(os.path.dirname(local)):
            raise SimError("The directory '%s' does not exist." % dest.rsplit("\\", 1)[0])
        with open(local, "wb") as f:
            f.write(data)
        sim.result["checksum_dest"] = _hash(data, algo)


def main():
    run("win_get_url", body, check_mode="full")


if __name__ == "__main__":
    main()
