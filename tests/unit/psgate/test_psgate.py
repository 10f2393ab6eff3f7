"""The static PowerShell gate (tests/psgate/psgate.py): each rule catches a planted bad script."""

import importlib.util
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("psgate", ROOT / "tests" / "psgate" / "psgate.py")
psgate = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(psgate)


def findings(text, rule=None, callers=None, elements=None):
    out = psgate.check_script("planted", textwrap.dedent(text), callers, elements)
    return [f for f in out if rule is None or f.rule == rule]


def test_the_real_scripts_pass_every_rule():
    assert psgate.check_all() == []


def test_every_script_has_a_caller_whose_keys_are_computed():
    callers = psgate.find_callers()
    from ansible_collections.kubewin.nodes.plugins.plugin_utils._win_scripts import names
    # a scheduled task's script (TASK_SCRIPTS) is run by Task Scheduler, not by an action plugin
    assert {c[0] for c in callers} == set(names()) - set(psgate.TASK_SCRIPTS)
    assert all(c[2] is not None and c[3] is None for c in callers)


def test_a_scheduled_tasks_script_takes_no_parameters_and_has_no_ansible_variable():
    text = "param([string]$Name)\n$Ansible.Result = @{}\n"
    out = [f.message for f in psgate.check_script("boot", text, callers=[]) if f.rule == "contract"]
    assert any("takes no parameters" in m for m in out) and any("$Ansible" in m for m in out)
    assert [f for f in psgate.check_script("boot", "param()\nStart-Service -Name kube-proxy\n", callers=[])
            if f.rule == "contract"] == []
    assert findings("param()\n", "contract", callers=[])  # any other script still needs a caller


# --- parse ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    "if ($x) { Write-Output 1\n",                 # missing }
    "$h = @{ a = }\n",                            # bad hashtable
    "$s = @'\nunterminated\n",                    # unterminated here-string
])
def test_parse_errors_are_reported(text):
    assert findings(text, "parse")


# --- overwrite -----------------------------------------------------------------------------------
def test_assignment_over_a_typed_parameter_in_another_case_is_caught():
    out = findings("""
        param([string[]]$Paths = @())
        $paths = @{}
        """, "overwrite")
    assert len(out) == 1 and out[0].line == 3 and "[string[]]$Paths" in out[0].message


def test_foreach_variable_over_a_parameter_is_caught():
    out = findings("""
        param([string]$Name, [hashtable]$Parameters = @{})
        foreach ($name in $Parameters.Keys) { }
        """, "overwrite")
    assert len(out) == 1 and "foreach variable $name" in out[0].message


def test_function_parameters_are_checked_in_their_function_only():
    out = findings("""
        param([string]$Name)
        function Set-It([string]$Path) {
            $path = 'x'
            $name = 'local to the function'
        }
        """, "overwrite")
    assert [f.line for f in out] == [4]


def test_function_param_block_is_checked():
    out = findings("""
        function Set-It {
            param([int]$Count)
            $count++
        }
        """, "overwrite")
    assert len(out) == 1 and "$Count" in out[0].message


@pytest.mark.parametrize("statement", ["$input = 1", "$Matches = @{}", "$_ = 2", "$PSItem = 3", "$args = @()",
                                       "$HOST = 1", "$Error = 1", "$null = Get-Item x", "$LastExitCode = 0",
                                       "$OFS = ','", "foreach ($this in 1..2) { }", "$a, $PID = 1, 2",
                                       "[string]$MyInvocation = 'x'", "Get-Item x -OutVariable error"])
def test_automatic_variables_are_not_assigned(statement):
    assert findings(statement + "\n", "overwrite")


def test_parameter_named_like_an_automatic_variable_is_caught():
    assert findings("param([string[]]$Input)\n", "overwrite")


def test_members_and_elements_of_a_parameter_may_be_assigned():
    assert findings("""
        param([hashtable]$Parameters, [string[]]$Paths)
        $parameters.Extra = 1
        $PATHS[0] = 'x'
        $Ansible.Result = @{}
        $env:PATH = 'y'
        """, "overwrite") == []


# --- ps51 ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    "$x = $a ?? 'b'", "$x ??= 'b'", "$x = $a ? 1 : 2", "$n = $svc?.Name", "Get-Item a && Get-Item b",
    "Get-Item a || Get-Item b", "1..3 | ForEach-Object -Parallel { $_ }", "$o = 'x' | ConvertFrom-Json -AsHashtable",
    "Remove-Service -Name kubelet", "if ($IsWindows) { }", "$b = Get-Content x -AsByteStream",
    "$o = 'x' | ConvertFrom-Json -Depth 3", "$s = \"`u{2713}\"",
])
def test_syntax_and_commands_windows_powershell_lacks_are_caught(text):
    assert findings(text + "\n", "ps51"), text


def test_ps51_check_ignores_strings_comments_and_the_where_alias():
    assert findings("""
        # a ?? b && c
        $s = 'a && b ?? c'
        $t = "x || y"
        Get-Service | ? { $_.Status -eq 'Running' }
        $o = 'x' | ConvertTo-Json -Depth 3
        """, "ps51") == []


# --- contract ------------------------------------------------------------------------------------
SCRIPT = """
    param([string]$Name, [string[]]$Paths = @(), [object[]]$Files = @())
    foreach ($file in $Files) { $file.path; $file.sddl }
    """


def test_keys_match_case_insensitively():
    callers = [("planted", "a.py:1", {"name", "PATHS", "Files"}, None)]
    elements = {("planted", "Files"): [{"path": "x", "sddl": ""}]}
    assert findings(SCRIPT, "contract", callers, elements) == []


