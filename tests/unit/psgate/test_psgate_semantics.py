"""The PowerShell gate's semantic rules (tests/psgate/psgate.py: dotnet, catch, compare, result): each catches a
planted bad script and passes the good form of the same script."""

import importlib.util
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("psgate_semantics", ROOT / "tests" / "psgate" / "psgate.py")
psgate = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(psgate)


def findings(text, rule, readers=None):
    out = psgate.check_script("planted", textwrap.dedent(text), readers=readers)
    return [f for f in out if f.rule == rule]


# --- dotnet: members and overloads of .NET Framework 4.x ------------------------------------------
@pytest.mark.parametrize("bad, good", [
    # overload arity of a static method
    ("[IO.File]::WriteAllText($path)", "[IO.File]::WriteAllText($path, $text)"),
    # a .NET Core-only member, which Windows PowerShell 5.1's .NET Framework lacks
    ("[System.IO.File]::WriteAllTextAsync($path, $text)", "[System.IO.File]::WriteAllText($path, $text)"),
    ("$p = [System.IO.Path]::Join('C:\\k', 'x')", "$p = [System.IO.Path]::Combine('C:\\k', 'x')"),
    ("$s = [string]'ab'\n$s.Contains('a', 'Ordinal')", "$s = [string]'ab'\n$s.Contains('a')"),
    # .NET Framework has Directory.CreateDirectory(String, DirectorySecurity); three arguments it has not
    ("[System.IO.Directory]::CreateDirectory($p, $sd, $true) | Out-Null",
     "[System.IO.Directory]::CreateDirectory($p, $sd) | Out-Null"),
    # constructors: New-Object and ::new
    ("$c = New-Object Net.WebClient($proxy)", "$c = New-Object Net.WebClient"),
    ("$w = New-Object System.Net.WebProxy -ArgumentList $a, $true, $b, $c, $d, $e",
     "$w = New-Object System.Net.WebProxy -ArgumentList $a, $true, $b"),
    ("$l = [System.Collections.Generic.List[string]]::new(1, 2)",
     "$l = [System.Collections.Generic.List[string]]::new()"),
    # an instance method of a variable whose type is known
    ("$c = New-Object System.Net.WebClient\n$c.DownloadFile($url)",
     "$c = New-Object System.Net.WebClient\n$c.DownloadFile($url, $tmp)"),
    ("$s = if ($d) { New-Object System.Security.AccessControl.DirectorySecurity } else { New-Object "
     "System.Security.AccessControl.FileSecurity }\n$s.SetSecurityDescriptorSddlForm($a, $b, $c)",
     "$s = if ($d) { New-Object System.Security.AccessControl.DirectorySecurity } else { New-Object "
     "System.Security.AccessControl.FileSecurity }\n$s.SetSecurityDescriptorSddlForm($a, 'Owner, Access')"),
    ("$k = Get-Item -LiteralPath 'HKLM:\\x'\n$k.GetValue('a', $null, 'DoNotExpandEnvironmentNames', 1)",
     "$k = Get-Item -LiteralPath 'HKLM:\\x'\n$k.GetValue('a', $null, 'DoNotExpandEnvironmentNames')"),
    # unknown receiver: some type must have the method with that arity
    ("$x.GetAccessControl('Owner', 1, 2)", "$x.GetAccessControl('Owner')"),
    ("$x.GetAccesControl('Owner')", "$x.GetAccessControl('Owner')"),
    # types and static members
    ("[System.IO.Fil]::Exists($p)", "[System.IO.File]::Exists($p)"),
    ("[Directory]::CreateDirectory($p, $sd)", "using namespace System.IO\n[Directory]::CreateDirectory($p, $sd)"),
    ("$v = [NullString]::Nothing", "$v = [NullString]::Value"),
    ("$t = [System.Environment]::ProcessId", "$t = [System.Environment]::MachineName"),
])
def test_dotnet_members_and_overloads_are_checked(bad, good):
    assert findings(bad, "dotnet"), bad
    assert findings(good, "dotnet") == [], good


