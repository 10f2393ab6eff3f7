"""Stand-in for the get-pip.py bootstrap script ansible-test downloads from a host this machine
cannot reach. It bootstraps pip from Python's own ensurepip, then installs what ansible-test
asked for (e.g. pip==24.2) from PyPI. tests/sanity/run.sh copies it into ansible-test's cache."""

import ensurepip
import os
import subprocess
import sys

GET_PIP_ONLY = {"--no-setuptools", "--no-wheel"}

ensurepip.bootstrap()
# ensurepip points PIP_CONFIG_FILE at /dev/null for itself; the real install must see pip.conf.
os.environ.pop("PIP_CONFIG_FILE", None)
args = [a for a in sys.argv[1:] if a not in GET_PIP_ONLY]
sys.exit(subprocess.call([sys.executable, "-m", "pip", "install"] + args))
