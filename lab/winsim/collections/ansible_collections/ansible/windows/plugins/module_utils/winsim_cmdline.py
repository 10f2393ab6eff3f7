# Test-lab only: Windows command lines as Windows and the programs on it read them, for the simulator.
"""The simulator's own Windows command-line parser and writer, written from the documented rules.

On Windows a program gets one string, its command line (CreateProcess ``lpCommandLine``; a service's
ImagePath; what NSSM builds from Application and AppParameters), and splits it into argv itself. The
lab judges the collection's command lines with this module, never with the collection's own parser
(kubewin.nodes' split_windows_command_line, render_command_line), so that a bug there is not mirrored here.

``split_command_line(cmd)`` reads ``cmd`` three ways and returns the argv only when all three agree:

1. The Microsoft C runtime (learn.microsoft.com, "main function and command-line arguments", section
   "Parsing C++ command-line arguments"; the older pages "Parsing C Command-Line Arguments", ms880421, and
   "Parsing C++ Command-Line Arguments", 17w5ykft, give the same backslash and quote rules but neither the
   program-name rule nor the quote pair):

   - arguments are delimited by white space, a space or a tab;
   - the first argument, the program name, is read differently: it must be a valid path name, so parts
     of it surrounded by double quote marks are allowed (the marks are not part of argv[0] and keep a
     space or tab from ending it), and backslashes are literal: none of the rules below apply to it;
   - a string surrounded by double quote marks is one argument, white space and all, and can be
     embedded in an argument; within a quoted string a pair of double quote marks is one literal
     double quote mark; a command line that ends inside quotes ends the last argument there;
   - backslashes are literal unless they immediately precede a double quote mark: 2n backslashes and a
     quote give n backslashes and a string delimiter; 2n+1 backslashes and a quote give n backslashes
     and a literal quote.

2. shell32's CommandLineToArgvW (learn.microsoft.com, "CommandLineToArgvW function (shellapi.h)": the
   same 2n / 2n+1 / n backslash rules; "if lpCmdLine starts with any amount of whitespace,
   CommandLineToArgvW will consider the first argument to be an empty string"). Its program name is
   cut differently from the C runtime's: a program name that starts with a quote ends at the next
   quote, one that does not ends at the next space or tab, "no matter what" (Wine's reimplementation,
   wine dlls/shell32/shell32_main.c). Its arguments 1..n are read as Go reads them (below): Go's
   TestCmdArgs (src/os/os_windows_test.go) checks os.commandLineToArgv against the real
   CommandLineToArgvW on a table of awkward command lines.

3. Go, which is what the lab's real .exe files are (kubelet.exe, kube-proxy.exe, containerd.exe,
   flanneld.exe, kubeadm.exe): os.Args comes from ``commandLineToArgv`` / ``readNextArg`` in
   src/os/exec_windows.go (golang/go). Go reads every argument, the program name included, with the
   argument rules (golang/go#50028, "os: commandLineToArgv() does not correctly parse argv[0] in
   Windows", open), skips leading white space, and reads a pair of double quotes inside a quoted string
   with the "prior to 2008" rule it cites (daviddeley.com parameters.htm, section 5.2): one literal
   quote, and the quoted string ENDS there, where the C runtime stays inside it (golang/go#39311,
   intentional). CommandLineToArgvW does as Go does here: Microsoft's own table row ``a"b"" c d``
   (C runtime ``ab" c d``) is ``ab"``, ``c``, ``d`` for CommandLineToArgvW (MicrosoftDocs/cpp-docs#3291).

Where the readings differ the command line is malformed for Windows: the SCM or CreateProcess, a C
program and a Go program would each run something else. The lab takes the stricter choice and fails
it (``CommandLineError``, a SimError, so a module reports it instead of running one reading of it)
rather than picking one reading leniently. Cases that differ: ``""`` inside a quoted string followed
by more of it (``"a""b c"``), a program name with a quote anywhere but around all of it
(``C:\\Program" "Files\\x.exe``, ``"C:\\x"y``), a quoted program name ending in a backslash
(``"C:\\dir\\" --flag``: Go reads ``\\"`` as an escaped quote), leading white space.
Where all three agree they are followed, leniency included: an unterminated quote ends the last
argument (``"abc`` is ``abc``) for all of them. An empty command line is no argv at all (``[]``).

``render_command_line(argv)`` writes argv as Go's syscall.makeCmdLine does (src/syscall/exec_windows.go:
``EscapeArg`` on each argument, joined with single spaces; EscapeArg follows "Parsing C Command-Line
Arguments", ms880421): an empty argument is ``""``; an argument with no space, tab, quote or backslash
is written as is; otherwise every quote gets a backslash, the backslashes right before a quote are
doubled, and an argument with a space or tab is wrapped in quotes, with its trailing backslashes
doubled. The result is read back with split_command_line: an argv it cannot be written for (a program
name with a quote in it, a quoted program name ending in a backslash) raises CommandLineError.

``nssm_command_line(application, app_parameters)`` is the command line NSSM passes to CreateProcess for a
service's Application and AppParameters (nssm service.cpp start_service: ``_sntprintf_s(cmd, ...,
_T("\\"%s\\" %s"), service->exe, service->flags)``, then ``CreateProcess(0, cmd, ...)``; registry.h:
``NSSM_REG_FLAGS _T("AppParameters")``; NSSM's sources, service.cpp read in the github.com/fightroad/nssm
mirror):
the application path in quotes, a space, then AppParameters verbatim. AppParameters alone is not a
command line: its first word would be read as a program name.
"""