def test_dotnet_add_type_methods_are_checked_against_their_declaration():
    script = """
        Add-Type -Namespace Kw -Name Api -MemberDefinition @'
        [DllImport("vmcompute.dll")]
        public static extern int HNSCall([MarshalAs(UnmanagedType.LPWStr)] string method,
            [MarshalAs(UnmanagedType.LPWStr)] string path, [MarshalAs(UnmanagedType.LPWStr)] out string response);
        '@
        $hr = [Kw.Api]::HNSCall($a, $b, [ref]$c)
        """
    assert findings(script, "dotnet") == []
    assert findings(script.replace("[ref]$c)", "$d, [ref]$c)"), "dotnet")
    assert findings(script.replace("::HNSCall(", "::HnsCall2("), "dotnet")


def test_dotnet_leaves_com_and_wmi_methods_alone():
    assert findings("""
        $svc = Get-WmiObject -Class Win32_Service -Filter "Name='kubelet'"
        $r = $svc.Change($null, $path)
        $fw = New-Object -ComObject HNetCfg.FwPolicy2
        $fw.EnableRuleGroup(1, 'x', $true)
        """, "dotnet") == []
    assert findings("$svc = Get-WmiObject -Class Win32_Service\n$x.Chang3($null, $path)\n", "dotnet")


def test_dotnet_names_the_overloads_net_framework_has():
    out = findings("[IO.File]::WriteAllText($path)", "dotnet")
    assert "[System.IO.File]::WriteAllText with 1 argument(s)" in out[0].message and "2, 3" in out[0].message


def test_dotnet_surface_is_net_framework_not_net_core():
    """What the committed extract says about members where .NET Framework 4.8 and .NET differ."""
    types = psgate.surface()["types"]
    assert [2, 2] in types["System.IO.Directory"]["static"]["CreateDirectory"]  # (String, DirectorySecurity)
    assert "GetAccessControl" in types["System.IO.FileInfo"]["methods"]  # an extension method on .NET
    assert "WriteAllTextAsync" not in types["System.IO.File"]["static"]
    assert "Join" not in types["System.IO.Path"]["static"]
    assert [7, 7] in types["System.IO.FileStream"]["ctors"]  # (..., FileOptions, FileSecurity)


# --- catch: typed catch blocks that cannot fire ---------------------------------------------------
@pytest.mark.parametrize("bad, good", [
    # a cmdlet's "not found" is non-terminating unless -ErrorAction Stop (or a Stop preference) makes it throw
    ("try { $i = Get-Item -LiteralPath $p } catch [System.Management.Automation.ItemNotFoundException] { $i = $null }",
     "try { $i = Get-Item -LiteralPath $p -ErrorAction Stop }\n"
     "catch [System.Management.Automation.ItemNotFoundException] { $i = $null }"),
    ("$ErrorActionPreference = 'Continue'\ntry { Remove-Item -LiteralPath $p } catch [System.IO.IOException] { 1 }",
     "$ErrorActionPreference = 'Stop'\ntry { Remove-Item -LiteralPath $p } catch [System.IO.IOException] { 1 }"),
    ("try { Copy-Item -LiteralPath $a -Destination $b -ErrorAction SilentlyContinue }\n"
     "catch [System.UnauthorizedAccessException] { 1 }",
     "try { Copy-Item -LiteralPath $a -Destination $b -ErrorAction:Stop }\n"
     "catch [System.UnauthorizedAccessException] { 1 }"),
    # a provider exception never comes out of a .NET method
    ("$ErrorActionPreference = 'Stop'\ntry { [System.IO.File]::Delete($p) }\n"
     "catch [System.Management.Automation.ItemNotFoundException] { 1 }",
     "$ErrorActionPreference = 'Stop'\ntry { [System.IO.File]::Delete($p) } catch [System.IO.IOException] { 1 }"),
    # not an exception type
    ("try { [System.IO.File]::Delete($p) } catch [System.IO.File] { 1 }",
     "try { [System.IO.File]::Delete($p) } catch [System.IO.FileNotFoundException] { 1 }"),
])
def test_typed_catches_that_cannot_fire_are_caught(bad, good):
    assert findings(bad, "catch"), bad
    assert findings(good, "catch") == [], good


