"""Issue 20 item 2: comparison operators as Windows PowerShell 5.1 evaluates them (lab/winsim/ps/builtins.py
binary). Sources: about_Comparison_Operators ("When the input of an operator is a scalar value, the operator
returns a Boolean value. When the input is a collection, the operator returns the elements of the collection
that match the right-hand value"; "If the input is a collection, the -match and -notmatch operators return
the matching members of that collection, but the operator doesn't populate the $Matches variable"; "$null
should be on the left side of comparisons"); PowerShell Language Specification 3.0 §7.8.4 (filtering) and
§6.2 (the truth of an array)."""

from winsim.ps.interp import Interpreter  # noqa: E402


def out(text):
    return Interpreter("test.ps1").run_script(text)


def test_collection_on_the_left_filters():
    assert out("$r = @(1, 2) -eq 1; $r.Count; $r[0]") == [1, 1]
    assert out("@(@(1, 2, 1) -ne 1).Count") == [1]
    # the null elements of an array compared with $null; the one-element result holding $null is false
    assert out("@(@(1, $null, 2) -eq $null).Count") == [1]
    assert out("if (@(1, $null) -eq $null) { 'yes' } else { 'no' }") == ["no"]
    assert out("if (@(0, 1) -eq 0) { 'yes' } else { 'no' }") == ["no"]  # @(0) is false
    assert out("if (@('a', 'b') -ne 'c') { 'yes' } else { 'no' }") == ["yes"]


def test_case_sensitive_operator_filters_case_sensitively():
    # -ceq keeps only the exact match (the previous interpreter dropped the "c" while filtering)
    assert out("@(@('A', 'a') -ceq 'a').Count") == [1]
    assert out("@(@('A', 'a') -clike 'A*').Count") == [1]


def test_a_generic_list_on_the_left_filters_too():
    # List[T] is a collection: -eq filters it (the previous interpreter compared the list object itself)
    assert out("$l = [System.Collections.Generic.List[string]]::new(); $l.Add('a'); $l.Add('b')\n"
               "@($l -eq 'x').Count; @($l -eq 'b').Count") == [0, 1]


def test_match_on_a_collection_does_not_set_matches():
    assert out("$null = 'zz' -match 'z'\n$null = @('ab', 'cd') -match 'c'\n$Matches[0]") == ["z"]
    assert out("@('ab', 'cd') -match 'c'") == ["cd"]


def test_null_and_conversion_on_the_right():
    # the right operand is converted to the left one's type; $null equals only $null
    assert out("'' -eq $null; $null -eq ''; 0 -eq $null; $null -eq $null") == [False, False, False, True]
    assert out("1 -eq '1'; '1' -eq 1; 1 -eq 'x'; '1.0' -eq 1") == [True, True, False, False]
    assert out("$true -eq 'false'; $false -eq ''") == [True, True]
