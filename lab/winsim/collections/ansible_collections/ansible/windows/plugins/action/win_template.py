# Test-lab stand-in for the ansible.windows.win_template action: the same as the real one, which is
# ansible.builtin.template with Windows line endings (its copy step runs win_stat/win_copy).
from __future__ import annotations

from ansible.plugins.action import ActionBase
from ansible.plugins.action.template import ActionModule as TemplateActionModule


class ActionModule(TemplateActionModule, ActionBase):
    DEFAULT_NEWLINE_SEQUENCE = "\r\n"
