# Test-lab only: System.Diagnostics.Process over the simulated host's programs (the docker.exe calls of kubewin.nodes).
"""``New-Object System.Diagnostics.ProcessStartInfo`` (FileName, Arguments, UseShellExecute, RedirectStandardOutput,
RedirectStandardError, CreateNoWindow), ``[System.Diagnostics.Process]::Start($info)``, and on the process
``StandardOutput.ReadToEndAsync()`` / ``StandardError.ReadToEndAsync()`` (a Task whose ``Result`` is the text),
``WaitForExit(ms)``, ``WaitForExit()``, ``Kill()`` and ``ExitCode``. Sources: Microsoft Learn, Process.Start
(ProcessStartInfo), Process.WaitForExit(Int32) ("true if the associated process has exited; otherwise, false"; with
redirected output, call WaitForExit() after it returns true so the output is complete), Process.Kill, and
ProcessStartInfo.Arguments (the one command-line string, split by the program: winsim_cmdline, as a native call).

The program runs when it is started (the lab's programs answer at once) through the host's resolve_native, like ``&``
does. A program the simulator makes hang (winsim_docker.Hung: a test's ``state["docker"]["hung"]``) never exits:
WaitForExit(ms) moves the host's clock on by ms and returns false, WaitForExit() without a bound is refused (it would
wait forever), Kill() ends it with exit code -1. Only UseShellExecute = $false with both streams redirected is
modelled; anything else is "not supported by the lab interpreter".

``Get-Process -Name containerd-shim-runhcs-v1``: containerd's shims (winsim_binaries.shims), each with Id, ProcessName
and Path; no such process is Get-Process's non-terminating error (Microsoft Learn, Get-Process: "Cannot find a process
with the name ..."; NoProcessFoundForGivenName). Other process names are not supported by the lab.
"""

from __future__ import annotations

from ansible_collections.ansible.windows.plugins.module_utils import winsim_docker, winsim_scm

from .builtins import VOID, Cmdlet, TypeInfo
from .values import ErrorRecord, NetObject, to_str

_SETTABLE = {"filename": str, "arguments": str, "useshellexecute": bool, "redirectstandardoutput": bool,
             "redirectstandarderror": bool, "createnowindow": bool}


class ProcessStartInfo(NetObject):
    type_name = "System.Diagnostics.ProcessStartInfo"

    def __init__(self):
        self.values = {"filename": "", "arguments": "", "useshellexecute": True, "redirectstandardoutput": False,
                       "redirectstandarderror": False, "createnowindow": False}

    def ps_get(self, name):
        return self.values.get(name.lower(), super().ps_get(name))

    def ps_set(self, name, value, interp, node):
        kind = _SETTABLE.get(name.lower())
        if kind is None:
            interp.unsupported("setting ProcessStartInfo.%s" % name, node)
        self.values[name.lower()] = to_str(value) if kind is str else bool(value)


class Task(NetObject):
    """Task<string> of ReadToEndAsync: the text, whole once the program has exited."""

    type_name = "System.Threading.Tasks.Task`1[System.String]"

    def __init__(self, process, text):
        self.process, self.text = process, text

    def prop_result(self):
        return self.text


class Reader(NetObject):
    type_name = "System.IO.StreamReader"

    def __init__(self, process, text):
        self.process, self.text = process, text

    def m_readtoendasync(self, interp, node):
        return Task(self.process, self.text)


class Process(NetObject):
    type_name = "System.Diagnostics.Process"

    def __init__(self, interp, info, node):
        v = info.values
        if v["useshellexecute"] or not (v["redirectstandardoutput"] and v["redirectstandarderror"]):
            interp.unsupported("Process.Start other than UseShellExecute = $false with both streams redirected", node)
        run = interp.host.resolve_native(interp, v["filename"], node)
        if run is None:  # Process.Start: Win32Exception "The system cannot find the file specified"
            raise interp.error('Exception calling "Start" with "1" argument(s): "The system cannot find the file '
                               'specified"', node, "System.Management.Automation.MethodInvocationException",
                               "Win32Exception")
        self.host = interp.host.host
        self.hung = False
        try:
            self.code, self.out, self.err = run(v["arguments"])
        except winsim_docker.Hung:
            self.hung, self.code, self.out, self.err = True, None, "", ""

    def prop_standardoutput(self):
        return Reader(self, self.out)

    def prop_standarderror(self):
        return Reader(self, self.err)

    def prop_exitcode(self):
        if self.hung:  # InvalidOperationException: "Process must exit before requested information can be determined."
            raise RuntimeError("not supported by the lab interpreter: ExitCode of a process still running")
        return self.code

    def m_waitforexit(self, interp, node, milliseconds=None):
        if not self.hung:
            return True if milliseconds is not None else VOID
        if milliseconds is None:
            interp.unsupported("WaitForExit() of a process that never exits", node)
        winsim_scm.advance(self.host, int(milliseconds) / 1000.0)
        return False

    def m_kill(self, interp, node):
        if self.hung:
            self.hung, self.code = False, -1
        return VOID


def _start(interp, node, info):
    if not isinstance(info, ProcessStartInfo):
        interp.unsupported("Process.Start other than Start(ProcessStartInfo)", node)
    return Process(interp, info, node)


def wrap_new_object(inner):
    def new_object(interp, b, items, node):
        name = to_str(b.get("TypeName")).lower()
        if name in ("system.diagnostics.processstartinfo", "diagnostics.processstartinfo") and \
                b.get("ArgumentList") is None:
            return [ProcessStartInfo()]
        return inner(interp, b, items, node)
    return new_object


class ShimProcess(NetObject):
    type_name = "System.Diagnostics.Process"

    def __init__(self, pid):
        self.pid = pid

    def prop_id(self):
        return self.pid

    def prop_processname(self):
        return "containerd-shim-runhcs-v1"


def _get_process(interp, b, items, node):
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_binaries
    name = b.get("Name")
    name = to_str(name[0] if isinstance(name, list) and len(name) == 1 else name)
    if name.lower() != "containerd-shim-runhcs-v1":
        interp.unsupported("Get-Process -Name %s (only containerd's shim is modelled)" % name, node)
    found = [ShimProcess(s["pid"]) for s in winsim_binaries.shims(interp.host.host)]
    if not found:
        interp.write_error(ErrorRecord(
            'Cannot find a process with the name "%s". Verify the process name and call the cmdlet again.' % name,
            "Microsoft.PowerShell.Commands.ProcessCommandException",
            "NoProcessFoundForGivenName,Microsoft.PowerShell.Commands.GetProcessCommand", "ObjectNotFound", name,
            interp.where(node)))
    return found


def register(interp):
    import copy
    interp.cmdlets["get-process"] = Cmdlet("Get-Process", _get_process, params=("Name",), positional=("Name",))
    cmdlet = copy.copy(interp.cmdlets["new-object"])  # the registered one is shared by every interpreter
    cmdlet.fn = wrap_new_object(cmdlet.fn)
    interp.cmdlets["new-object"] = cmdlet
    interp.types["diagnostics.process"] = TypeInfo("Process", "System.Diagnostics.Process", statics={"Start": _start})
