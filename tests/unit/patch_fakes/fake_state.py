"""The state the fake plugins of test_patch_rollout.py share: one JSON file named by PATCH_FAKE_STATE.

Hosts of one batch run their fake tasks in parallel forks, so each read-modify-write holds an exclusive lock on the
file: without it two forks lose each other's writes, and the serial-2 tests failed now and then on a loaded machine.
"""

import contextlib
import fcntl
import json
import os


@contextlib.contextmanager
def state():
    path = os.environ["PATCH_FAKE_STATE"]
    with open(path, "r+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        data = json.load(f)
        yield data
        f.seek(0)
        f.truncate()
        json.dump(data, f)
        f.flush()


def op(data, host, name):
    data.setdefault("ops", {}).setdefault(host, []).append(name)
