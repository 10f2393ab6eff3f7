"""Helpers of the tests that drive the simulated Windows hosts (lab/winsim) without a control plane."""

import os


def one(results, name, host="win-1"):
    """The result of task ``name`` on ``host`` from ``Lab.play``'s results."""
    return results[name][host]


def put(host, *paths):
    """Plant a small file at each Windows path on the simulated host."""
    for p in paths:
        local = host.local_path(p)
        os.makedirs(os.path.dirname(local), exist_ok=True)
        with open(local, "w") as f:
            f.write("x")
