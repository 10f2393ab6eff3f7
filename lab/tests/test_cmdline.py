"""Tests of the simulator's own Windows command-line parser and writer (module_utils/winsim_cmdline.py):
Microsoft's documented examples for the C runtime, Go's own test tables (src/os/os_windows_test.go TestCmdArgs
for os.commandLineToArgv, src/syscall/exec_windows_test.go TestEscapeArg for syscall.EscapeArg), the
program-name rules, the command line NSSM builds, the round trip render -> split over awkward arguments, and one
cross-check against the collection's own parser so that a divergence between the product and its judge shows.
No ansible-playbook run, no control plane."""

import random

import pytest
from winsim import core  # noqa: F401  (puts the stand-in collection and kubewin.nodes on sys.path)

# isort: split
from ansible_collections.ansible.windows.plugins.module_utils import winsim_cmdline
from ansible_collections.ansible.windows.plugins.module_utils.winsim_cmdline import (
    CommandLineError,
    escape_argument,
    nssm_command_line,
    render_command_line,
    split_command_line,
)
from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError

# learn.microsoft.com "main function and command-line arguments", "Parsing C++ command-line arguments": the
# table of command-line input -> argv[1], argv[2], argv[3] (the first four rows also in "Parsing C Command-Line
# Arguments", ms880421, and the older 17w5ykft page). (input, C runtime argv[1:], Go / CommandLineToArgvW argv[1:])
MICROSOFT_TABLE = [
    (r'"abc" d e', ["abc", "d", "e"], None),
    (r'a\\b d"e f"g h', [r"a\\b", "de fg", "h"], None),
    (r'a\\\"b c d', [r'a\"b', "c", "d"], None),
    (r'a\\\\"b c" d e', [r"a\\b c", "d", "e"], None),
    # The pair of quotes inside quotes: the C runtime stays in the quoted string; CommandLineToArgvW and Go end it
    # (MicrosoftDocs/cpp-docs#3291 shows CommandLineToArgvW's ab", c, d). The lab rejects the command line.
    (r'a"b"" c d', ['ab" c d'], ['ab"', "c", "d"]),
]

# golang/go src/os/os_windows_test.go TestCmdArgs: each is appended to "test", to "\"cmd line\"" and to the path of
# a Go program, and os.commandLineToArgv must return what the real CommandLineToArgvW returns; the program must get
# the same os.Args when started through syscall.EscapeArg. Go's table has no expected values (Windows is the
# oracle); these are Go's reading worked out by hand from readNextArg's rules, and the C runtime's where it differs.
# (tail, Go argv[1:], C runtime argv[1:] when different: then split_command_line rejects the command line)
GO_TABLE = [
    ("", [], None),
    (" a b c", ["a", "b", "c"], None),
    (' "', [""], None),
    (' ""', [""], None),
    (' """', ['"'], None),
    (' "" a', ["", "a"], None),
    (' "123"', ["123"], None),
    (r' \"123\"', ['"123"'], None),
    (r' \"123 456\"', ['"123', '456"'], None),
    (r' \\"', ["\\"], None),
    (r' \\\"', [r'\"'], None),
    (r' \\\\\"', [r'\\"'], None),
    (r' \\\"x', [r'\"x'], None),
    (r' """"\""\\\"', [r'""\"'], None),
    (" abc", ["abc"], None),
    (r' \\\\\""x"""y z', [r'\\"x"y z'], [r'\\"x"y', "z"]),
    ('\tb\t"x\ty"', ["b", "x\ty"], None),
    (' "Брад" d e', ["Брад", "d", "e"], None),
    # examples from https://msdn.microsoft.com/en-us/library/17w5ykft.aspx
    (' "abc" d e', ["abc", "d", "e"], None),
    (r' a\\b d"e f"g h', [r"a\\b", "de fg", "h"], None),
    (r' a\\\"b c d', [r'a\"b', "c", "d"], None),
    (r' a\\\\"b c" d e', [r"a\\b c", "d", "e"], None),
    # http://daviddeley.com/autohotkey/parameters/parameters.htm#WINARGV 5.4 Examples
    (" CallMeIshmael", ["CallMeIshmael"], None),
    (' "Call Me Ishmael"', ["Call Me Ishmael"], None),
    (' Cal"l Me I"shmael', ["Call Me Ishmael"], None),
    (r' CallMe\"Ishmael', ['CallMe"Ishmael'], None),
    (r' "CallMe\"Ishmael"', ['CallMe"Ishmael'], None),
    (r' "Call Me Ishmael\\"', ["Call Me Ishmael\\"], None),
    (r' "CallMe\\\"Ishmael"', [r'CallMe\"Ishmael'], None),
    (r" a\\\b", [r"a\\\b"], None),
    (r' "a\\\b"', [r"a\\\b"], None),
    # 5.5 Some Common Tasks
    (r' "\"Call Me Ishmael\""', ['"Call Me Ishmael"'], None),
    (r' "C:\TEST A\\"', ["C:\\TEST A\\"], None),
    (r' "\"C:\TEST A\\\""', ['"C:\\TEST A\\"'], None),
    # 5.6 The Microsoft Examples Explained
    (' "a b c"  d  e', ["a b c", "d", "e"], None),
    (r' "ab\"c"  "\\"  d', ['ab"c', "\\", "d"], None),
    (r' a\\\b d"e f"g h', [r"a\\\b", "de fg", "h"], None),
    # 5.7 Double Double Quote Examples (pre 2008): where Go and the C runtime part
    (' "a b c""', ['a b c"'], None),
    (' """CallMeIshmael"""  b  c', ['"CallMeIshmael"', "b", "c"], None),
    (' """Call Me Ishmael"""', ['"Call', "Me", 'Ishmael"'], ['"Call Me Ishmael"']),
    (' """"Call Me Ishmael"" b c', ['"Call Me Ishmael"', "b", "c"], ['"Call', "Me", "Ishmael", "b", "c"]),
]

