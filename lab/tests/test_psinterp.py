# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's PowerShell interpreter (lab/winsim/ps): each expected value is what Windows
PowerShell 5.1 does, with the source cited (PowerShell Language Specification 3.0 = "spec", or the
about_* help topic)."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "winsim"))

from ps.builtins import convert_output  # noqa: E402
from ps.interp import Interpreter, PSError  # noqa: E402
from ps.values import Unsupported  # noqa: E402


def run(text, params=None, error_action="Continue"):
    interp = Interpreter("test.ps1", error_action=error_action)
    out = interp.run_script(text, params)
    return out, interp


def out(text, params=None, error_action="Continue"):
    return run(text, params, error_action)[0]


def test_names_ignore_case():
    # about_Variables: "Variable names aren't case-sensitive"; about_Hash_Tables: keys are not case-sensitive;
    # about_Functions: function names are not case-sensitive
    assert out("$Abc = 1; $aBC; $h = @{Key = 2}; $h.KEY; $h['key']; function Get-X { 3 }; get-x") == [1, 2, 2, 3]


def test_typed_parameter_keeps_its_type_on_assignment():
    # spec §5.3 "Constrained variables": a typed variable converts every later assignment (the F1 pattern)
    script = "param([string[]]$Paths = @())\n$paths = @{}\n$Paths.Count; $Paths[0]"
    assert out(script) == [1, "System.Collections.Hashtable"]


def test_typed_variable_conversion_error():
    # spec §5.3 and §6.4: a value that cannot be converted is an error; the variable keeps its old value
    assert out('[int]$n = 5; try { $n = "x" } catch { "caught" }; $n; $n = "7"; $n + 1') == ["caught", 5, 8]


def test_loop_variable_overwrites_parameter():
    # about_Foreach: the loop variable is an ordinary variable of the enclosing scope (the F3 pattern):
    # foreach ($name ...) over [string]$Name leaves the last key in $Name
    script = "param([string]$Name)\nforeach ($name in @('a', 'b')) { }\n$Name"
    assert out(script, {"Name": "kubelet"}) == ["b"]


def test_parameter_binding_by_name_with_conversion_and_defaults():
    # about_Functions_Advanced_Parameters: names ignore case, values take the parameter's type, defaults apply
    script = "param([int]$Seconds = 20, [string]$Name, [string[]]$List = @())\n$Seconds; $Name; $List.Count"
    assert out(script, {"seconds": "7", "NAME": 5}) == [7, "5", 0]


def test_unknown_parameter_is_an_error():
    # about_Functions_CmdletBindingAttribute / ParameterBindingException "NamedParameterNotFound"
    with pytest.raises(PSError, match="A parameter cannot be found that matches parameter name 'Nmae'"):
        run("[CmdletBinding()]\nparam([string]$Name)\n$Name", {"Nmae": "x"})


def test_mandatory_parameter_refuses_empty_values():
    # about_Functions_Advanced_Parameters, Mandatory: null, empty strings and empty collections are refused
    # unless AllowEmptyString/AllowEmptyCollection
    with pytest.raises(PSError, match="because it is an empty array"):
        run("param([Parameter(Mandatory)][object[]]$Calls)\n1", {"Calls": []})
    with pytest.raises(PSError, match="missing mandatory parameters: Name"):
        run("param([Parameter(Mandatory)][string]$Name)\n1", {})


def test_validate_set_ignores_case_and_refuses_others():
    # about_Functions_Advanced_Parameters, ValidateSet: case-insensitive unless IgnoreCase = $false
    script = "param([ValidateSet('start', 'stop')][string]$Run = 'none')\n$Run"
    assert out(script, {"Run": "START"}) == ["START"]
    with pytest.raises(PSError, match='does not belong to the set "start,stop"'):
        run(script, {"Run": "go"})


def test_throw_try_catch_finally():
    # about_Throw (a string becomes the RuntimeException message), about_Try_Catch_Finally ($_ is the
    # ErrorRecord, finally always runs)
    assert out('try { throw "boom" } catch { "caught: $_" } finally { "done" }') == ["caught: boom", "done"]


def test_uncaught_throw_ends_the_script():
    # about_Throw: throw is script-terminating even under Continue
    with pytest.raises(PSError, match="boom"):
        run('throw "boom"; "not reached"')


