"""S2 (review-s4-windows): node_facts returns the machine Path expanded, as [Environment]::GetEnvironmentVariable(
'Path', 'Machine') does on Windows (.NET Framework: RegistryKey.GetValue expands REG_EXPAND_SZ), and the facts compare
it per element as win_path does (its quote-aware split). No control plane needed."""

import pytest
from winsim import core  # noqa: E402
from winsim.ps.winhost import run_kubewin_script as run_ps  # noqa: E402

# isort: split
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import facts as nf  # noqa: E402


@pytest.fixture
def host(tmp_path):
    return core.create_host(str(tmp_path), "w")


@pytest.mark.parametrize("raw, expanded, on_path", [
    ("C:\\Windows;%SystemDrive%\\k", "C:\\Windows;C:\\k", True),  # present on the effective Path; win_path would add
    ("C:\\Windows;%SystemRoot%\\k", "C:\\Windows;C:\\Windows\\k", False),
    ('C:\\Windows;"C:\\tools;C:\\k"', 'C:\\Windows;"C:\\tools;C:\\k"', False),  # one quoted element for win_path
])
def test_the_facts_read_the_expanded_machine_path(host, raw, expanded, on_path):
    with host.open():
        host.state.setdefault("env", {})["Path"] = raw
        answer = run_ps(host, "node_facts", nf.script_parameters(), False)["result"]
    assert answer["machine_path"] == expanded
    assert nf.node_facts(answer)["install_dir_on_path"] is on_path