# The program names Go's TestCmdArgs puts in front (the third is a Go program's path there).
PROGRAMS = [("test", "test"), ('"cmd line"', "cmd line"), (r"C:\k\kubelet.exe", r"C:\k\kubelet.exe")]

# golang/go src/syscall/exec_windows_test.go TestEscapeArg: input -> syscall.EscapeArg(input).
ESCAPE_TABLE = [
    ("", '""'),
    ("a", "a"),
    (" ", '" "'),
    ("\\", "\\"),
    ('"', '\\"'),  # Go: `"` -> `\"`
    ('\\"', '\\\\\\"'),  # `\"` -> `\\\"`
    ('\\\\"', '\\\\\\\\\\"'),  # `\\"` -> `\\\\\"`
    ("\\\\ ", r'"\\ "'),
    (" \\\\", r'" \\\\"'),
    ("a ", '"a "'),
    ("C:\\", "C:\\"),
    ("C:\\Program Files (x32)\\Common\\", r'"C:\Program Files (x32)\Common\\"'),
    ("C:\\Users\\Игорь\\", "C:\\Users\\Игорь\\"),
    (r"Андрей\file", r"Андрей\file"),
    (r"C:\Windows\temp", r"C:\Windows\temp"),
    (r"c:\temp\newfile", r"c:\temp\newfile"),
    (r"\\?\C:\Windows", r"\\?\C:\Windows"),
    ("\\\\?\\", "\\\\?\\"),
    ("\\\\.\\C:\\Windows\\", "\\\\.\\C:\\Windows\\"),
    (r"\\server\share\file", r"\\server\share\file"),
    (r"\\newserver\tempshare\really.txt", r"\\newserver\tempshare\really.txt"),
]

