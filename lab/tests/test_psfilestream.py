"""The lab interpreter's FileStream opened for reading and its StreamReader (review-s6 L2: service_apply reads log
tails through a handle that shares Delete, so kube-log-runner can still rename the log). As .NET Framework 4.x
(Microsoft Learn: FileStream(String, FileMode, FileAccess, FileShare), FileStream.Position, StreamReader(Stream),
StreamReader.ReadToEnd, FileShare Enum); what is not modelled is refused. No control plane needed."""

import os
import re
from unittest import mock

import pytest
from winsim import core  # noqa: E402
from winsim.ps.interp import PSError  # noqa: E402
from winsim.ps.values import Unsupported  # noqa: E402
from winsim.ps.winhost import new_interpreter  # noqa: E402

# isort: split
# winsim.core has put the stand-in ansible.windows collection on sys.path.
from ansible_collections.ansible.windows.plugins.module_utils import winsim_files  # noqa: E402

LOG = "C:\\var\\log\\kubelet\\kubelet.log"
OPEN = ("$s = New-Object System.IO.FileStream('%s', [System.IO.FileMode]::Open, [System.IO.FileAccess]::Read, "
        "%s)\n")
SHARE = "([System.IO.FileShare]::ReadWrite -bor [System.IO.FileShare]::Delete)"


@pytest.fixture
def host(tmp_path):
    return core.create_host(str(tmp_path), "w")


def _write(host, data, path=LOG):
    local = host.local_path(path)
    os.makedirs(os.path.dirname(local), exist_ok=True)
    with open(local, "wb") as f:
        f.write(data)


def _run(host, text):
    with host.open():
        return new_interpreter(host, "test", error_action="Stop").run_script("$ErrorActionPreference = 'Stop'\n"
                                                                             + text)


def test_a_file_is_read_from_where_the_stream_was_moved_to(host):
    _write(host, b"\xef\xbb\xbfI1 one\nI2 two\n")
    assert _run(host, OPEN % (LOG, SHARE) + "try { $s.Length; (New-Object System.IO.StreamReader($s)).ReadToEnd() "
                "} finally { $s.Dispose() }") == [17, "I1 one\nI2 two\n"]  # the byte order mark is not text
    assert _run(host, OPEN % (LOG, SHARE) + "$s.Position = $s.Length - 7\n"
                "(New-Object System.IO.StreamReader($s)).ReadToEnd(); $s.Dispose()") == ["I2 two\n"]


def test_a_position_before_the_start_and_a_read_after_dispose_throw(host):
    _write(host, b"abc")
    with pytest.raises(PSError, match='Exception setting "Position": "Non-negative number required'):
        _run(host, OPEN % (LOG, SHARE) + "$s.Position = $s.Length - 4")
    with pytest.raises(PSError, match="Cannot read from a closed TextReader"):
        _run(host, OPEN % (LOG, SHARE) + "$r = New-Object System.IO.StreamReader($s); $s.Dispose(); $r.ReadToEnd()")


@pytest.mark.parametrize("path, message", [
    (LOG, "Could not find file '%s'." % LOG),
    ("C:\\var\\log\\nowhere\\x.log", "Could not find a part of the path 'C:\\var\\log\\nowhere\\x.log'."),
    ("C:\\var\\log\\kubelet", "Access to the path 'C:\\var\\log\\kubelet' is denied."),
])
def test_what_cannot_be_opened_is_the_constructors_exception(host, path, message):
    _write(host, b"x", "C:\\var\\log\\kubelet\\other.log")
    with pytest.raises(PSError, match=re.escape('Exception calling ".ctor" with "4" argument(s): "%s"' % message)):
        _run(host, OPEN % (path, SHARE))


def test_a_file_held_open_for_writing_needs_a_share_that_includes_write(host):
    _write(host, b"x\n")
    with mock.patch.object(winsim_files, "in_use", return_value=True):
        with pytest.raises(PSError, match="because it is being used by another process"):
            _run(host, OPEN % (LOG, "[System.IO.FileShare]::Read"))
        assert _run(host, OPEN % (LOG, SHARE) + "$s.Length; $s.Dispose()") == [2]
    with pytest.raises(PSError, match="Enum value was out of legal range"):
        _run(host, OPEN % (LOG, "8"))


def test_what_is_not_modelled_is_refused(host):
    _write(host, b"x")
    with pytest.raises(Unsupported):  # only Open/Read is modelled for a 4-argument FileStream
        _run(host, "New-Object System.IO.FileStream('%s', [System.IO.FileMode]::CreateNew, "
                   "[System.IO.FileAccess]::Read, [System.IO.FileShare]::None)" % LOG)
    with pytest.raises(Unsupported):
        _run(host, "New-Object System.IO.StreamReader('%s')" % LOG)


