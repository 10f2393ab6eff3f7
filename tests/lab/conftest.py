"""The collection's end-to-end tests on the lab (lab/): the control plane (make lab-up) and the mirror for most,
fail loudly without them; the simulated Windows hosts alone for the `lab` fixture."""

import os
import sys

LAB = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "lab")
if LAB not in sys.path:
    sys.path.insert(0, LAB)

from lab_fixtures import api, lab  # noqa: E402,F401
