#!/usr/bin/python
# -*- coding: utf-8 -*-
# Test-lab stand-in for ansible.windows.win_copy. The action plugin transfers files into the
# connection's temporary directory (on the controller, where the simulated host lives) and passes
# their paths; remote_src copies within the simulated drive.
from __future__ import absolute_import, division, print_function
__metaclass__ = type

import hashlib
import os
import shutil

from ansible_collections.ansible.windows.plugins.module_utils.winsim_module import run
from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError


def _sha1(path):
    with open(path, "rb") as f:
        return hashlib.sha1(f.read()).hexdigest()


def _copy_one(sim, src_local, dest, basename):
    local = sim.host.local_path(dest)
    if dest.endswith(("\\", "/")) or os.path.isdir(local):
        if not os.path.isdir(local) and not sim.check_mode:
            os.makedirs(local)  # a dest ending in a separator is a directory, created when missing
        dest = dest.rstrip("\\/") + "\\" + basename
        local = sim.host.local_path(dest)
    checksum = _sha1(src_local)
    sim.result.update(dest=dest, checksum=checksum, size=os.path.getsize(src_local), original_basename=basename)
    if os.path.isfile(local):
        if not sim.params.get("force", True) or _sha1(local) == checksum:
            return
    sim.result["changed"] = True
    if sim.check_mode:
        return
    parent = os.path.dirname(local)
    if os.path.isfile(parent):
        raise SimError("cannot copy file to '%s': object at dest parent dir is not a folder" % dest)
    if not os.path.isdir(parent):
        if sim.params.get("remote_src"):  # remote mode refuses; a copy from the controller creates it
            raise SimError("Destination directory '%s' does not exist" % dest.rsplit("\\", 1)[0])
        os.makedirs(parent)
    if sim.params.get("backup") and os.path.isfile(local):
        shutil.copy2(local, local + ".bak")
        sim.result["backup_file"] = dest + ".bak"
    shutil.copyfile(src_local, local)


def body(sim):
    p = sim.params
    mode = p.get("_copy_mode") or ("remote" if p.get("remote_src") else "single")
    if mode == "remote":
        src_local = sim.host.local_path(p["src"])
        if not os.path.exists(src_local):
            raise SimError("Cannot copy src file: '%s' as it does not exist" % p["src"])
        if os.path.isdir(src_local):
            for d, _, files in os.walk(src_local):
                rel = os.path.relpath(d, src_local)
                for f in files:
                    sub = p["dest"].rstrip("\\") + ("" if rel == "." else "\\" + rel.replace("/", "\\"))
                    os.makedirs(sim.host.local_path(sub), exist_ok=True) if not sim.check_mode else None
                    _copy_one(sim, os.path.join(d, f), sub + "\\" + f, f)
            return
        _copy_one(sim, src_local, p["dest"], os.path.basename(src_local))
        return
    if mode == "query":  # which of the planned files differ (the real action asks the same first)
        need = []
        for i, item in enumerate(p.get("_winsim_files") or []):
            local = sim.host.local_path(item["dest"])
            if item.get("directory"):
                if not os.path.isdir(local):
                    need.append(i)
            elif os.path.isdir(local) or not os.path.isfile(local) or (
                    p.get("force", True) and _sha1(local) != item["checksum"]):
                need.append(i)
        sim.result["files_to_copy"] = need
        return
    if not p.get("_winsim_files") and (p.get("src") or "").startswith("/"):
        # from ansible.builtin.copy (as win_template uses it): src is the transferred temporary file
        _copy_one(sim, p["src"], p["dest"], p.get("_original_basename") or os.path.basename(p["src"]))
        return
    # single: files the action plugin put in the (controller-side) temporary directory
    for item in p.get("_winsim_files") or []:
        dest = item["dest"]
        if item.get("directory"):
            local = sim.host.local_path(dest)
            if not os.path.isdir(local):
                sim.result["changed"] = True
                if not sim.check_mode:
                    os.makedirs(local)
            continue
        _copy_one(sim, item["tmp"], dest, item["basename"])


def main():
    run("win_copy", body, check_mode="full", internal={
        "_copy_mode": {"type": "str"}, "_original_basename": {"type": "str"},
        "_winsim_files": {"type": "list", "elements": "dict"}})


if __name__ == "__main__":
    main()
