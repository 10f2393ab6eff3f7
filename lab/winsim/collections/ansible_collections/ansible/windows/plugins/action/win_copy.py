# Test-lab stand-in for the ansible.windows.win_copy action: transfers only what differs, in the
# same two steps as the real one (a query, then the copy), so remote operation counts match.
from __future__ import annotations

import hashlib
import json
import os
import tempfile

from ansible.errors import AnsibleError
from ansible.module_utils.common.text.converters import to_bytes
from ansible.plugins.action import ActionBase


def _sha1(path):
    with open(path, "rb") as f:
        return hashlib.sha1(f.read()).hexdigest()


class ActionModule(ActionBase):
    TRANSFERS_FILES = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        args = dict(self._task.args)
        if args.get("remote_src"):
            result.update(self._execute_module("ansible.windows.win_copy", module_args=args, task_vars=task_vars))
            return result
        src, content, dest = args.get("src"), args.pop("content", None), args.get("dest")
        if not dest or (src is None) == (content is None):
            return dict(result, failed=True, msg="dest is required and exactly one of src or content must be set")
        cleanup = []
        try:
            planned = []  # [{local, dest, basename, checksum} or {dest, directory}]
            if content is not None:
                fd, path = tempfile.mkstemp()
                with os.fdopen(fd, "wb") as f:
                    if not isinstance(content, str):
                        content = json.dumps(content)
                    f.write(to_bytes(content))
                cleanup.append(path)
                planned.append({"local": path, "dest": dest, "basename": "source"})
            else:
                try:
                    local = self._find_needle("files", src)
                except AnsibleError as e:
                    return dict(result, failed=True, msg=str(e))
                if os.path.isdir(local):
                    base = dest.rstrip("\\/")
                    if not src.endswith("/"):
                        base += "\\" + os.path.basename(local.rstrip("/"))
                    planned.append({"dest": base, "directory": True})
                    for d, dirs, files in sorted(os.walk(local)):
                        rel = os.path.relpath(d, local)
                        sub = base if rel == "." else base + "\\" + rel.replace("/", "\\")
                        planned += [{"dest": sub + "\\" + x, "directory": True} for x in sorted(dirs)]
                        planned += [{"local": os.path.join(d, f), "dest": sub + "\\" + f, "basename": f}
                                    for f in sorted(files)]
                else:
                    real = self._loader.get_real_file(local, decrypt=args.get("decrypt", True))
                    planned.append({"local": real, "dest": dest, "basename": os.path.basename(local)})
            for item in planned:
                if "local" in item:
                    item["checksum"] = _sha1(item["local"])
            query = [{k: v for k, v in i.items() if k != "local"} for i in planned]
            answer = self._execute_module("ansible.windows.win_copy", task_vars=task_vars, module_args=dict(
                args, _copy_mode="query", _winsim_files=query))
            if answer.get("failed"):
                return dict(result, **answer)
            todo = [planned[i] for i in answer.get("files_to_copy") or []]
            result.update(changed=False, dest=dest)
            if not todo:
                return result
            if self._task.check_mode:
                return dict(result, changed=True)
            tmpdir = self._connection._shell.tmpdir or self._make_tmp_path()
            send = []
            for n, item in enumerate(todo):
                entry = {k: v for k, v in item.items() if k != "local"}
                if "local" in item:
                    entry["tmp"] = self._connection._shell.join_path(tmpdir, "source-%d" % n)
                    self._transfer_file(item["local"], entry["tmp"])
                send.append(entry)
            copied = self._execute_module("ansible.windows.win_copy", task_vars=task_vars, module_args=dict(
                args, _copy_mode="single", _winsim_files=send))
            result.update(copied)
            return result
        finally:
            for path in cleanup:
                os.remove(path)
            self._remove_tmp_path(self._connection._shell.tmpdir)