def test_a_parameter_no_caller_passes_is_caught():
    out = findings(SCRIPT, "contract", [("planted", "a.py:1", {"Name", "Files"}, None)])
    assert len(out) == 1 and "$Paths is never passed" in out[0].message


def test_a_key_no_param_declares_is_caught():
    out = findings(SCRIPT, "contract", [("planted", "a.py:1", {"Name", "Paths", "Files", "Dirs"}, None)])
    assert len(out) == 1 and "'Dirs'" in out[0].message and "a.py:1" in out[0].message


def test_an_element_key_python_never_builds_is_caught():
    callers = [("planted", "a.py:1", {"Name", "Paths", "Files"}, None)]
    out = findings(SCRIPT, "contract", callers, {("planted", "Files"): [{"path": "x"}]})
    assert len(out) == 1 and ".sddl" in out[0].message and out[0].line == 3


def test_a_script_nobody_runs_is_caught():
    assert findings(SCRIPT, "contract", [("other", "a.py:1", set(), None)])


def test_callers_keys_come_from_the_real_python(tmp_path):
    plugin = tmp_path / "action" / "x.py"
    plugin.parent.mkdir()
    plugin.write_text(textwrap.dedent("""
        from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import files as nfiles
        from ansible_collections.kubewin.nodes.plugins.plugin_utils._winremote import run_script

        def run(self, task_vars, args):
            run_script(self, task_vars, "literal", {"Name": 1, "FlagsFile": ""})
            run_script(self, task_vars, "built", nfiles.state_query([], [], []))
            params, report = nfiles.plan([], [], [], {})
            params.update(Proxy="")
            run_script(self, task_vars, "named", params)
            run_script(self, task_vars, "unknown", nfiles.something_new())
            run_script(self, task_vars, "hns_state")
            self.script("via_base", {"Paths": []})
        """))
    got = {c[0]: (c[2], c[3]) for c in psgate.find_callers(tmp_path)}
    assert got["literal"] == ({"Name", "FlagsFile"}, None)
    assert got["built"][0] == {"Files", "Dirs", "Paths"} | set(got["built"][0])  # what state_query returns
    assert {"Dirs", "Downloads", "Files", "Remove", "Prune", "Proxy"} <= got["named"][0]
    assert got["unknown"][0] is None and "files.something_new" in got["unknown"][1]
    assert got["hns_state"] == (set(), None)
    assert got["via_base"] == ({"Paths"}, None)  # WindowsAction.script


def test_a_caller_whose_keys_cannot_be_computed_is_a_finding():
    out = findings(SCRIPT, "contract", [("planted", "a.py:1", None, "parameters given as 'x()'")])
    assert out and "cannot compute" in out[0].message


def test_the_gate_fails_the_command_line_on_the_old_text(tmp_path, capsys):
    """The text before F1-F3 were fixed (three scripts overwrote their own parameters)."""
    old = (Path(psgate.__file__).parent / "testdata" / "win_scripts_f1_f3.py")
    assert psgate.main(["--scripts", str(old)]) == 1
    out = capsys.readouterr().out
    for expected in ("files_state line 10", "files_state line 18", "files_state line 24", "node_facts line 16",
                     "node_facts line 36", "service_apply line 62"):
        assert expected in out


# --- native --------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    "$ErrorActionPreference = 'Stop'\n& tar.exe -xf a.tgz\n",                         # F9: no 2>&1, Stop
    "$ErrorActionPreference = 'Stop'\n$o = & $exe --version 2>&1 | Out-String\n",     # merged, but Stop
    "$ErrorActionPreference = 'Stop'\nfunction Invoke-Sc { $o = & sc.exe query 2>&1 }\n",  # inherits Stop
    "$ErrorActionPreference = 'Continue'\n$o = sc.exe query\n",                      # stderr not captured
])
def test_native_programs_must_not_turn_stderr_into_fatal_errors(text):
    assert findings(text, "native")


def test_native_program_under_continue_with_merged_stderr_passes():
    assert findings("""
        $ErrorActionPreference = 'Stop'
        function Invoke-Sc([string[]]$Arguments) {
            $ErrorActionPreference = 'Continue'
            $out = (& sc.exe @Arguments 2>&1 | ForEach-Object { "$_" }) -join ' '
        }
        try {
            $ErrorActionPreference = 'Continue'  # a comment
            $v = & $exe --version 2>&1
        } finally { $ErrorActionPreference = 'Stop' }
        """, "native") == []


# --- unsafe --------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    "Set-Acl -LiteralPath $p -AclObject $acl",
    "$p = [System.IO.Directory]::GetFiles('\\\\.\\pipe\\')",
    '$p = Get-ChildItem "\\\\.\\pipe\\"',
])
def test_unsafe_calls_the_audit_found_are_caught(text):
    assert findings(text + "\n", "unsafe")


def test_probing_one_pipe_is_fine():
    assert findings("Test-Path -LiteralPath \"\\\\.\\pipe\\$name\"\n", "unsafe") == []


def test_the_old_text_also_fails_the_native_and_unsafe_rules(capsys):
    old = Path(psgate.__file__).parent / "testdata" / "win_scripts_f1_f3.py"
    psgate.main(["--scripts", str(old)])
    out = capsys.readouterr().out
    for expected in ("node_sync line 41: native: & tar.exe", "service_apply line 18: native: & sc.exe",
                     "node_facts line 28: native: & $exe", "node_sync line 17: unsafe: Set-Acl",
                     "node_facts line 44: unsafe: listing"):
        assert expected in out
