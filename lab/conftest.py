"""The lab's own tests (lab/tests): the simulator, its PowerShell interpreter, the firewall, the control-plane
build and the mirror. Most need no control plane; those that do fail loudly without `make lab-up`."""

import os
import sys

LAB = os.path.dirname(os.path.abspath(__file__))
if LAB not in sys.path:
    sys.path.insert(0, LAB)

from lab_fixtures import api, lab  # noqa: E402,F401
