"""security-2 N11: make setup installs every Python package at an exact version (tests/constraints/core-<core>.txt),
so a new release of a dependency cannot reach CI by itself, and ansible-test keeps its files in the checkout."""

import re
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
CORES = re.search(r"^CORES \?= (.+)$", (ROOT / "Makefile").read_text(), re.M).group(1).split()


def _pins(core):
    pins = {}
    for line in (ROOT / "tests" / "constraints" / ("core-%s.txt" % core)).read_text().splitlines():
        if line and not line.startswith("#"):
            name, sep, version = line.partition("==")
            assert sep and re.fullmatch(r"[0-9][0-9A-Za-z.+!-]*", version), "not an exact pin: %r" % line
            pins[canonicalize_name(name)] = version
    return pins


def _requirements(path):
    for line in (ROOT / path).read_text().splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            yield Requirement(line)


@pytest.mark.parametrize("core", CORES)
def test_every_requirement_and_ansible_core_is_pinned_to_a_version_it_allows(core):
    pins = _pins(core)
    wanted = list(_requirements("requirements.txt")) + list(_requirements("requirements-dev.txt"))
    wanted += [Requirement(r) for r in re.search(r"^ansible_pkg_%s := (.+)$" % re.escape(core),
                                                 (ROOT / "Makefile").read_text(), re.M).group(1).split()]
    for req in wanted:
        name = canonicalize_name(req.name)
        assert name in pins, "%s is not pinned in tests/constraints/core-%s.txt" % (req.name, core)
        assert req.specifier.contains(pins[name], prereleases=True), (req, pins[name])
    assert "pip" in pins  # the venv's pip upgrade is pinned too


def test_the_core_venvs_install_only_through_their_constraints():
    text = (ROOT / "Makefile").read_text()
    recipe = text[text.index("$(VENV_ROOT)/core-%/.done:"):].split("\n\n")[0]
    installs = [line for line in recipe.splitlines() if "pip install" in line]
    assert installs and all("-c tests/constraints/core-$*.txt" in line for line in installs), installs
    assert "tests/constraints/core-%.txt" in recipe.splitlines()[0]  # a new pin rebuilds the venv
    assert "grep -vxFf tests/constraints/core-$*.txt" in recipe  # and an unpinned package stops setup


def test_ansible_test_gets_a_home_in_the_checkout():
    script = (ROOT / "tests" / "sanity" / "run.sh").read_text()
    home = script.index("export HOME=$root/.build/")
    assert home < script.index("ansible-test sanity --requirements") and home < script.index(".ansible/test/cache")
    assert "~/" not in script[home:]
    assert '-c "$root/tests/constraints/core-$core.txt"' in script
