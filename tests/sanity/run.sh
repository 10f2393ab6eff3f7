#!/usr/bin/env bash
# Run ansible-test sanity for one ansible-core version on a copy of this checkout laid out as
# ansible_collections/kubewin/nodes (ansible-test insists on that path and resolves symlinks).
# Usage: tests/sanity/run.sh <ansible-core minor, e.g. 2.18>
set -euo pipefail
core=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
# The real path: a venv records the path it was made at in its scripts (a worktree's .venv may be a link).
venv=$(realpath -m "$root/.venv")/sanity-$core
work=$root/.build/sanity-$core/ansible_collections/kubewin/nodes

if ! "$venv/bin/ansible-test" --version >/dev/null 2>&1; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  # the ansible-core of the core venv, not the newest release (tests/constraints, security-2 N11)
  "$venv/bin/pip" install -q "ansible-core==$core.*" -c "$root/tests/constraints/core-$core.txt"
fi

# ansible-test keeps its cache, the venvs of each sanity test and an SSH key in ~/.ansible/test: give it a home in
# the checkout (.build, kept between runs so those venvs are made once) instead of the user's (security-2 N11).
# pip's own cache stays where it was, so nothing is downloaded twice.
export PIP_CACHE_DIR=${PIP_CACHE_DIR:-$(python3 -m pip cache dir 2>/dev/null || echo "$HOME/.cache/pip")}
export HOME=$root/.build/ansible-test-home
mkdir -p "$HOME"

# ansible-test bootstraps pip in its test venvs with a script from a host we cannot reach;
# the shim does the same from ensurepip and PyPI.
# Every pip version this ansible-test may ask for (see get_venv_packages in ansible-test).
pip_versions=$(grep -ohE "pip='[0-9.]+'" "$("$venv/bin/python" -c 'import ansible_test,os;print(os.path.dirname(ansible_test.__file__))')/_internal/python_requirements.py" | grep -oE "[0-9.]+" | sort -u)
mkdir -p "$HOME/.ansible/test/cache"
for v in $pip_versions; do cp "$root/tests/sanity/get_pip_shim.py" "$HOME/.ansible/test/cache/get_pip_${v//./_}.py"; done

rm -rf "$work" && mkdir -p "$work"
# lab/ is the test lab and tests/lab its tests of the collection (neither shipped, see galaxy.yml build_ignore):
# the lab's stand-in ansible.windows
# collection is Python in .ps1 files on purpose. ruff and yamllint check it instead.
(cd "$root" && git ls-files --cached --others --exclude-standard -z -- . ':!lab' ':!tests/lab' | xargs -0 tar -c) \
  | tar -x -C "$work"
cd "$work"
git init -q && git add -A
# pslint needs pwsh, which no machine here has; shellcheck is not installed. Both are skipped.
PATH=$venv/bin:$PATH ansible-test sanity --requirements --python "$(python3 -c 'import sys;print("%d.%d"%sys.version_info[:2])')" \
  --skip-test pslint --skip-test shellcheck "${@:2}"