def test_catch_around_calls_that_throw_is_fine():
    assert findings("""
        function Set-It { throw 'x' }
        try { Set-It } catch [System.InvalidOperationException] { 1 }
        try { Get-Item -LiteralPath $p } catch [System.Management.Automation.ParameterBindingException] { 1 }
        try { Get-Item -LiteralPath $p } catch { 'an untyped catch is not this rule' }
        try { $item.SetAccessControl($s) } catch [System.UnauthorizedAccessException] { throw 'hint' }
        """, "catch") == []


# --- compare: $null on the right, collections on the left, unrolled returns -----------------------
@pytest.mark.parametrize("bad, good", [
    ("if ($x -eq $null) { 1 }", "if ($null -eq $x) { 1 }"),
    ("$missing = $items -ne $null", "$missing = $null -ne $items"),
    # a possibly-collection left operand used as a condition: the operator filters
    ("param([string[]]$Names)\nif ($Names -eq 'kubelet') { 1 }",
     "param([string[]]$Names)\nif ('kubelet' -in $Names) { 1 }"),
    ("$kids = Get-ChildItem -LiteralPath $p\nif ($kids.Name -like 'kube*') { 1 }",
     "$kids = Get-ChildItem -LiteralPath $p\nif (@($kids | Where-Object Name -like 'kube*').Count -gt 0) { 1 }"),
    ("$svc = Get-Service -Name $Name -ErrorAction SilentlyContinue\nif ($svc -and $svc.Status -ne 'Stopped') { 1 }",
     "$svc = Get-Service -Name $Name -ErrorAction SilentlyContinue | Select-Object -First 1\n"
     "if ($svc -and $svc.Status -ne 'Stopped') { 1 }"),
    ("$wmi = Get-CimInstance -ClassName Win32_Service | Where-Object { $_.Name -eq $Name }\n"
     "if ($wmi.State -eq 'Running') { 1 }",
     "$wmi = Get-CimInstance -ClassName Win32_Service | Where-Object { $_.Name -eq $Name } | Select-Object -First 1\n"
     "if ($wmi.State -eq 'Running') { 1 }"),
    ("$parts = $s.Split(' ')\nif (-not ($parts -match '^--')) { 1 }",
     "$parts = $s.Split(' ')\nif (-not ($s -match '^--')) { 1 }"),
])
def test_comparison_semantics_are_checked(bad, good):
    assert findings(bad, "compare"), bad
    assert findings(good, "compare") == [], good


def test_a_filtering_comparison_that_is_not_a_condition_is_fine():
    assert findings("""
        param([string[]]$Names)
        $kube = $Names -like 'kube*'
        $n = $Names.Count -eq 0
        if ($Names.Count -eq 0) { 1 }
        """, "compare") == []


@pytest.mark.parametrize("bad, good", [
    ("function Get-Names { $n = @(Get-ChildItem x | ForEach-Object Name); return $n }\n$first = (Get-Names)[0]",
     "function Get-Names { $n = @(Get-ChildItem x | ForEach-Object Name); return $n }\n$first = @(Get-Names)[0]"),
    ("function Get-Names { $n = @(Get-ChildItem x | ForEach-Object Name); return $n }\n$all = Get-Names\n$all[0]",
     "function Get-Names { $n = @(Get-ChildItem x | ForEach-Object Name); return ,$n }\n$all = Get-Names\n$all[0]"),
    ("function Get-Parts([string]$s) { $s.Split(',') }\n$p = (Get-Parts 'a')[1]",
     "function Get-Parts([string]$s) { $s.Split(',') }\n$p = @(Get-Parts 'a')[1]"),
])
def test_indexing_an_unrolled_function_result_is_caught(bad, good):
    assert findings(bad, "compare"), bad
    assert findings(good, "compare") == [], good


# --- result: the keys and shapes the Python reads -------------------------------------------------
READERS = {"planted": {"files": [("object", "a.py:3")], "links": [("array", "a.py:4")],
                       "status": [(None, "a.py:5")]}}