def test_statement_terminating_error_continues_under_continue():
    # about_Preference_Variables ($ErrorActionPreference = Continue): a statement-terminating error (method
    # call on $null) is written and the script goes on; under Stop it ends the script
    o, interp = run("$x = $null\n$x.Foo()\n'after'")
    assert o == ["after"] and "null-valued" in interp.errors[0].message
    with pytest.raises(PSError, match="null-valued"):
        run("$x = $null\n$x.Foo()\n'after'", error_action="Stop")


def test_pipeline_unrolls_arrays_and_assignment_collapses():
    # about_Pipelines / spec §7.11: arrays are enumerated; one output object is assigned as itself
    assert out("$a = @(5) | ForEach-Object { $_ }; $a.GetType -eq $null; $a; $b = @(1, 2) | ForEach-Object { $_ }; "
               "$b.Count") == [True, 5, 2]


def test_array_subexpression_always_an_array():
    # spec §7.1.7: @() of one or no output is an array
    assert out("$a = @(7); $a.Count; $e = @(); $e.Count; $n = @($null); $n.Count") == [1, 0, 1]


def test_null_comparison_with_arrays():
    # about_Comparison_Operators: with an array on the left the operator filters, so $x -eq $null on an
    # array is an array; $null -eq $x compares with the array itself
    assert out("$x = @(1, $null); $null -eq $x; ($x -eq $null).Count; $y = @(); $null -eq $y") == [False, 1, False]


def test_hashtable_is_one_pipeline_object_and_keys_win():
    # about_Hash_Tables: a hashtable is not enumerated in a pipeline; a key named like a property wins
    assert out("@{a = 1; b = 2} | ForEach-Object { 'x' }; @{Count = 9}.Count") == ["x", 9]


def test_pscustomobject_properties():
    # about_PSCustomObject: [pscustomobject]@{} makes an object with those NoteProperties
    assert out("$o = [pscustomobject]@{ Name = 'n' }; $o.name; $o.Missing -eq $null") == ["n", True]


def test_string_expansion_and_here_strings():
    # about_Quoting_Rules: $var and $() expand in double quotes, not in single quotes; `n is a newline;
    # here-strings keep their lines without the delimiters
    script = "$x = @{y = 'Y'}; $n = 3\n\"a$n $($x.y) ${n}:`n\"; 'no $n'\n@'\nline $n\n'@"
    assert out(script) == ["a3 Y 3:\n", "no $n", "line $n"]


def test_operators():
    # about_Comparison_Operators (case-insensitive by default), about_Join, about_Split, about_Operators (-f)
    assert out("'ABC' -eq 'abc'; 'ABC' -ceq 'abc'; 'kube.exe' -like '*.EXE'; 'a' -notlike 'b*'; 'a' -in @('A');"
               "@('x') -contains 'X'; @('a', 'b') -join ','; ('a,b' -split ',').Count; '{0}-{1:X8}' -f 'h', -1;"
               "'10' -lt 9; 10 -lt '9'") == [True, False, True, True, True, True, "a,b", 2, "h-FFFFFFFF", True, False]


def test_match_sets_matches():
    # about_Comparison_Operators, -match: $Matches holds the groups of the last successful match
    assert out("'--config=\"c:\\x.toml\"' -match '--config[= ]+(\\S+)'; $Matches[1].Trim('\"')") == [True, "c:\\x.toml"]


def test_foreach_if_elseif_and_break():
    # about_Foreach, about_If, about_Break
    script = ("foreach ($i in @(1, 2, 3, 4)) { if ($i -eq 1) { 'one' } elseif ($i -eq 3) { break } else { \"n$i\" } }"
              "\nforeach ($i in $null) { 'never' }")
    assert out(script) == ["one", "n2"]


def test_convertfrom_json_51_does_not_enumerate_arrays():
    # ConvertFrom-Json (Windows PowerShell 5.1): a JSON array is written as one object (PowerShell 7 added
    # -NoEnumerate and enumerates); objects become PSCustomObject
    assert out("('[1,2]' | ConvertFrom-Json | ForEach-Object { 'item' }).Count; "
               "('{\"Success\":false}' | ConvertFrom-Json).Success") == [1, False]


def test_function_scope_and_return():
    # about_Scopes: a function's variables are local to it; about_Return: return ends the function, its
    # output is everything written before too
    assert out("$v = 'outer'; function F([string]$A) { $v = 'inner'; 'first'; return $A; 'never' }; F 'x'; $v") == [
        "first", "x", "outer"]


