"""Build an action plugin with its remote calls replaced at the _execute_module boundary."""

from unittest.mock import MagicMock

import pytest


@pytest.fixture
def make_action():
    def _make(action_cls, args, host, check_mode=False, diff=False):
        task = MagicMock()
        task.args = args
        task.async_val = 0
        task.check_mode = check_mode
        task.diff = diff
        connection = MagicMock()
        connection._shell.tmpdir = None
        connection.become = None  # as a connection plugin has it when the task does not become
        play_context = MagicMock()
        play_context.check_mode = check_mode
        action = action_cls(task, connection, play_context, MagicMock(), MagicMock(), MagicMock())
        action._execute_module = host.execute
        return action

    return _make
