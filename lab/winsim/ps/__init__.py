# Test-lab only: the lab's PowerShell interpreter (never shipped in the collection).
"""Run kubewin.nodes' PowerShell text in the lab; see interp.py and lab/winsim/README.md."""