def test_foreach_object_block_runs_in_callers_scope():
    # about_ForEach-Object / about_Scopes: the script block of ForEach-Object is dot-sourced (runs in the
    # caller's scope), so an assignment in it is visible afterwards
    assert out("$n = 0; @(1, 2) | ForEach-Object { $n = $n + $_ }; $n") == [3]


def test_invoke_operator_scriptblock_has_its_own_scope():
    # about_Operators (call operator &) / about_Scopes: & { } runs in a child scope
    assert out("$p = 'Stop'; $r = & { $p = 'Continue'; 'in' }; $r; $p") == ["in", "Stop"]


def test_where_object_comparison_statement():
    # about_Where-Object (comparison statement, PowerShell 3.0): Where-Object Property -eq Value
    assert out("@(@{S = 'Up'; N = 1}, @{S = 'Down'; N = 2}) | Where-Object S -eq 'up' | ForEach-Object N") == [1]


def test_typed_int_rounds_to_even():
    # spec §6.4: conversion of a real to an integer rounds to nearest, ties to even
    assert out("[int]2.5; [int]3.5; [int]'12'") == [2, 4, 12]


def test_unsupported_construct_fails_loudly():
    # the lab refuses what it does not model rather than guessing
    with pytest.raises(Unsupported, match=r"not supported by the lab interpreter: .* at test.ps1:2"):
        run("$a = 1\nswitch ($a) { 1 { 'one' } }")


def test_ps7_pipeline_chain_is_refused():
    # `&&` exists only in PowerShell 7 (about_Pipeline_Chain_Operators); Windows PowerShell 5.1 cannot parse it
    with pytest.raises((Unsupported, PSError)):
        run("Write-Output 1 && Write-Output 2")


def test_result_depth_truncation():
    # ansible.windows win_powershell Convert-OutputObject: beyond `depth` levels an object is its string
    from ps.values import Hashtable
    inner = Hashtable({"c": Hashtable({"d": 1})})
    assert convert_output(Hashtable({"a": inner}), 2) == {"a": {"c": {"d": 1}}}
    assert convert_output(Hashtable({"a": inner}), 1) == {"a": {"c": "System.Collections.Hashtable"}}


def test_void_method_writes_nothing():
    # spec §7.1.3 / about_Hash_Tables: Hashtable.Add and List[T].Add return void, so nothing is output
    assert out("$h = @{}; $h.Add('a', 1); $l = [System.Collections.Generic.List[string]]::new(); $l.Add(5); "
               "$l.Count; $l[0] -is [string]") == [1, True]


def test_convertto_json_51_depth_and_escaping():
    # about ConvertTo-Json (Windows PowerShell 5.1): -Depth defaults to 2 and deeper objects are written as
    # their string; .NET's JavaScriptSerializer escapes < > & ' as \\uXXXX
    assert out("@{a = @{b = @{c = @{d = 1}}}} | ConvertTo-Json -Compress") == [
        '{"a":{"b":{"c":"System.Collections.Hashtable"}}}']
    assert out("@{a = @{b = @{c = 1}}} | ConvertTo-Json -Compress -Depth 1") == [
        '{"a":{"b":"System.Collections.Hashtable"}}']
    assert out("ConvertTo-Json -Compress -InputObject @('<x>', \"it's\")") == ['["\\u003cx\\u003e","it\\u0027s"]']


class _Native(object):
    """A host whose only program, tool.exe, prints its ONE argument string (what Windows PowerShell 5.1
    passes after the program's path) on stdout and a line on stderr, exit code 3."""

    def env(self, name):
        return None

    def resolve_native(self, interp, name, node):
        return (lambda arguments: (3, "out " + arguments + "\n", "warn\n")) if name == "tool.exe" else None


def _native(text, error_action="Continue"):
    interp = Interpreter("test.ps1", host=_Native(), error_action=error_action)
    return interp.run_script(text), interp


