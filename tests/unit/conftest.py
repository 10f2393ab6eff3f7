"""Make the collection importable as ansible_collections.kubewin.nodes from this checkout."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COLLECTIONS = ROOT / ".build" / "collections"
LINK = COLLECTIONS / "ansible_collections" / "kubewin" / "nodes"

if not LINK.exists():
    LINK.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(ROOT, LINK)
if str(COLLECTIONS) not in sys.path:
    sys.path.insert(0, str(COLLECTIONS))
