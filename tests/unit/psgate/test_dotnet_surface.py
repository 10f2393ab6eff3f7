"""tests/psgate/dotnet_surface.json is what tests/psgate/dotnet_surface.py makes from the pinned Debian Mono
packages (`make setup` downloads them into .build/psgate-mono); the gate reads the committed file."""

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DEBS = ROOT / ".build" / "psgate-mono"
_spec = importlib.util.spec_from_file_location("dotnet_surface", ROOT / "tests" / "psgate" / "dotnet_surface.py")
surface = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(surface)


def _have_packages():
    return all((DEBS / surface.deb_name(p)).exists() for p in surface.PACKAGES) and shutil.which("dpkg-deb")


@pytest.mark.skipif(not _have_packages(), reason="the pinned Mono packages are not in .build/psgate-mono "
                                                 "(make setup downloads them) or dpkg-deb is missing")
def test_the_committed_extract_is_what_the_pinned_packages_give():
    assert surface.render(surface.extract(DEBS)) == surface.OUT.read_text()


def test_a_package_with_another_checksum_is_refused(tmp_path):
    for package in surface.PACKAGES:
        (tmp_path / surface.deb_name(package)).write_bytes(b"not the package")
    with pytest.raises(SystemExit, match="SHA-256"):
        surface.verify(tmp_path)


def test_the_extract_names_its_source_and_leaves_out_what_net_framework_lacks():
    data = json.loads(surface.OUT.read_text())
    assert surface.VERSION in data["source"]
    types = data["types"]
    for tname, member, count in surface.FRAMEWORK_LACKS:
        arities = types[tname]["static"].get(member, []) + types[tname]["methods"].get(member, [])
        assert not [a for a in arities if count is None or a[1] == count], (tname, member, count)
