"""Issue 20 item 2: .NET members the lab interpreter implements behave as .NET Framework 4.x's (what Windows
PowerShell 5.1 runs on), where .NET (Core) or Python would differ: String.Split() keeps empty entries
(StringSplitOptions.None), String.Replace('') and Substring beyond the string throw (ArgumentException,
ArgumentOutOfRangeException: Microsoft Learn, String.Replace(String, String) and String.Substring, "Exceptions"),
a call with arguments no Framework overload takes is a MethodException ("Cannot find an overload for ... and
the argument count"). PowerShell wraps a .NET exception in MethodInvocationException
('Exception calling "<name>" with "<n>" argument(s): "<message>"')."""

import pytest
from winsim.ps.interp import Interpreter, PSError  # noqa: E402


def out(text):
    return Interpreter("test.ps1").run_script(text)


def test_split_without_separator_keeps_empty_entries():
    assert out("'a  b'.Split().Count") == [3]
    assert out("'a,,b'.Split(',').Count") == [3]


def test_replace_with_an_empty_old_value_throws():
    with pytest.raises(PSError, match='Exception calling "Replace" with "2" argument\\(s\\): "String cannot be of '
                                      'zero length'):
        out("$ErrorActionPreference = 'Stop'; 'abc'.Replace('', 'x')")


def test_substring_outside_the_string_throws():
    assert out("'abc'.Substring(1); 'abc'.Substring(1, 2); 'abc'.Substring(3)") == ["bc", "bc", ""]
    with pytest.raises(PSError, match="startIndex cannot be larger than length of string"):
        out("$ErrorActionPreference = 'Stop'; 'abc'.Substring(4)")
    with pytest.raises(PSError, match="Index and length must refer to a location within the string"):
        out("$ErrorActionPreference = 'Stop'; 'abc'.Substring(1, 5)")


def test_no_overload_for_the_argument_count():
    with pytest.raises(PSError, match='Cannot find an overload for "Substring" and the argument count: "3"'):
        out("$ErrorActionPreference = 'Stop'; 'abc'.Substring(1, 1, 1)")
