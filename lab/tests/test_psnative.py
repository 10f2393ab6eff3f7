"""Issue 20 item 2: native programs get ONE command line built as Windows PowerShell 5.1 builds it, and
the simulated program splits it by its own rules (lab/winsim/ps/interp.py native_arguments, winsim_cmdline
dotnet_process_command_line / split_as, winhost.resolve_native). Each case names what 5.1 does and
why; the mutation cases plant the bug into a copy of the collection's real script.

Sources: PowerShell NativeCommandParameterBinder.cs (BindParameters, AppendOneNativeArgument: empty
strings are not written, white space outside quotes adds quotes, embedded quotes are not escaped);
PowerShell/PowerShell#4965 (the trailing-backslash doubling came with PowerShell 6) and #7400 (5.1.17134:
``"C:\\Program Files\\"`` reaches the program as ``C:\\Program Files"``); .NET Framework Process.BuildCommandLine
(the quoted file name, a space, Arguments verbatim); Go os/exec_windows.go commandLineToArgv; Microsoft C
runtime "Parsing C++ command-line arguments"."""

import os

import pytest
from winsim import core  # noqa: E402
from winsim.core import winsim_binaries, winsim_cmdline  # noqa: E402
from winsim.ps import winhost  # noqa: E402
from winsim.ps.interp import Interpreter, PSError  # noqa: E402

from ansible_collections.kubewin.nodes.plugins.plugin_utils._win_scripts import load  # noqa: E402

SEEN = []


@winsim_binaries.command("h4-echoargs-go")
def _echo_go(host, version, args, stdin):
    SEEN.append(list(args))
    return 0, "\n".join(args) + "\n", ""


@winsim_binaries.command("h4-echoargs-crt")
def _echo_crt(host, version, args, stdin):
    SEEN.append(list(args))
    return 0, "\n".join(args) + "\n", ""


@pytest.fixture
def host(tmp_path, monkeypatch):
    readers = getattr(winsim_cmdline, "PROGRAM_READERS", None)  # absent before issue 20: tests then fail
    if readers is not None:
        monkeypatch.setitem(readers, "go", readers["go"] + ("h4-echoargs-go",))
        monkeypatch.setitem(readers, "crt", readers["crt"] + ("h4-echoargs-crt",))
    h = core.create_host(str(tmp_path), "w")
    core.write_binary(h.local_path("C:\\t\\go.exe"), "h4-echoargs-go", "v1")
    core.write_binary(h.local_path("C:\\t\\crt.exe"), "h4-echoargs-crt", "v1")
    del SEEN[:]
    return h


def _ps(host, text, error_action="Stop"):
    with host.open():
        interp = winhost.new_interpreter(host, "t.ps1", error_action=error_action)
        return interp.run_script(text), interp


def _argv(host, text, prog="go"):
    del SEEN[:]
    _ps(host, "$null = & C:\\t\\%s.exe %s 2>&1" % (prog, text))
    assert len(SEEN) == 1
    return SEEN[0]


# --- what 5.1 writes, what the program reads ---------------------------------------------------------
def test_empty_arguments_vanish(host):
    # appendOneNativeArgument: "if (!String.IsNullOrEmpty(arg))" -- '' and $null are not written at all
    assert _argv(host, "a '' b $null c") == ["a", "b", "c"]
    assert _argv(host, "@('x', '', 'y')") == ["x", "y"]
    # an array splatted into a native program: each element an argument, empty ones dropped
    _ps(host, "$a = @('--flag', '', 'v')\n$null = & C:\\t\\go.exe @a 2>&1")
    assert SEEN[-1] == ["--flag", "v"]


def test_embedded_quotes_are_not_escaped(host):
    # 5.1 writes a"b verbatim; a Go program (and the C runtime) reads the quote as a delimiter: ab
    assert _argv(host, "'a\"b'") == ["ab"]
    # a value with a space gets quotes around it, its own quotes unescaped: "say "hi there"" is read
    # as two arguments by the program
    assert _argv(host, "'say \"hi there\"'") == ["say hi", "there"]
    assert _argv(host, "'x y'") == ["x y"]


def test_trailing_backslash_inside_added_quotes_escapes_the_quote(host):
    # 5.1 passes "C:\my dir\" (no doubling): the C runtime reads \" as a literal quote
    assert _argv(host, "'C:\\my dir\\' next", prog="crt") == ['C:\\my dir" next']
    # without a space nothing is quoted and the backslash stays
    assert _argv(host, "'C:\\dir\\' next", prog="crt") == ["C:\\dir\\", "next"]


def test_literal_comma_array_is_one_argument(host):
    # "tool a,b": ArrayIsSingleArgumentForNativeCommand, the elements joined by commas
    assert _argv(host, "'a','b' c") == ["a,b", "c"]


