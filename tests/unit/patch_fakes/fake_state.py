"""The state the fake plugins of test_patch_rollout.py share: one JSON file named by PATCH_FAKE_STATE."""

import contextlib
import json
import os


@contextlib.contextmanager
def state():
    path = os.environ["PATCH_FAKE_STATE"]
    with open(path) as f:
        data = json.load(f)
    yield data
    with open(path, "w") as f:
        json.dump(data, f)


def op(data, host, name):
    data.setdefault("ops", {}).setdefault(host, []).append(name)