# The program name: read by CreateProcess / the C runtime without backslash escapes, by Go like any argument.
PROGRAM_NAME_CASES = [
    (r'"C:\Program Files\containerd\containerd.exe" --run-service',
     [r"C:\Program Files\containerd\containerd.exe", "--run-service"]),
    (r"C:\k\kubelet.exe --config=C:\var\lib\kubelet\config.yaml",
     [r"C:\k\kubelet.exe", r"--config=C:\var\lib\kubelet\config.yaml"]),
    (r'"C:\Program Files\x.exe', [r"C:\Program Files\x.exe"]),  # unterminated: all three read it to the end
    (r'x "abc', ["x", "abc"]),
    (r'x "a""b"', ["x", 'a"b']),  # a quote pair, then the end of the quotes: all three agree
    ("", []),
]
AMBIGUOUS = [
    r'"C:\dir\" --flag',  # Go: \" is an escaped quote, the program name runs on
    r'"C:\x"y z',  # CommandLineToArgvW: the program name ends at the quote (C:\x, then y); C runtime: C:\xy
    r'C:\Program" "Files\x.exe',  # CommandLineToArgvW: the program name ends at the space
    r" C:\k\kubelet.exe",  # leading blank: an empty program name for Windows, skipped by Go
    "   ",
    r'x "a""b c"',  # C runtime: a"b c; Go: a"b, c
]

# Arguments that are hard to write on a Windows command line.
AWKWARD = ["", " ", "\t", "a b", "a\tb", '"', '""', "\\", "\\\\", "a\\", "a b\\", "a b\\\\", '\\"', 'a"b', '"a b"',
           "C:\\Program Files\\", r"\\server\share\\", 'x\\"y z', "Брад", '--flag=a "b" c\\', "\\\\\"\\\"", " \\",
           "--x=", "'single'", "^&|<>%"]
WELL_FORMED_PROGRAMS = [r"C:\k\kubelet.exe", r"C:\Program Files\containerd\containerd.exe", "kubelet", "C:\\k\\",
                        r"\\server\share\tool.exe", "a\tb.exe"]


def _readings(cmd):
    return winsim_cmdline._crt_argv(cmd), winsim_cmdline._shell32_argv(cmd), winsim_cmdline._go_argv(cmd)


@pytest.mark.parametrize("tail,crt,go", MICROSOFT_TABLE, ids=[r[0] for r in MICROSOFT_TABLE])
def test_microsoft_documentation_table(tail, crt, go):
    cmd = "prog.exe " + tail
    assert winsim_cmdline._crt_argv(cmd) == ["prog.exe"] + crt
    assert winsim_cmdline._go_argv(cmd) == ["prog.exe"] + (go or crt)
    assert winsim_cmdline._shell32_argv(cmd) == ["prog.exe"] + (go or crt)
    if go is None:
        assert split_command_line(cmd) == ["prog.exe"] + crt
    else:
        with pytest.raises(CommandLineError, match="read differently"):
            split_command_line(cmd)


@pytest.mark.parametrize("prefix,name", PROGRAMS, ids=[p[1] for p in PROGRAMS])
@pytest.mark.parametrize("tail,go,crt", GO_TABLE, ids=[repr(r[0]) for r in GO_TABLE])
def test_go_table(prefix, name, tail, go, crt):
    cmd = prefix + tail
    c, s, g = _readings(cmd)
    assert g == [name] + go
    assert s == [name] + go  # CommandLineToArgvW, as Go's TestCmdArgs checks on Windows
    assert c == [name] + (crt if crt is not None else go)
    if crt is None:
        assert split_command_line(cmd) == [name] + go
    else:
        with pytest.raises(CommandLineError):
            split_command_line(cmd)


@pytest.mark.parametrize("arg,escaped", ESCAPE_TABLE, ids=[repr(r[0]) for r in ESCAPE_TABLE])
def test_go_escape_arg_table(arg, escaped):
    assert escape_argument(arg) == escaped
    assert split_command_line("x " + escaped) == ["x", arg]


@pytest.mark.parametrize("cmd,argv", PROGRAM_NAME_CASES, ids=[repr(r[0]) for r in PROGRAM_NAME_CASES])
def test_program_name_and_lenient_endings_all_readings_agree_on(cmd, argv):
    assert split_command_line(cmd) == argv


@pytest.mark.parametrize("cmd", AMBIGUOUS, ids=repr)
def test_command_lines_windows_and_go_read_differently_fail(cmd):
    with pytest.raises(CommandLineError) as e:
        split_command_line(cmd)
    assert isinstance(e.value, SimError)  # a module reports it as a failure, not as a simulator crash
    assert repr(cmd) in str(e.value)