def test_program_path_is_quoted_by_process_start():
    # .NET Framework Process.BuildCommandLine: the file name in quotes, a space, Arguments verbatim
    assert winsim_cmdline.dotnet_process_command_line("C:\\Program Files\\x.exe", "a  b") == \
        '"C:\\Program Files\\x.exe" a  b'
    assert winsim_cmdline.dotnet_process_command_line('"C:\\x.exe"', "") == '"C:\\x.exe"'
    # Go and the C runtime read a quote pair inside quotes differently: each program its own way
    cmd = '"C:\\x.exe" "a""b c"'
    assert winsim_cmdline.split_as(cmd, "crt") == ["C:\\x.exe", 'a"b c']
    assert winsim_cmdline.split_as(cmd, "go") == ["C:\\x.exe", 'a"b', "c"]
    with pytest.raises(winsim_cmdline.CommandLineError):
        winsim_cmdline.split_as(cmd, "strict")
    assert winsim_cmdline.reader_of("sc.exe") == "crt" and winsim_cmdline.reader_of("containerd") == "go"


def test_interpreter_hands_one_string_to_the_host():
    class _Host(object):
        seen = []

        def env(self, name):
            return None

        def resolve_native(self, interp, name, node):
            return lambda arguments: (self.seen.append(arguments) or (0, "", ""))

    h = _Host()
    Interpreter("t.ps1", host=h).run_script("$null = & tool.exe -xf '' 'a b' @('', 'c') 2>&1")
    assert h.seen == ['-xf  "a b" c']


# --- the simulated tools on the real native path ----------------------------------------------------
def test_containerd_version_with_a_dropped_empty_argument(host):
    # the reverse: '' before --version vanishes, so containerd sees --version first
    with host.open():
        core.write_binary(host.local_path("C:\\Program Files\\containerd\\containerd.exe"), "containerd", "v2.3.5")
    out, _ = _ps(host, "& 'C:\\Program Files\\containerd\\containerd.exe' '' --version 2>&1")
    assert out and str(out[0]).startswith("containerd github.com/containerd/containerd/v2 v2.3.5"), out


# --- mutations of the collection's real scripts ------------------------------------------------------
def test_mutation_tar_extract_dir_with_space_and_trailing_backslash_fails(host):
    # node_sync's "tar.exe -xf $tmp -C $download.extract_dir": a directory with a space and a trailing
    # backslash reaches bsdtar as 'C:\my dir"' on 5.1 (the closing quote escaped), so nothing lands in
    # C:\my dir; with 'C:\my dir' (no trailing backslash) it works
    assert "-C $download.extract_dir" in load("node_sync")
    import io
    import tarfile
    with host.open():
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as t:
            info = tarfile.TarInfo("x.txt")
            info.size = 2
            t.addfile(info, io.BytesIO(b"hi"))
        with open(host.local_path("C:\\a.tgz"), "wb") as f:
            f.write(buf.getvalue())
    script = ("New-Item -ItemType Directory -Path 'C:\\my dir' -Force | Out-Null\n"
              "$o = & tar.exe -xf C:\\a.tgz -C $d 2>&1\n$LASTEXITCODE; Test-Path -LiteralPath 'C:\\my dir\\x.txt'")
    out, _ = _ps(host, "$d = 'C:\\my dir'\n" + script, error_action="Continue")
    assert out == [0, True]
    os.remove(host.local_path("C:\\my dir\\x.txt"))
    out, _ = _ps(host, "$d = 'C:\\my dir\\'\n" + script.replace("$LASTEXITCODE;", "$LASTEXITCODE; \"$o\";"),
                 error_action="Continue")
    assert out[0] == 1 and "could not chdir to 'C:\\my dir\"'" in out[1] and out[2] is False, out


# --- native tools that write to stderr where the real ones do --------------------------------------------
def test_containerd2_config_dump_of_a_version_2_file_warns_on_stderr(host):
    # containerd 2.x LoadConfig logs "Configuration migrated from version 2 ..." (a warning, on stderr); under
    # 'Stop' Windows PowerShell 5.1 makes that stderr line a terminating NativeCommandError even though
    # containerd exits 0; node_facts runs config dump under 'Continue' and drops the error records for this
    exe = "C:\\Program Files\\containerd\\containerd.exe"
    with host.open():
        core.write_binary(host.local_path(exe), "containerd", "v2.3.5")
        with open(host.local_path("C:\\Program Files\\containerd\\config.toml"), "w") as f:
            f.write("version = 2\n")
    with pytest.raises(PSError, match="Configuration migrated from version 2"):
        _ps(host, "$t = & '%s' config dump 2>&1" % exe)
    out, _ = _ps(host, "$ErrorActionPreference = 'Continue'\n$t = & '%s' config dump 2>&1 | Where-Object { $_ -isnot "
                 "[System.Management.Automation.ErrorRecord] } | Out-String\n$t; $LASTEXITCODE" % exe)
    assert out[0].startswith("version = 3") and "migrated" not in out[0] and out[1] == 0
    assert "if ($LASTEXITCODE -ne 0)" in load("node_facts") and "-isnot [System.Management.Automation.ErrorRecord]" \
        in load("node_facts")
    # a version 3 file: no migration, no warning
    with host.open():
        with open(host.local_path("C:\\Program Files\\containerd\\config.toml"), "w") as f:
            f.write("version = 3\n")
    out, _ = _ps(host, "$t = & '%s' config dump 2>&1\n$LASTEXITCODE" % exe)
    assert out == [0]