def test_native_program_stderr_is_an_error_record_and_stop_makes_it_fatal():
    # about_Redirection (2>&1 merges the error stream) and Windows PowerShell 5.1: each stderr line of a
    # native program is an ErrorRecord (NativeCommandError); under $ErrorActionPreference = 'Stop' the first
    # one is a terminating error (PowerShell 7.2 changed this: about_Preference_Variables,
    # $PSNativeCommandUseErrorActionPreference); $LASTEXITCODE is the exit code (about_Automatic_Variables)
    o = _native("$r = & tool.exe a @('b', 'c') 2>&1\n$r[0]; $r[1] -is [System.Management.Automation.ErrorRecord]; "
                "\"$($r[1])\"; $LASTEXITCODE")[0]
    assert o == ["out a b c", True, "warn", 3]
    with pytest.raises(PSError, match="warn"):
        _native("& tool.exe 2>&1", error_action="Stop")
    with pytest.raises(PSError, match="The term 'nope.exe' is not recognized"):
        _native("try { & nope.exe 2>&1 } catch { throw }")


def test_elseif_and_else_on_the_next_lines_belong_to_the_if():
    # spec §8.3 (if-statement: new-lines are allowed before "elseif" and "else"); tree-sitter-powershell
    # reads such a line as a command named elseif, which the interpreter joins back to the if statement
    script = ("param($n)\n$x = if ($n -eq 1) { 'one' }\n    elseif ($n -eq 2) { 'two' } elseif ($n -eq 3) { 'three' }\n"
              "    else { 'many' }\n$x")
    assert [out(script, {"n": n})[0] for n in (1, 2, 3, 4)] == ["one", "two", "three", "many"]
    # without an else: nothing, and the statement after the if still runs
    assert out("$x = if ($false) { 1 }\n  elseif ($false) { 2 }\n$x; 'after'") == [None, "after"]


def test_catch_on_the_next_line_of_an_assigned_try():
    # spec §8.10 (try-statement: new-lines allowed before catch); about_Try_Catch_Finally
    assert out("$o = try { throw 'x' }\n    catch { 'caught' }\n$o") == ["caught"]
    assert out("$o = try { 'fine' }\n    catch { 'caught' }\n$o") == ["fine"]


def test_typed_catch_takes_the_first_clause_whose_type_matches_or_is_a_base():
    # about_Try_Catch_Finally: catch [type] handles that exception type and the types derived from it;
    # a thrown string is a RuntimeException (about_Throw)
    script = ("try { throw 'x' } catch [System.Management.Automation.ItemNotFoundException] { 'notfound' }\n"
              "catch [System.Management.Automation.RuntimeException] { 'runtime' } catch { 'any' }")
    assert out(script) == ["runtime"]
    # no clause matches: the error goes on to the enclosing try
    script = ("try { try { throw 'x' } catch [System.UnauthorizedAccessException] { 'inner' } }\n"
              "catch { 'outer' }")
    assert out(script) == ["outer"]


def test_generic_stack_pops_last_pushed_first():
    # Microsoft Learn, System.Collections.Generic.Stack<T>: Push/Pop are last in, first out; Pop on an
    # empty stack throws InvalidOperationException
    script = ("$s = [System.Collections.Generic.Stack[string]]::new(); $s.Push('a'); $s.Push(2); $s.Count\n"
              "$s.Pop(); $s.Pop(); try { $s.Pop() } catch { 'empty' }")
    assert out(script) == [2, "2", "a", "empty"]


@pytest.mark.parametrize("expr, expected", [
    # .NET substitutions (learn.microsoft.com "Substitutions in Regular Expressions"); a backslash is literal
    (r"'C:/k/bin' -replace '/', '\'", "C:\\k\\bin"),
    (r"'a.b' -replace '\.', '\\'", "a\\\\b"),
    (r"'ab' -replace '(a)(b)', '$2$1'", "ba"),
    (r"'ab' -replace '(a)', '$10'", "$10b"),          # no group 10: the text stays literal
    (r"'ab' -replace '(?<x>a)', '${x}!'", "a!b"),
    (r"'ab' -replace '(?<x>a)', '${y}'", "${y}b"),    # no such group: literal
    (r"'ab' -replace 'a', '$$'", "$b"),
    (r"'ab' -replace 'b', '[$&]'", "a[b]"),
    (r"'abc' -replace 'b', '<$`|$''>'", "a<a|c>c"),
    (r"'ab' -replace 'a', '$_'", "abb"),
    (r"'ab' -replace 'a', '$x'", "$xb"),              # a $ that names nothing is literal
])
def test_replace_reads_its_replacement_as_dotnet_does(expr, expected):
    assert out("[string](%s)" % expr) == [expected]