def test_nssm_command_line_is_the_quoted_application_and_app_parameters():
    app = r"C:\Program Files\flannel\flanneld.exe"
    params = r'--kube-subnet-mgr --kubeconfig-file "C:\k\flannel kubeconfig" --iface=10.0.0.5'
    cmd = nssm_command_line(app, params)
    assert cmd == '"%s" %s' % (app, params)
    assert split_command_line(cmd) == [app, "--kube-subnet-mgr", "--kubeconfig-file", r"C:\k\flannel kubeconfig",
                                       "--iface=10.0.0.5"]
    assert split_command_line(nssm_command_line(app, "")) == [app]
    assert split_command_line(nssm_command_line(app, None)) == [app]
    # AppParameters is not a command line of its own: its first word is an argument, read with the argument
    # rules (a\"b is a"b), not as a program name would be (a\b).
    assert split_command_line(nssm_command_line(app, r'a\"b c'))[1:] == ['a"b', "c"]


def test_render_is_go_make_cmd_line():
    argv = [r"C:\Program Files\containerd\containerd.exe", "--config", r"C:\Program Files\containerd\config.toml",
            "", 'say "hi"', "C:\\k\\"]
    assert render_command_line(argv) == (r'"C:\Program Files\containerd\containerd.exe" --config '
                                         r'"C:\Program Files\containerd\config.toml" "" "say \"hi\"" ' + "C:\\k\\")
    assert render_command_line([]) == ""
    assert split_command_line(render_command_line([])) == []


@pytest.mark.parametrize("argv", [['C:\\a"b.exe', "x"], ["C:\\a b\\", "x"], ['"', "x"]], ids=repr)
def test_render_refuses_a_program_name_windows_cannot_read_back(argv):
    with pytest.raises(CommandLineError, match="cannot be written"):
        render_command_line(argv)


@pytest.mark.parametrize("program", WELL_FORMED_PROGRAMS, ids=repr)
def test_round_trip_over_awkward_arguments(program):
    for a in AWKWARD:
        for b in AWKWARD:
            argv = [program, a, b]
            assert split_command_line(render_command_line(argv)) == argv


def test_round_trip_over_random_arguments():
    rnd = random.Random(20240611)
    alphabet = [" ", "\t", '"', "\\", "a", "é", "-", "="]
    for _ in range(3000):
        argv = [rnd.choice(WELL_FORMED_PROGRAMS)] + ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 8)))
                                                     for _ in range(rnd.randint(0, 4))]
        assert split_command_line(render_command_line(argv)) == argv


def _collection_split():
    from ansible_collections.kubewin.nodes.plugins.plugin_utils._host.service import split_windows_command_line
    return split_windows_command_line


def test_collection_parser_agrees_with_the_lab_parser():
    """The product's split_windows_command_line against the judge, on the tables above. Where the lab rejects a
    command line as read differently by Windows and Go, the product must at least give one of the readings."""
    split_product = _collection_split()
    cases = ([("prog.exe " + t) for t, _, _ in MICROSOFT_TABLE] + [p + t for p, _ in PROGRAMS for t, _, _ in GO_TABLE]
             + [c for c, _ in PROGRAM_NAME_CASES] + AMBIGUOUS
             + ["x " + e for _, e in ESCAPE_TABLE]
             + [render_command_line([p, a, b]) for p in WELL_FORMED_PROGRAMS for a in AWKWARD for b in AWKWARD])
    divergences = []
    for cmd in cases:
        try:
            product = split_product(cmd)
        except Exception as e:  # the product refusing is a reading too
            product = "%s: %s" % (type(e).__name__, e)
        try:
            lab = split_command_line(cmd)
        except CommandLineError:
            if product not in [list(r) for r in _readings(cmd)] and not isinstance(product, str):
                divergences.append((cmd, "lab: ambiguous %r" % (_readings(cmd),), product))
            continue
        if product != lab:
            divergences.append((cmd, lab, product))
    assert not divergences, "the collection's parser and the lab's differ:\n" + "\n".join(
        "  %r: lab %r, collection %r" % d for d in divergences)