def test_the_range_operator():
    from winsim.ps.interp import Interpreter
    # about_Operators, "Range operator" (between variables: the grammar reads a leading 1..3 as a command name)
    assert Interpreter("t").run_script("$a = 1; $b = 3; $c = 0; ($a..$b) -join ','; ($b..$c) -join ','\n"
                                       "('a', 'b', 'c')[$a..($b - 1)] -join ''") == ["1,2,3", "3,2,1,0", "bc"]


def _tail(host, lines):
    """service_apply's Read-LogTail on LOG."""
    from ansible_collections.kubewin.nodes.plugins.plugin_utils import _win_scripts as win_scripts
    m = re.search(r"^function Read-LogTail\b.*?^}", win_scripts.load("service_apply"), re.S | re.M)
    return _run(host, m.group(0) + "\n(Read-LogTail '%s' %d 65536).text" % (LOG, lines))[0]


@pytest.mark.parametrize("data, lines, tail", [
    (b"", 5, ""),
    (b"a\r\nb\r\n", 5, "a\nb"),
    (b"a\nb\nc", 2, "b\nc"),  # the last line without its line break
    (b"a\n\nb\n", 2, "\nb"),
    (b"a\nb\n", 0, ""),
])
def test_the_watch_keeps_the_last_lines(host, data, lines, tail):
    _write(host, data)
    assert _tail(host, lines) == tail


def test_a_long_log_is_read_from_its_last_64_kib_only(host):
    body = b"".join(b"I%05d %s\n" % (i, b"x" * 90) for i in range(2000))  # 196 000 bytes
    _write(host, body)
    assert _tail(host, 3) == "\n".join("I%05d %s" % (i, "x" * 90) for i in (1997, 1998, 1999))
    lines = _tail(host, 5000).split("\n")
    # 65536 bytes hold 668 whole lines of 98 bytes after a part of one, which is left out
    assert lines == ["I%05d %s" % (i, "x" * 90) for i in range(2000 - 668, 2000)]


CREATE = ("$d = New-Object System.IO.FileStream('%s', [System.IO.FileMode]::Create, [System.IO.FileAccess]::Write, "
          "[System.IO.FileShare]::None)\n")


def test_copyto_streams_from_the_position_into_a_file_create_made_or_emptied(host):
    """review-s9 W3b: the rotation copies containerd's log with Stream.CopyTo into a FileStream of FileMode.Create."""
    _write(host, b"I1 one\nI2 two\n")
    _write(host, b"an older copy, longer than what replaces it\n", "C:\\var\\log\\kubelet\\copy.log")
    copy = "C:\\var\\log\\kubelet\\copy.log"
    for target in (copy, "C:\\var\\log\\kubelet\\new.log"):
        assert _run(host, OPEN % (LOG, SHARE) + CREATE % target + "$s.Position = 7\n"
                    "try { $s.CopyTo($d) } finally { $d.Dispose(); $s.Dispose() }") == []
        with open(host.local_path(target), "rb") as f:
            assert f.read() == b"I2 two\n"
    with pytest.raises(PSError, match='Exception calling "CopyTo" with "1" argument\\(s\\): "Stream does not support '
                       'writing."'):
        _run(host, OPEN % (LOG, SHARE) + "$t = New-Object System.IO.FileStream('%s', [System.IO.FileMode]::Open, "
             "[System.IO.FileAccess]::Read, [System.IO.FileShare]::Read)\n$s.CopyTo($t)" % copy)
    with pytest.raises(PSError, match="Cannot access a closed Stream"):
        _run(host, OPEN % (LOG, SHARE) + CREATE % copy + "$d.Dispose(); $s.CopyTo($d)")
    with pytest.raises(PSError, match=re.escape("Could not find a part of the path 'C:\\nowhere\\x.log'.")):
        _run(host, CREATE % "C:\\nowhere\\x.log")
    with mock.patch.object(winsim_files, "in_use", return_value=True):
        with pytest.raises(PSError, match="because it is being used by another process"):
            _run(host, CREATE % copy)


def test_readtoend_of_more_than_a_string_holds_is_an_out_of_memory_exception(host):
    """A .NET string holds at most about 1 billion characters (Microsoft Learn, String class): ReadToEnd of a larger
    log throws OutOfMemoryException (as the rotation's earlier ReadToEnd did past about 1 GiB). The file is sparse and
    is not read."""
    local = host.local_path(LOG)
    os.makedirs(os.path.dirname(local), exist_ok=True)
    with open(local, "wb") as f:
        f.truncate(0x3FFFFFDF + 1)
    try:
        with pytest.raises(PSError, match=re.escape('Exception calling "ReadToEnd" with "0" argument(s): "Exception '
                                                    "of type 'System.OutOfMemoryException' was thrown.\"")):
            _run(host, OPEN % (LOG, SHARE) + "(New-Object System.IO.StreamReader($s)).ReadToEnd()")
    finally:
        os.remove(local)
