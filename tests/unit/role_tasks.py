"""The task list of a role file, blocks flattened: what the role-file unit tests read."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def walk(tasks):
    """Each task of ``tasks`` and, after it, the tasks of its block, rescue and always, depth first."""
    for task in tasks or []:
        yield task
        for key in ("block", "rescue", "always"):
            yield from walk(task.get(key))