@pytest.mark.parametrize("bad, good", [
    # a renamed key: the Python's .get("links") or [] would silently be empty
    ("$Ansible.Result = @{ files = @{}; link = @($l); status = 'x' }",
     "$Ansible.Result = @{ files = @{}; links = @($l); status = 'x' }"),
    # a key in another case: JSON keys are case-sensitive in Python
    ("$Ansible.Result = @{ files = @{}; Links = @($l); status = 'x' }",
     "$Ansible.Result = @{ files = @{}; links = @($l); status = 'x' }"),
    # an array the script lets PowerShell unroll (one element arrives as that element, none as null)
    ("$l = Get-ChildItem x | ForEach-Object FullName\n$Ansible.Result = @{ files = @{}; links = $l; status = 'x' }",
     "$l = @(Get-ChildItem x | ForEach-Object FullName)\n$Ansible.Result = @{ files = @{}; links = $l; status = 'x' }"),
    # an object where the Python wants one, an array where it wants an array
    ("$Ansible.Result = @{ files = @(); links = @(); status = 'x' }",
     "$Ansible.Result = @{ files = @{}; links = @(); status = 'x' }"),
    # built in a variable, a key missing on one of two paths
    ("$r = @{ files = @{} }\n$r.links = @()\nif ($x) { $Ansible.Result = @{ files = @{}; links = @() }; return }\n"
     "$r.status = 'x'\n$Ansible.Result = $r",
     "$r = @{ files = @{} }\n$r.links = @()\nif ($x) { $Ansible.Result = @{ files = @{}; links = @(); status = 'y' }; "
     "return }\n$r.status = 'x'\n$Ansible.Result = $r"),
    # built by a function of the script and returned from its variable (service_state's Get-ServiceDefinition)
    ("function F { $d = @{ files = @{} }\n$d.links = @()\n$d }\n$r = F\n$Ansible.Result = $r",
     "function F { $d = @{ files = @{} }\n$d.links = @()\n$d }\n$r = F\n$r.status = 'x'\n$Ansible.Result = $r"),
])
def test_result_keys_and_shapes_the_python_reads_are_checked(bad, good):
    assert findings(bad, "result", READERS), bad
    assert findings(good, "result", READERS) == [], good


def test_result_readers_come_from_the_real_python(tmp_path):
    plugin = tmp_path / "action" / "x.py"
    plugin.parent.mkdir()
    (tmp_path / "helpers.py").write_text(textwrap.dedent("""
        def judge(name, answer):
            for sample in answer.get("samples") or []:
                pass
            return (answer.get("log_tail") or {}).items()
        """))
    plugin.write_text(textwrap.dedent("""
        from ansible_collections.kubewin.nodes.plugins.plugin_utils import helpers
        from ansible_collections.kubewin.nodes.plugins.plugin_utils._winremote import run_script

        def run(self, task_vars):
            watched = run_script(self, task_vars, "watch", {})
            helpers.judge("x", watched)
            status = run_script(self, task_vars, "apply", {}).get("status", "Absent")
            reply = self.script("calls", {})
            return reply.get("responses") or [], reply["count"], _apply(self, task_vars)["when"]

        def _apply(self, task_vars):
            return run_script(self, task_vars, "returned", {})
        """))
    got = psgate.find_result_readers(tmp_path)
    assert {k: v[0][0] for k, v in got["watch"].items()} == {"samples": "array", "log_tail": "object"}
    assert set(got["apply"]) == {"status"}
    assert {k: v[0][0] for k, v in got["calls"].items()} == {"responses": "array", "count": None}
    assert set(got["returned"]) == {"when"}


def test_the_real_python_reads_what_the_gate_checks():
    """The readers found in plugins/ for a few keys this project's Python is known to read."""
    got = psgate.find_result_readers()
    # the start-up watch comes back inside service_apply's answer (issue 22: one remote operation)
    assert ("object", ) == tuple({s for s, _w in got["service_apply"]["watch"]})
    assert "responses" in got["hns_calls"] and "status" in got["service_apply"]
    assert {"files", "dirs", "paths", "links"} <= set(got["files_state"])
