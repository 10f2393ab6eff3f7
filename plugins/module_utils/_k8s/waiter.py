# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Waiting on the Kubernetes API: one deadline per task and one poll loop
(compare kubernetes.core ``module_utils/k8s/waiter.py``).
"""

from __future__ import annotations

import time


class Deadline(object):
    """``timeout`` seconds from now (negative timeouts count as 0); one per task, shared by its waits."""

    def __init__(self, timeout):
        self.timeout = max(0, timeout)
        self.at = time.monotonic() + self.timeout

    def left(self):
        return self.at - time.monotonic()


def poll(deadline, interval, read, done):
    """Call ``read()`` until ``done(value)`` is true or ``deadline`` has passed.

    Returns ``(last value, True)`` when done, ``(last value, False)`` on time-out. ``read`` runs at least
    once, and once more after the last sleep, so a time-out always reports the latest state.
    """
    while True:
        value = read()
        if done(value):
            return value, True
        left = deadline.left()
        if left <= 0:
            return value, False
        time.sleep(min(interval, left))