from __future__ import annotations

from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError

_BLANKS = " \t"


class CommandLineError(SimError):
    """A command line that Windows, C programs and Go programs would not read the same way, or an argv
    that cannot be written as one."""


# --- the three readings -------------------------------------------------------------------------
def _read_arguments(cmd, i, pair_ends_quote):
    """Arguments 1..n of ``cmd`` from index ``i``: the backslash and quote rules shared by the C runtime,
    CommandLineToArgvW and Go. ``pair_ends_quote``: a pair of quotes inside a quoted string is one
    literal quote, after which the quoted string ends (Go, CommandLineToArgvW) or goes on (C runtime)."""
    args = []
    n = len(cmd)
    while True:
        while i < n and cmd[i] in _BLANKS:
            i += 1
        if i >= n:
            return args
        arg = []
        quoted = False
        while i < n:
            c = cmd[i]
            if c == "\\":
                j = i
                while j < n and cmd[j] == "\\":
                    j += 1
                count = j - i
                if j < n and cmd[j] == '"':
                    arg.append("\\" * (count // 2))
                    if count % 2:  # 2n+1: n backslashes and a literal quote
                        arg.append('"')
                        i = j + 1
                    else:  # 2n: n backslashes; the quote is a delimiter, read next
                        i = j
                    continue
                arg.append("\\" * count)  # not before a quote: literal
                i = j
                continue
            if c == '"':
                if quoted and i + 1 < n and cmd[i + 1] == '"':
                    arg.append('"')
                    i += 2
                    if pair_ends_quote:
                        quoted = False
                    continue
                quoted = not quoted
                i += 1
                continue
            if c in _BLANKS and not quoted:
                break
            arg.append(c)
            i += 1
        args.append("".join(arg))


def _crt_argv(cmd):
    """The Microsoft C runtime: the program name up to the first space or tab outside quotes, the quote
    marks dropped, backslashes literal; then the argument rules, a quote pair staying in the quotes."""
    name = []
    quoted = False
    i = 0
    while i < len(cmd):
        c = cmd[i]
        if c == '"':
            quoted = not quoted
        elif c in _BLANKS and not quoted:
            break
        else:
            name.append(c)
        i += 1
    return ["".join(name)] + _read_arguments(cmd, i, pair_ends_quote=False)


def _shell32_argv(cmd):
    """CommandLineToArgvW: a program name starting with a quote ends at the next quote, any other at the
    next space or tab; the arguments then as Go reads them."""
    if cmd.startswith('"'):
        end = cmd.find('"', 1)
        if end < 0:
            return [cmd[1:]]
        return [cmd[1:end]] + _read_arguments(cmd, end + 1, pair_ends_quote=True)
    i = 0
    while i < len(cmd) and cmd[i] not in _BLANKS:
        i += 1
    return [cmd[:i]] + _read_arguments(cmd, i, pair_ends_quote=True)


def _go_argv(cmd):
    """Go's os.Args: every argument, the program name too, by the argument rules; leading blanks skipped."""
    return _read_arguments(cmd, 0, pair_ends_quote=True)


# --- the public interface -----------------------------------------------------------------------
def split_command_line(cmd):
    """argv of the Windows command line ``cmd``, argv[0] being the program; ``[]`` for an empty one.

    Raises CommandLineError when the C runtime, CommandLineToArgvW and Go would not read it alike."""
    if cmd is None or cmd == "":
        return []
    crt, shell32, go = _crt_argv(cmd), _shell32_argv(cmd), _go_argv(cmd)
    if crt == shell32 == go:
        return crt
    raise CommandLineError(
        "winsim: the command line %r is read differently on Windows: the C runtime reads %r, "
        "CommandLineToArgvW (and so CreateProcess for the program name) %r, a Go program such as "
        "kubelet.exe %r; quote it the way syscall.EscapeArg does" % (cmd, crt, shell32, go))


def escape_argument(arg):
    """One argument as Go's syscall.EscapeArg writes it (src/syscall/exec_windows.go)."""
    if arg == "":
        return '""'
    if not any(c in arg for c in ' \t"\\'):
        return arg
    wrap = " " in arg or "\t" in arg
    out = ['"'] if wrap else []
    backslashes = 0
    for c in arg:
        if c == "\\":
            backslashes += 1
        elif c == '"':
            out.append("\\" * (backslashes + 1))  # double the run before the quote, escape the quote
            backslashes = 0
        else:
            backslashes = 0
        out.append(c)
    if wrap:
        out.append("\\" * backslashes)  # the closing quote must not be escaped by a trailing run
        out.append('"')
    return "".join(out)


def render_command_line(argv):
    """The command line for ``argv`` as Go's syscall.makeCmdLine builds it: each argument through
    EscapeArg, joined with single spaces. Raises CommandLineError when it does not read back as argv."""
    argv = [str(a) for a in argv]
    cmd = " ".join(escape_argument(a) for a in argv)
    try:
        back = split_command_line(cmd)
    except CommandLineError as e:
        raise CommandLineError("winsim: argv %r cannot be written as a Windows command line: %s" % (argv, e)) from None
    if back != argv:
        raise CommandLineError("winsim: argv %r cannot be written as a Windows command line: %r reads back as %r"
                               % (argv, cmd, back))
    return cmd


def nssm_command_line(application, app_parameters):
    """What NSSM passes to CreateProcess: ``"<Application>" <AppParameters>`` (nssm service.cpp)."""
    return '"%s" %s' % (application, app_parameters or "")


# --- a command line as Windows PowerShell 5.1 starts a native program, read by that program ----------
def dotnet_process_command_line(file_name, arguments):
    """The command line .NET Framework 4.x's ``Process.Start`` passes to CreateProcess for
    ``ProcessStartInfo.FileName``/``Arguments`` (UseShellExecute false, as Windows PowerShell 5.1's
    NativeCommandProcessor starts a program): ``Process.BuildCommandLine`` (referencesource.microsoft.com,
    System/services/monitoring/system/diagnosticts/Process.cs) puts the trimmed file name in quotes unless
    it is already quoted, then a space and ``Arguments`` verbatim when it is not empty. ``Arguments`` is
    one string: whatever quoting PowerShell wrote into it (or failed to write) reaches the program as is."""
    name = file_name.strip()
    quoted = name.startswith('"') and name.endswith('"')
    cmd = name if quoted else '"%s"' % name
    if arguments:
        cmd += " " + arguments
    return cmd


# How each program the lab runs reads its command line (which of the readings above applies):
# - "go": a Go program (os.Args from commandLineToArgv, src/os/exec_windows.go): containerd, dockerd,
#   kubelet, kube-proxy, kubeadm, kube-log-runner, flanneld (all built with the Go toolchain);
# - "crt": a C program built with the Microsoft C runtime (argv from the CRT start-up code): sc.exe and
#   tar.exe (Windows' bsdtar) of System32, nssm.exe (built with Visual Studio, NSSM's README);
# anything else: "strict", all readings must agree (split_command_line).
PROGRAM_READERS = {
    "go": ("containerd", "dockerd", "kubelet", "kube-proxy", "kubeadm", "kubectl", "kube-log-runner",
           "flanneld", "crictl"),
    "crt": ("sc", "tar", "nssm"),
}


def reader_of(tool):
    """``"go"``, ``"crt"`` or ``"strict"`` for a program (the stand-in's tool name or a System32 exe)."""
    t = tool.lower()
    if t.endswith(".exe"):
        t = t[:-4]
    for reader, tools in PROGRAM_READERS.items():
        if t in tools:
            return reader
    return "strict"


def split_as(cmd, reader):
    """argv of ``cmd`` as a program of kind ``reader`` reads it (see PROGRAM_READERS)."""
    if not cmd:
        return []
    if reader == "go":
        return _go_argv(cmd)
    if reader == "crt":
        return _crt_argv(cmd)
    return split_command_line(cmd)
