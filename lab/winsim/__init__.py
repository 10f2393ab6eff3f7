"""Simulated Windows hosts for the kubewin.nodes test lab (see README.md)."""
