# Test-lab only: cmdlets, .NET members and native tools of a simulated Windows host.
"""What the lab interpreter offers a script running on a simulated host, over the winsim state
layer (winsim_scm, winsim_hns, winsim_files, winsim_binaries). Each behaviour names its source;
anything else is "not supported by the lab interpreter"."""

from __future__ import annotations

import base64
import copy
import datetime
import os
import re

from ansible_collections.ansible.windows.plugins.module_utils import (
    winsim_binaries,
    winsim_cmdline,
    winsim_files,
    winsim_hns,
    winsim_scm,
)
from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError, is_pipe

from . import wincrypto, winevents, winfiles, winfirewall, winprocess
from .builtins import VOID, Cmdlet, TypeInfo
from .interp import ExceptionObject, Interpreter, PSError, SwitchValue, is_true
from .values import ErrorRecord, Hashtable, NetObject, PSEnum, PSObject, RefValue, to_str, type_name

SERVICES_KEY = "hklm:\\system\\currentcontrolset\\services\\"
CURRENT_VERSION_KEY = "hklm:\\software\\microsoft\\windows nt\\currentversion"
# Update build revision (UBR) of each simulated build; a host state may set "ubr" itself. 26100: patched at least to
# October 2025's cumulative update (KB5066835, 26100.6899), which Windows Server 2025 overlay networking needs
# (realnode.md F5); a test of an older host sets "ubr".
DEFAULT_UBR = {17763: 6659, 20348: 2849, 26100: 6899}

# ServiceControllerStatus (Microsoft Learn, System.ServiceProcess.ServiceControllerStatus)
_STATUS = {"Stopped": 1, "StartPending": 2, "StopPending": 3, "Running": 4, "ContinuePending": 5,
           "PausePending": 6, "Paused": 7}


def status_enum(name):
    return PSEnum("System.ServiceProcess.ServiceControllerStatus", name, _STATUS[name])


class WinHost(object):
    """The simulated host behind an interpreter (``interp.host``)."""

    def __init__(self, host):
        self.host = host
        self.state = host.state

    def env(self, name):
        if name.lower() == "computername":
            return self.state["hostname"]
        for k, v in (self.state.get("env") or {}).items():
            if k.lower() == name.lower():
                return v
        return None

    def resolve_native(self, interp, name, node):
        """A program name or path: sc.exe and tar.exe are Windows' own (C:\\Windows\\System32); other programs
        are the stand-in binaries found like Windows finds them (winsim_binaries.resolve_executable).

        The returned function takes the ONE ``Arguments`` string Windows PowerShell 5.1 built
        (Interpreter.native_arguments); the command line is what .NET Framework's Process.Start makes of
        it (winsim_cmdline.dotnet_process_command_line) and the program splits it by its own rules (Go's
        os.Args for the Go programs, the C runtime's for sc.exe, tar.exe and nssm.exe:
        winsim_cmdline.reader_of), so an argument 5.1 drops or quotes badly is dropped or misread here too."""
        if name.lower() in ("sc.exe", "sc"):
            return self._native("C:\\Windows\\System32\\sc.exe", "crt", lambda argv: sc_exe(self.host, argv))
        if name.lower() in ("tar.exe", "tar"):
            return self._native("C:\\Windows\\System32\\tar.exe", "crt", lambda argv: _tar_exe(self.host, argv))
        win, local = winsim_binaries.resolve_executable(self.host, name)
        if local is None:
            return None
        marker = winsim_binaries.read_marker(local)
        reader = winsim_cmdline.reader_of(marker[0]) if marker else "strict"
        return self._native(win, reader,
                            lambda argv: winsim_binaries.run(self.host, [name] + argv, shell="powershell"))

    @staticmethod
    def _native(path, reader, run):
        def start(arguments):
            argv = winsim_cmdline.split_as(winsim_cmdline.dotnet_process_command_line(path, arguments), reader)
            return run(argv[1:])
        return start


def _tar_exe(host, argv):
    """bsdtar's ``-C <dir>``: the extraction starts with chdir(dir); a directory that does not exist, or a
    name Windows cannot hold (a double quote, e.g. what is left of ``"C:\\x y\\"`` once the C runtime has read
    the backslash-quote as a quote), ends tar at once with "could not chdir to '<dir>'" on stderr and exit
    code 1 (libarchive tar/util.c do_chdir: lafe_errc(1, 0, ...); Microsoft Learn, "Naming Files, Paths,
    and Namespaces": < > : " / \\ | ? * are reserved)."""
    if len(argv) == 4 and argv[2] == "-C":
        d = argv[3]
        ok = not re.search(r'[<>"|?*]', d) and ":" not in d[2:]
        if ok:
            try:
                ok = os.path.isdir(host.local_path(d))
            except SimError:
                ok = False
        if not ok:
            winsim_binaries.log_process(host, "C:\\Windows\\System32\\tar.exe", ["tar.exe"] + argv)
            return 1, "", "tar.exe: could not chdir to '%s'\r\n\r\n" % d
    return winfiles.tar_exe(host, argv)


def new_interpreter(host, script_name, error_action="Continue", whatif=False):
    interp = Interpreter(script_name, WinHost(host), error_action=error_action, whatif=whatif)
    register(interp)
    return interp


def _error_entry(message, exception_type="System.Management.Automation.RuntimeException", fqid="RuntimeException",
                 category="NotSpecified", where=""):
    """One entry of win_powershell's ``error`` list."""
    return {"exception": {"message": message, "type": exception_type}, "output": message,
            "fully_qualified_error_id": fqid, "category_info": {"category": category}, "error_details": None,
            "target_object": None, "script_stack_trace": ("at <ScriptBlock>, %s" % where) if where else ""}


def _to_ps(v):
    """win_powershell's parameters as the script receives them: dictionaries are hashtables."""
    if isinstance(v, dict):
        return Hashtable({k: _to_ps(x) for k, x in v.items()})
    if isinstance(v, list):
        return [_to_ps(x) for x in v]
    return v


def execute(host, script, sid, parameters, error_action="Continue", depth=2, check_mode=False):
    """What ansible.windows.win_powershell does with a script (its win_powershell.ps1): parameters
    bound by name, $ErrorActionPreference from error_action, -WhatIf in check mode (only scripts with
    SupportsShouldProcess run then), $Ansible.Result/Changed/Failed returned through
    Convert-OutputObject with ``depth``; a terminating error fails the task with its record."""
    from .builtins import convert_output
    ansible = PSObject({"Result": Hashtable(), "Changed": True, "Failed": False, "CheckMode": bool(check_mode),
                        "Diff": Hashtable(), "Verbosity": 0, "Tmpdir": "C:\\Windows\\TEMP"})
    interp = new_interpreter(host, "kubewin.nodes %s" % sid, error_action=error_action, whatif=bool(check_mode))
    interp.set_var("Ansible", ansible)
    errors, output, failed = [], [], False
    try:
        host.fault("script:" + sid)
        winsim_scm.refresh(host)  # services that exited since the last call show it now
        output = interp.run_script(script, _to_ps(parameters))
    except PSError as e:
        failed = True
        interp.errors.append(e.record)
    except SimError as e:
        failed = True
        errors.append(_error_entry(str(e)))
    errors = [_error_entry(r.message, r.exception_type, r.fqid, r.category, r.where) for r in interp.errors] + errors
    props = ansible.props
    return {"changed": is_true(props["Changed"]), "failed": failed or is_true(props["Failed"]),
            "result": convert_output(props["Result"], depth), "output": [convert_output(o, depth) for o in output],
            "error": errors}


def run_kubewin_script(host, sid, parameters, check_mode=False):
    """Run kubewin.nodes' script ``sid`` as its action plugins do (its scripts/<sid>.ps1 file, error_action
    stop, depth 8); returns $Ansible.Result or raises SimError with the error text."""
    from ansible_collections.kubewin.nodes.plugins.plugin_utils import _win_scripts as win_scripts
    answer = execute(host, win_scripts.load(sid), sid, parameters, error_action="Stop", depth=8, check_mode=check_mode)
    if answer["failed"]:
        raise SimError("; ".join(e["exception"]["message"] for e in answer["error"]))
    return answer


# ---------------------------------------------------------------------------------------------
# Services
# ---------------------------------------------------------------------------------------------
class ServiceController(NetObject):
    """Get-Service's System.ServiceProcess.ServiceController (Status is read when it is made)."""

    type_name = "System.ServiceProcess.ServiceController"

    def __init__(self, host, svc):
        self.host, self.svc = host, svc
        self._status = svc["status"]

    def prop_name(self):
        return self.svc["name"]

    def prop_servicename(self):
        return self.svc["name"]

    def prop_displayname(self):
        return self.svc["display_name"]

    def prop_status(self):
        return status_enum(self._status)

    def prop_dependentservices(self):
        """ServiceController.DependentServices: EnumDependentServices lists indirect dependents too
        (Microsoft Learn, EnumDependentServicesW)."""
        seen = []

        def walk(name):
            for d in winsim_scm.dependents(self.host.state, name):
                if d not in seen:
                    seen.append(d)
                    walk(d["name"])
        walk(self.svc["name"])
        return [ServiceController(self.host, d) for d in seen]

    def __str__(self):
        return self.type_name


class Win32Service(NetObject):
    """Get-CimInstance Win32_Service (State is the display text, ProcessId 0 when stopped)."""

    type_name = "Microsoft.Management.Infrastructure.CimInstance#root/cimv2/Win32_Service"

    def __init__(self, host, svc):
        self.host, self.svc = host, svc
        self.status, self.pid = winsim_scm.observe(host, svc)
        self.exit_code, self.specific = winsim_scm.exit_codes(host, svc)

    def prop_name(self):
        return self.svc["name"]

    def prop_state(self):
        return {"StartPending": "Start Pending", "StopPending": "Stop Pending"}.get(self.status, self.status)

    def prop_processid(self):
        return int(self.pid or 0)

    def prop_exitcode(self):
        return self.exit_code

    def prop_servicespecificexitcode(self):
        return self.specific

    def prop_pathname(self):
        return self.svc["image_path"]


class CimResult(NetObject):
    ps_props = ("ReturnValue",)

    def __init__(self, rv):
        self.ReturnValue = rv


def _svc_error(interp, message, fqid, node, target=None):
    interp.write_error(ErrorRecord(message, "Microsoft.PowerShell.Commands.ServiceCommandException", fqid,
                                   "ObjectNotFound" if "NoServiceFound" in fqid else "OpenError", target,
                                   interp.where(node)))


def _one_name(interp, b, node, cmd):
    name = b.get("Name")
    if isinstance(name, list):
        if len(name) != 1:
            interp.unsupported("%s with several names" % cmd, node)
        name = name[0]
    name = to_str(name)
    if re.search(r"[*?\[]", name):
        interp.unsupported("%s with a wildcard name" % cmd, node)
    return name


def _get_service(interp, b, items, node):
    """Get-Service -Name: a missing service is a non-terminating error (NoServiceFoundForGivenName)."""
    host = interp.host.host
    winsim_scm.refresh(host)
    name = _one_name(interp, b, node, "Get-Service")
    svc = winsim_scm.find(host.state, name)
    if svc is None:
        _svc_error(interp, "Cannot find any service with service name '%s'." % name,
                   "NoServiceFoundForGivenName,Microsoft.PowerShell.Commands.GetServiceCommand", node, name)
        return []
    return [ServiceController(host, svc)]


def _stop_service(interp, b, items, node):
    """Stop-Service -Force: dependents stop first (ServiceController.Stop). Without -Force a service whose dependents
    run is not stopped: "Cannot stop service ... because it has dependent services. It can only be stopped if the
    Force flag is set." (PowerShell Service.cs StopServiceCommand, ServiceCannotBeStoppedWithDependents)."""
    host = interp.host.host
    name = _one_name(interp, b, node, "Stop-Service")
    try:
        winsim_scm.stop(host, name, force="Force" in b)
    except SimError as e:
        _svc_error(interp, str(e), "CouldNotStopService,Microsoft.PowerShell.Commands.StopServiceCommand", node)
    return []


def _start_service(interp, b, items, node):
    host = interp.host.host
    name = _one_name(interp, b, node, "Start-Service")
    try:
        winsim_scm.start(host, name)
    except SimError as e:
        _svc_error(interp, str(e), "StartServiceFailed,Microsoft.PowerShell.Commands.StartServiceCommand", node)
    return []


def _validate_service_args(interp, b, node, cmd, mandatory=(), not_empty=()):
    """Parameter binding of the service cmdlets as PowerShell's Service.cs declares them (src/
    Microsoft.PowerShell.Commands.Management/commands/management/Service.cs): a Mandatory string
    parameter refuses $null and '' (ParameterBinderBase: ParameterArgumentValidationErrorEmptyStringNotAllowed
    unless [AllowEmptyString]); a [ValidateNotNullOrEmpty] one refuses them too. Both stop the command
    before it does anything (a ParameterBindingValidationException). New-Service: Name and
    BinaryPathName Mandatory, DisplayName and Description ValidateNotNullOrEmpty; Set-Service: Name
    Mandatory, DisplayName, Description, StartupType ValidateNotNullOrEmpty (Microsoft Learn, New-Service and
    Set-Service, "Parameters")."""
    full = "Microsoft.PowerShell.Commands.%sCommand" % cmd.replace("-", "")
    for pname in mandatory:
        if pname not in b:
            raise interp.error("Cannot process command because of one or more missing mandatory parameters: %s."
                               % pname, node, "System.Management.Automation.ParameterBindingException",
                               "MissingMandatoryParameter," + full, "InvalidArgument")
        value = b[pname]
        if value is None or (not isinstance(value, list) and to_str(value) == ""):
            raise interp.error("Cannot bind argument to parameter '%s' because it is %s." % (
                pname, "null" if value is None else "an empty string"), node,
                "System.Management.Automation.ParameterBindingValidationException",
                "ParameterArgumentValidationError%sNotAllowed,%s" % (
                    "Null" if value is None else "EmptyString", full), "InvalidData")
    for pname in not_empty:
        if pname not in b:
            continue
        value = b[pname]
        if value is None or (isinstance(value, list) and not value) or (
                not isinstance(value, list) and to_str(value) == ""):
            raise interp.error("Cannot validate argument on parameter '%s'. The argument is null or empty. Provide "
                               "an argument that is not null or empty, and then try the command again." % pname,
                               node, "System.Management.Automation.ParameterBindingValidationException",
                               "ParameterArgumentValidationError," + full, "InvalidData")


def _new_service(interp, b, items, node):
    """New-Service (Windows PowerShell 5.1 parameters); StartupType Automatic is start 2."""
    host = interp.host.host
    _validate_service_args(interp, b, node, "New-Service", mandatory=("Name", "BinaryPathName"),
                           not_empty=("DisplayName", "Description"))
    name = _one_name(interp, b, node, "New-Service")
    startup = to_str(b.get("StartupType", "Automatic")).lower()
    if startup not in ("automatic", "manual", "disabled"):
        interp.unsupported("New-Service -StartupType %s" % startup, node)
    deps = b.get("DependsOn")
    deps = [] if deps is None else [to_str(d) for d in (deps if isinstance(deps, list) else [deps])]
    try:
        svc = winsim_scm.create(host.state, name, to_str(b.get("BinaryPathName")), to_str(b.get("DisplayName")),
                                start=winsim_scm.START_MODES[startup], dependencies=deps,
                                description=to_str(b.get("Description", "")))
    except SimError as e:
        interp.write_error(ErrorRecord(str(e), "System.InvalidOperationException",
                                       "CouldNotNewService,Microsoft.PowerShell.Commands.NewServiceCommand",
                                       "PermissionDenied", name, interp.where(node)))
        return []
    return [ServiceController(host, svc)]


def _set_service(interp, b, items, node):
    host = interp.host.host
    _validate_service_args(interp, b, node, "Set-Service", mandatory=("Name",),
                           not_empty=("DisplayName", "Description", "StartupType"))
    name = _one_name(interp, b, node, "Set-Service")
    if set(b) - {"Name", "Description"}:
        interp.unsupported("Set-Service -%s" % sorted(set(b) - {"Name", "Description"})[0], node)
    svc = winsim_scm.find(host.state, name)
    if svc is None:
        _svc_error(interp, "Service %s was not found on computer '.'." % name,
                   "ServiceNotFound,Microsoft.PowerShell.Commands.SetServiceCommand", node)
        return []
    svc["description"] = to_str(b.get("Description"))
    return []


class Win32Process(NetObject):
    """Get-CimInstance Win32_Process: the application NSSM runs for a service (winsim_scm.child_process);
    other processes are not modelled."""

    type_name = "Microsoft.Management.Infrastructure.CimInstance#root/cimv2/Win32_Process"

    def __init__(self, pid, parent, name):
        self.pid, self.parent, self.name = pid, parent, name

    def prop_processid(self):
        return self.pid

    def prop_parentprocessid(self):
        return self.parent

    def prop_name(self):
        return self.name


# WQL as the filters are written (Microsoft Learn, "WQL Operators" and "WHERE Clause"): a string between
# single quotes with backslash escapes; anything else is not supported by the lab.
_WQL_STRING = r"'((?:[^'\\]|\\.)*)'"
_WQL_SERVICE = re.compile(r"^\s*Name\s*=\s*%s\s*$" % _WQL_STRING, re.I)
_WQL_CHILD = re.compile(r"^\s*ParentProcessId\s*=\s*(\d+)(?:\s+AND\s+Name\s*=\s*%s)?\s*$" % _WQL_STRING, re.I)


def _wql_unescape(text):
    return re.sub(r"\\(.)", r"\1", text)


def _wmi_fault(interp, cls, node):
    """A WMI failure injected for the class ``cls`` (a test's fault "cim:<class, lower case>": core.set_fault, modes
    fail_once / fail_always / timeout). As CimCmdlets reports a failed query (PowerShell's CimWriteError.cs: Execute
    calls cmdlet.WriteError with an ErrorRecord whose exception is the CimException and whose id is its MessageId,
    "HRESULT 0x...", then the command): a non-terminating error, which $ErrorActionPreference Stop makes terminating.
    The error is WBEM_E_QUOTA_VIOLATION (0x8004106C, "Quota violation"; Microsoft Learn, "WMI Error Constants"), what
    a busy WMI provider host answers. True when the query failed (and Stop did not end the statement)."""
    try:
        interp.host.host.fault("cim:" + cls)
    except SimError as e:
        interp.write_error(ErrorRecord("Quota violation (%s)" % e, "Microsoft.Management.Infrastructure.CimException",
                                       "HRESULT 0x8004106c,Microsoft.Management.Infrastructure.CimCmdlets."
                                       "GetCimInstanceCommand", "NotSpecified", None, interp.where(node)))
        return True
    return False


def _get_cim_instance(interp, b, items, node):
    """Get-CimInstance -ClassName Win32_Service [-Filter "Name='x'"] and -ClassName Win32_Process
    -Filter "ParentProcessId=N [AND Name='x.exe']". Without -Filter every service is enumerated; a
    filter that matches nothing returns nothing (no error). A WMI failure can be injected (_wmi_fault)."""
    cls = to_str(b.get("ClassName")).lower()
    wql = to_str(b.get("Filter")) if b.get("Filter") is not None else None
    if set(b) - {"ClassName", "Filter"} or cls not in ("win32_service", "win32_process") or (
            cls == "win32_process" and wql is None):
        interp.unsupported("Get-CimInstance other than Win32_Service, or Win32_Process by ParentProcessId", node)
    if _wmi_fault(interp, cls, node):
        return []
    host = interp.host.host
    if cls == "win32_service":
        if wql is None:
            return [Win32Service(host, s) for s in list(host.state["services"].values())]
        m = _WQL_SERVICE.match(wql)
        if not m:
            interp.unsupported("Win32_Service filter %r" % wql, node)
        want = _wql_unescape(m.group(1)).lower()
        return [Win32Service(host, s) for s in list(host.state["services"].values()) if s["name"].lower() == want]
    m = _WQL_CHILD.match(wql)
    if not m:
        interp.unsupported("Win32_Process filter %r" % wql, node)
    parent = int(m.group(1))
    name = _wql_unescape(m.group(2)).lower() if m.group(2) is not None else None
    found = []
    for svc in list(host.state["services"].values()):
        status, pid = winsim_scm.observe(host, svc)
        child = winsim_scm.child_process(host, svc) if status != "Stopped" else None
        if pid and pid == parent and child and (name is None or child[1].lower() == name):
            found.append(Win32Process(child[0], parent, child[1]))
    return found


def _invoke_cim_method(interp, b, items, node):
    """Win32_Service.Change (Microsoft Learn, Change method of the Win32_Service class): PathName,
    DisplayName, StartMode, ServiceDependencies. ReturnValue 0 on success."""
    obj = b.get("InputObject")
    if obj is None:
        raise interp.error("Cannot bind argument to parameter 'InputObject' because it is null.", node,
                           "System.Management.Automation.ParameterBindingValidationException",
                           "ParameterArgumentValidationErrorNullNotAllowed", "InvalidData")
    if not isinstance(obj, Win32Service) or to_str(b.get("MethodName")).lower() != "change":
        interp.unsupported("Invoke-CimMethod other than Win32_Service Change", node)
    args = b.get("Arguments") or Hashtable()
    known = {"pathname", "displayname", "startmode", "servicedependencies"}
    if any(k.lower() not in known for k in args.keys()):
        interp.unsupported("Win32_Service.Change arguments %s" % args.keys(), node)
    svc = obj.svc
    if svc["name"].lower() not in interp.host.state["services"]:
        return [CimResult(24)]  # Service Not Found... the instance is gone
    mode = args.get("StartMode")
    if mode is not None and to_str(mode).lower() not in ("automatic", "manual", "disabled", "boot", "system"):
        return [CimResult(21)]  # Invalid Parameter
    if args.get("PathName") is not None:
        svc["image_path"] = to_str(args.get("PathName"))
    if "displayname" in [k.lower() for k in args.keys()]:
        # an empty DisplayName: the SCM shows the service name (winsim's choice, as before this interpreter)
        svc["display_name"] = to_str(args.get("DisplayName")) or svc["name"]
    if mode is not None:
        svc["start"] = winsim_scm.START_MODES[to_str(mode).lower()]
    deps = args.get("ServiceDependencies")
    if deps is not None:
        svc["dependencies"] = [to_str(d) for d in (deps if isinstance(deps, list) else [deps])]
    return [CimResult(0)]


# ---------------------------------------------------------------------------------------------
# sc.exe (Microsoft Learn, sc.exe delete / failure / failureflag): messages on stdout, the Win32
# error code as the exit code
# ---------------------------------------------------------------------------------------------
_SC_ERROR = re.compile(r"FAILED (\d+)")


def sc_exe(host, argv):
    winsim_binaries.log_process(host, "C:\\Windows\\System32\\sc.exe", ["sc.exe"] + argv)
    if not argv:
        return 0, "DESCRIPTION:\r\n        SC is a command line program used for communicating with the\r\n", ""
    verb = argv[0].lower()
    try:
        if verb == "delete" and len(argv) == 2:
            winsim_scm.delete(host.state, argv[1])
            return 0, "[SC] DeleteService SUCCESS\r\n", ""
        if verb == "failure" and len(argv) >= 2:
            svc = winsim_scm.require(host.state, argv[1])
            opts = {}
            rest = argv[2:]
            while rest:
                key = rest.pop(0).lower()
                if not key.endswith("=") or not rest:
                    return 1639, "[SC] failure: invalid option %s\r\n" % key, ""
                opts[key[:-1]] = rest.pop(0)
            reset = opts.get("reset")
            actions = winsim_scm.parse_sc_actions(opts.get("actions", ""))
            if reset is None or not reset.isdigit():
                # sc.exe: "reset= must be specified with actions=" (ERROR_INVALID_PARAMETER)
                return 87, "[SC] ChangeServiceConfig2 FAILED 87:\r\n\r\nThe parameter is incorrect.\r\n", ""
            svc["failure_actions"] = winsim_scm.encode_failure_actions(int(reset), actions)
            return 0, "[SC] ChangeServiceConfig2 SUCCESS\r\n", ""
        if verb == "failureflag" and len(argv) == 3 and argv[2] in ("0", "1"):
            svc = winsim_scm.require(host.state, argv[1])
            svc["failure_actions_on_non_crash"] = int(argv[2])
            return 0, "[SC] ChangeServiceConfig2 SUCCESS\r\n", ""
    except SimError as e:
        m = _SC_ERROR.search(str(e))
        return int(m.group(1)) if m else 1, "%s\r\n" % e, ""
    raise SimError("winsim: sc.exe %s is not simulated" % " ".join(argv))


# ---------------------------------------------------------------------------------------------
# Registry (HKLM:\SYSTEM\CurrentControlSet\Services\<name>[\Parameters], CurrentVersion)
# ---------------------------------------------------------------------------------------------
def _expand(host, text):
    """REG_EXPAND_SZ as RegistryKey.GetValue returns it without DoNotExpandEnvironmentNames."""
    env = {k.lower(): v for k, v in (host.state.get("env") or {}).items()}
    env.setdefault("systemroot", "C:\\Windows")
    env.setdefault("systemdrive", "C:")
    return re.sub(r"%([^%]+)%", lambda m: env.get(m.group(1).lower(), m.group(0)), text)


class RegistryKey(NetObject):
    """Microsoft.Win32.RegistryKey: GetValue(name[, default[, options]]), GetValueNames()."""

    type_name = "Microsoft.Win32.RegistryKey"

    def __init__(self, host, path, values, expand=()):
        self.host, self.path, self.values, self.expand = host, path, values, {e.lower() for e in expand}

    def _find(self, name):
        for k, v in self.values.items():
            if k.lower() == to_str(name).lower():
                return k, v
        return None, None

    def m_getvalue(self, interp, node, name, default=None, options=None):
        k, v = self._find(name)
        if k is None:
            return default
        if options is not None and to_str(options).lower() not in ("donotexpandenvironmentnames", "none"):
            interp.unsupported("RegistryValueOptions %s" % to_str(options), node)
        if k.lower() in self.expand and (options is None or to_str(options).lower() == "none"):
            return _expand(self.host, v)
        return v

    def m_getvaluenames(self, interp, node):
        return list(self.values.keys())

    def prop_name(self):
        return self.path


def _service_values(svc):
    """The values the SCM keeps under the service's key; absent ones are not listed."""
    v = {"Type": 16, "Start": svc["start"], "ErrorControl": 1, "ImagePath": svc["image_path"],
         "DisplayName": svc["display_name"], "ObjectName": svc["object_name"]}
    if svc.get("description"):
        v["Description"] = svc["description"]
    if svc.get("dependencies"):
        v["DependOnService"] = list(svc["dependencies"])
    if svc.get("delayed_autostart"):
        v["DelayedAutostart"] = svc["delayed_autostart"]
    if svc.get("environment"):
        v["Environment"] = list(svc["environment"])
    if svc.get("failure_actions"):
        v["FailureActions"] = list(base64.b64decode(svc["failure_actions"]))
    if svc.get("failure_actions_on_non_crash") is not None:
        v["FailureActionsOnNonCrashFailures"] = svc["failure_actions_on_non_crash"]
    return v


def _registry_target(interp, path, node):
    """-> ('service', svc) / ('parameters', svc) / ('currentversion', None) / (None, None) when absent."""
    p = to_str(path)
    low = p.lower().rstrip("\\")
    if low.startswith("registry::hkey_local_machine\\"):
        low = "hklm:\\" + low[len("registry::hkey_local_machine\\"):]
    if low == CURRENT_VERSION_KEY:
        return "currentversion", None
    if low.startswith(SERVICES_KEY):
        rest = low[len(SERVICES_KEY):].split("\\")
        svc = interp.host.state["services"].get(rest[0])
        if len(rest) == 1:
            return ("service", svc) if svc else (None, None)
        if len(rest) == 2 and rest[1] == "parameters":
            if svc and (svc.get("parameters") or svc.get("parameters_key")):
                return "parameters", svc
            return None, None
    interp.unsupported("registry path %s" % p, node)


def _current_version(state):
    build = int(state.get("build") or 0)
    return {"CurrentMajorVersionNumber": 10, "CurrentMinorVersionNumber": 0, "CurrentBuildNumber": str(build),
            "UBR": int(state.get("ubr", DEFAULT_UBR.get(build, 1)))}


def _key_object(interp, kind, svc, path):
    host = interp.host.host
    if kind == "service":
        return RegistryKey(host, path, _service_values(svc), expand=("ImagePath",))
    if kind == "parameters":
        return RegistryKey(host, path, svc.setdefault("parameters", {}))
    return RegistryKey(host, path, _current_version(host.state))


def _not_found(interp, path, node, cmd):
    interp.write_error(ErrorRecord("Cannot find path '%s' because it does not exist." % to_str(path),
                                   "System.Management.Automation.ItemNotFoundException",
                                   "PathNotFound,Microsoft.PowerShell.Commands.%sCommand" % cmd.replace("-", ""),
                                   "ObjectNotFound", to_str(path), interp.where(node)))


def _is_registry(path):
    return to_str(path).lower().startswith(("hklm:", "registry::"))


def _get_item(interp, b, items, node):
    path = b.get("LiteralPath")
    if path is None or set(b) - {"LiteralPath", "Force"}:
        interp.unsupported("Get-Item without -LiteralPath", node)
    if not _is_registry(path):
        if "Force" not in b:
            interp.unsupported("Get-Item of a file system path without -Force", node)
        return winfiles.get_item(interp, b, items, node)
    kind, svc = _registry_target(interp, path, node)
    if kind is None:
        _not_found(interp, path, node, "Get-Item")
        return []
    return [_key_object(interp, kind, svc, to_str(path))]


def _get_item_property(interp, b, items, node):
    """Get-ItemProperty of a key: one object with a property per value (REG_EXPAND_SZ expanded)."""
    path = b.get("LiteralPath")
    if path is None or set(b) != {"LiteralPath"} or not _is_registry(path):
        interp.unsupported("Get-ItemProperty other than -LiteralPath of a registry key", node)
    kind, svc = _registry_target(interp, path, node)
    if kind is None:
        _not_found(interp, path, node, "Get-ItemProperty")
        return []
    key = _key_object(interp, kind, svc, to_str(path))
    return [PSObject({k: key.m_getvalue(interp, node, k) for k in key.values})]


_REG_TYPES = ("string", "expandstring", "dword", "multistring", "binary", "qword")


def _set_item_property(interp, b, items, node):
    path, name = b.get("LiteralPath"), to_str(b.get("Name"))
    if path is None or not _is_registry(path) or set(b) - {"LiteralPath", "Name", "Value", "Type"}:
        interp.unsupported("Set-ItemProperty other than -LiteralPath -Name -Value [-Type] of a registry key", node)
    kind, svc = _registry_target(interp, path, node)
    if kind is None:
        _not_found(interp, path, node, "Set-ItemProperty")
        return []
    value = b.get("Value")
    vtype = to_str(b.get("Type", "")).lower() or None
    if vtype is not None and vtype not in _REG_TYPES:
        raise interp.error("Cannot bind parameter 'Type'. Cannot convert value \"%s\" to type "
                           "\"Microsoft.Win32.RegistryValueKind\"." % to_str(b.get("Type")), node,
                           "System.Management.Automation.ParameterBindingException", "CannotConvertArgumentNoMessage")
    stored = _registry_value(interp, value, vtype, node)
    if kind == "parameters":
        params = svc.setdefault("parameters", {})
        existing = next((k for k in params if k.lower() == name.lower()), name)
        params[existing] = stored
        return []
    if kind != "service":
        interp.unsupported("Set-ItemProperty on %s" % to_str(path), node)
    low = name.lower()
    if low == "delayedautostart":
        svc["delayed_autostart"] = stored
    elif low == "environment":
        svc["environment"] = stored if isinstance(stored, list) else [stored]
    else:
        interp.unsupported("Set-ItemProperty of the service value %s" % name, node)
    return []


def _registry_value(interp, value, vtype, node):
    """Set-ItemProperty -Type (RegistryValueKind): DWord takes an Int32 (a larger number does not
    convert), MultiString a string array, String text."""
    if vtype == "dword" or (vtype is None and isinstance(value, int) and not isinstance(value, bool)):
        if isinstance(value, bool) or not isinstance(value, int) or not -2 ** 31 <= value < 2 ** 31:
            try:
                value = interp.convert(value, interp.resolve_type("int"), node)
            except PSError:
                raise interp.error("The type of the value object did not match the specified RegistryValueKind or "
                                   "the object could not be properly converted.", node,
                                   "System.ArgumentException") from None
        return value
    if vtype == "multistring":
        items = value if isinstance(value, list) else [value]
        return [to_str(i) for i in items]
    if vtype in ("string", "expandstring", None):
        if isinstance(value, list):
            interp.unsupported("a string value from an array", node)
        return to_str(value)
    interp.unsupported("registry type %s" % vtype, node)


def _remove_item_property(interp, b, items, node):
    path, name = b.get("LiteralPath"), to_str(b.get("Name"))
    kind, svc = _registry_target(interp, path, node)
    if kind != "service" or name.lower() != "environment":
        interp.unsupported("Remove-ItemProperty other than a service's Environment", node)
    if not svc.get("environment"):
        interp.write_error(ErrorRecord("Property %s does not exist at path %s." % (name, to_str(path)),
                                       "System.Management.Automation.PSArgumentException",
                                       "System.Management.Automation.PSArgumentException,"
                                       "Microsoft.PowerShell.Commands.RemoveItemPropertyCommand",
                                       "InvalidArgument", name, interp.where(node)))
        return []
    svc["environment"] = []
    return []


def _new_item(interp, b, items, node):
    path = b.get("Path")
    if path is not None and not _is_registry(path):
        return winfiles.new_directory(interp, b, node)
    if path is None or set(b) != {"Path"} or not _is_registry(path):
        interp.unsupported("New-Item other than -Path of a registry key", node)
    low = to_str(path).lower().rstrip("\\")
    m = re.match(re.escape(SERVICES_KEY) + r"([^\\]+)\\parameters$", low)
    if not m:
        interp.unsupported("New-Item of the registry key %s" % to_str(path), node)
    svc = interp.host.state["services"].get(m.group(1))
    if svc is None:
        _not_found(interp, path, node, "New-Item")
        return []
    if svc.get("parameters") or svc.get("parameters_key"):
        interp.write_error(ErrorRecord("A key at this path already exists.", "System.IO.IOException",
                                       "System.IO.IOException,Microsoft.PowerShell.Commands.NewItemCommand",
                                       "WriteError", to_str(path), interp.where(node)))
        return []
    svc["parameters_key"] = True
    svc.setdefault("parameters", {})
    return [_key_object(interp, "parameters", svc, to_str(path))]


# ---------------------------------------------------------------------------------------------
# Files, pipes, adapters, time
# ---------------------------------------------------------------------------------------------
def _test_path(interp, b, items, node):
    """Test-Path -LiteralPath [-PathType Leaf|Container|Any]: a pipe is a leaf (\\\\.\\pipe\\ is the
    named pipe file system); another drive or an unreachable path is $false."""
    path = b.get("LiteralPath")
    if path is None or set(b) - {"LiteralPath", "PathType"}:
        interp.unsupported("Test-Path without -LiteralPath", node)
    kind = to_str(b.get("PathType", "Any")).lower()
    if kind not in ("any", "leaf", "container"):
        interp.unsupported("Test-Path -PathType %s" % kind, node)
    host = interp.host.host
    p = to_str(path)
    if p == "":
        raise interp.error("Cannot bind argument to parameter 'LiteralPath' because it is an empty string.", node,
                           "System.Management.Automation.ParameterBindingValidationException",
                           "ParameterArgumentValidationErrorEmptyStringNotAllowed", "InvalidData")
    if _is_registry(p):
        k, _ = _registry_target(interp, p, node)
        return [k is not None and kind != "leaf"]
    if is_pipe(p):
        name = p[len("\\\\.\\pipe\\"):].lower()
        exists = any(x.lower() == "\\\\.\\pipe\\" + name for x in host.state.get("pipes") or [])
        return [exists and kind != "container"]
    local = winsim_files.resolve(host, p)
    if local is None:
        return [False]
    if kind == "leaf":
        return [os.path.isfile(local)]
    if kind == "container":
        return [os.path.isdir(local)]
    return [os.path.exists(local)]


def _get_content(interp, b, items, node):
    """Get-Content -LiteralPath [-Tail n]: the file's lines (UTF-8 / BOM-detected text). A test's fault
    "cmdlet:get-content" (core.set_fault) makes the file vanish just before the read (a log rotated away after a
    Test-Path): the cmdlet's not-found error, as for any missing file."""
    path = b.get("LiteralPath")
    if path is None or set(b) - {"LiteralPath", "Tail"}:
        interp.unsupported("Get-Content other than -LiteralPath [-Tail]", node)
    local = winsim_files.resolve(interp.host.host, to_str(path))
    try:
        interp.host.host.fault("cmdlet:get-content")
    except SimError:
        local = None
    if local is None or not os.path.isfile(local):
        _not_found(interp, path, node, "Get-Content")
        return []
    with open(local, "rb") as f:
        lines = f.read().decode("utf-8-sig", "replace").splitlines()
    if "Tail" in b:
        n = int(interp.convert(b["Tail"], interp.resolve_type("int"), node))
        lines = lines[-n:] if n > 0 else []
    return lines


class NetAdapter(NetObject):
    ps_props = ("Name", "MacAddress", "ifIndex", "Status")

    def __init__(self, name, mac, index, ips, prefix=None):
        self.Name, self.MacAddress, self.ifIndex, self.Status, self.ips = name, mac, index, "Up", ips
        self.prefix = prefix


class NetIPAddress(NetObject):
    # MSFT_NetIPAddress (Microsoft Learn, "MSFT_NetIPAddress class"): PrefixLength is the subnet's length in bits.
    ps_props = ("IPAddress", "InterfaceIndex", "AddressFamily", "PrefixLength")

    def __init__(self, ip, index, prefix):
        self.IPAddress, self.InterfaceIndex, self.AddressFamily = ip, index, "IPv4"
        self.PrefixLength = prefix


def _adapters(state):
    """Up adapters. An adapter bound to an HNS vSwitch keeps its MAC but its addresses move to the
    host vNIC 'vEthernet (<adapter>)' (Microsoft Learn, Hyper-V external virtual switch)."""
    vswitches = (state.get("hns") or {}).get("vswitches") or {}
    out = []
    for a in state.get("adapters") or []:
        ips = [a["ip"]] if a.get("ip") else []
        prefix = int(a.get("prefix", 24))
        if a["name"] in vswitches:
            out.append(NetAdapter(a["name"], a["mac"], len(out) + 2, []))
            out.append(NetAdapter(vswitches[a["name"]], a["mac"], len(out) + 2, ips, prefix))
        else:
            out.append(NetAdapter(a["name"], a["mac"], len(out) + 2, ips, prefix))
    return out


def _get_net_adapter(interp, b, items, node):
    if b:
        interp.unsupported("Get-NetAdapter with parameters", node)
    return _adapters(interp.host.state)


def _get_net_ip_address(interp, b, items, node):
    if set(b) - {"InterfaceIndex", "AddressFamily"} or to_str(b.get("AddressFamily", "IPv4")).lower() != "ipv4":
        interp.unsupported("Get-NetIPAddress other than -InterfaceIndex -AddressFamily IPv4", node)
    index = int(b["InterfaceIndex"])
    for a in _adapters(interp.host.state):
        if a.ifIndex == index:
            if not a.ips:
                interp.write_error(ErrorRecord("No matching MSFT_NetIPAddress objects found by CIM query for "
                                               "instances of the ROOT/StandardCimv2/MSFT_NetIPAddress class on the  "
                                               "CIM server", "Microsoft.Management.Infrastructure.CimException",
                                               "CmdletizationQuery_NotFound,Get-NetIPAddress", "ObjectNotFound",
                                               None, interp.where(node)))
            return [NetIPAddress(ip, index, a.prefix) for ip in a.ips]
    return []


class Stopwatch(NetObject):
    """System.Diagnostics.Stopwatch over the host's clock (winsim_scm.clock: Start-Sleep moves it on)."""

    def __init__(self, host):
        self.host = host
        self.start = winsim_scm.clock(host)

    def prop_elapsedmilliseconds(self):
        return int((winsim_scm.clock(self.host) - self.start) * 1000)


def _start_sleep(interp, b, items, node):
    """Start-Sleep: the host's clock moves on instead of waiting (winsim_scm.advance)."""
    if "Milliseconds" in b:
        seconds = int(b["Milliseconds"]) / 1000.0
    elif "Seconds" in b:
        seconds = float(b["Seconds"])
    else:
        interp.unsupported("Start-Sleep without -Milliseconds/-Seconds", node)
    winsim_scm.advance(interp.host.host, seconds)
    return []


# ---------------------------------------------------------------------------------------------
# Add-Type: the HNS P/Invoke
# ---------------------------------------------------------------------------------------------
_HNS_SIGNATURE = re.compile(
    r'^\s*\[DllImport\("vmcompute\.dll"\)\]\s*public static extern int HNSCall\(\s*'
    r"\[MarshalAs\(UnmanagedType\.LPWStr\)\] string method,\s*"
    r"\[MarshalAs\(UnmanagedType\.LPWStr\)\] string path,\s*"
    r"\[MarshalAs\(UnmanagedType\.LPWStr\)\] string request,\s*"
    r"\[MarshalAs\(UnmanagedType\.LPWStr\)\] out string response\);\s*$")


# node_health's HNS v2 load balancer reader: computenetwork.dll's four calls with hcsshim's signatures
# (hcn/zsyscall_windows.go: hcnEnumerateLoadBalancers(query, loadBalancers **uint16, result **uint16),
# hcnOpenLoadBalancer(id *_guid, loadBalancer *hcnLoadBalancer, result **uint16), hcnQueryLoadBalancerProperties(
# loadBalancer, query, properties **uint16, result **uint16), hcnCloseLoadBalancer(loadBalancer)) and the two public
# methods the script calls; their C# bodies are not run here: winsim_hns answers what they return.
_HCN_LB_PARTS = [re.compile(r"\s+".join(re.escape(w) for w in text.split())) for text in (
    '[DllImport("computenetwork.dll")] static extern int HcnEnumerateLoadBalancers( [MarshalAs(UnmanagedType.LPWStr)] '
    'string query, [MarshalAs(UnmanagedType.LPWStr)] out string loadBalancers, [MarshalAs(UnmanagedType.LPWStr)] out '
    'string result);',
    '[DllImport("computenetwork.dll")] static extern int HcnOpenLoadBalancer( ref Guid id, out IntPtr loadBalancer, '
    '[MarshalAs(UnmanagedType.LPWStr)] out string result);',
    '[DllImport("computenetwork.dll")] static extern int HcnQueryLoadBalancerProperties( IntPtr loadBalancer, '
    '[MarshalAs(UnmanagedType.LPWStr)] string query, [MarshalAs(UnmanagedType.LPWStr)] out string properties, '
    '[MarshalAs(UnmanagedType.LPWStr)] out string result);',
    '[DllImport("computenetwork.dll")] static extern int HcnCloseLoadBalancer(IntPtr loadBalancer);',
    'public static string Ids(string query) {', 'public static string Properties(string id, string query) {')]


def _hcn_load_balancers(interp, full, name):
    host = interp.host.host

    def call(i, n, method, fn, *args):
        host.fault("exec:hns")
        try:
            return fn(host.state, *[to_str(a) for a in args])
        except winsim_hns.HnsFail as e:
            raise i.error('Exception calling "%s" with "%d" argument(s): "%s"' % (method, len(args), e), n,
                          "System.Management.Automation.MethodInvocationException", "Exception") from None

    interp.types[full.lower()] = TypeInfo(name, full, statics={
        "Ids": lambda i, n, query: call(i, n, "Ids", winsim_hns.load_balancer_ids, query),
        "Properties": lambda i, n, lb, query: call(i, n, "Properties", winsim_hns.load_balancer_properties, lb, query)})
    return []


def _add_type(interp, b, items, node):
    """Add-Type -Namespace -Name -MemberDefinition: only vmcompute.dll's HNSCall with the hcsshim
    signature (``_hnsCall(method, path, object *uint16, response **uint16) (hr error)``), and node_health's HNS v2
    load balancer reader (_HCN_LB_PARTS)."""
    definition = to_str(b.get("MemberDefinition"))
    full = "%s.%s" % (to_str(b.get("Namespace")), to_str(b.get("Name")))
    if set(b) == {"Namespace", "Name", "MemberDefinition"} and all(p.search(definition) for p in _HCN_LB_PARTS):
        return _hcn_load_balancers(interp, full, b["Name"])
    if set(b) != {"Namespace", "Name", "MemberDefinition"} or not _HNS_SIGNATURE.match(definition):
        interp.unsupported("Add-Type other than the HNSCall P/Invoke", node)
    host = interp.host.host

    def hns_call(i, n, method, path, request, response):
        if not isinstance(response, RefValue):
            raise i.error('Argument: \'4\' should be a System.Management.Automation.PSReference. Use [ref].', n,
                          "System.Management.Automation.MethodException", "NonRefArgumentToRefParameterMsg")
        host.fault("exec:hns")
        response.value = winsim_hns.call(host.state, to_str(method), to_str(path), to_str(request))
        return 0
    interp.types[full.lower()] = TypeInfo(b["Name"], full, statics={"HNSCall": hns_call})
    return []


def _exception_for_hr(interp, node, hr):
    """Marshal.GetExceptionForHR: a COMException whose message is the system text of the HRESULT."""
    code = int(hr) & 0xFFFFFFFF
    texts = {0x80070002: "The system cannot find the file specified.", 0x80070005: "Access is denied.",
             0x80070057: "The parameter is incorrect.", 0x800706D9: "There are no more endpoints available from "
             "the endpoint mapper."}
    msg = "%s (Exception from HRESULT: 0x%08X)" % (texts[code], code) if code in texts else \
        "Exception from HRESULT: 0x%08X" % code
    return ExceptionObject(ErrorRecord(msg, "System.Runtime.InteropServices.COMException"))


def _read_all_text(interp, node, path):
    """[IO.File]::ReadAllText: UTF-8 with BOM detection; a missing file is a FileNotFoundException."""
    local = winsim_files.resolve(interp.host.host, to_str(path))
    if local is None or not os.path.isfile(local):
        raise interp.error('Exception calling "ReadAllText" with "1" argument(s): "Could not find file \'%s\'."'
                           % to_str(path), node, "System.Management.Automation.MethodInvocationException",
                           "FileNotFoundException")
    with open(local, "rb") as f:
        return f.read().decode("utf-8-sig", "replace")


def _get_env(interp, node, name, target=None):
    if target is None or to_str(target).lower() != "machine":
        interp.unsupported("[Environment]::GetEnvironmentVariable without the Machine target", node)
    env = interp.host.state.get("env") or {}
    value = next((v for k, v in env.items() if k.lower() == to_str(name).lower()), None)
    # .NET Framework reads a Machine variable with RegistryKey.GetValue(name) (referencesource environment.cs), which
    # expands a REG_EXPAND_SZ value (registrykey.cs); the machine Path is one (win_path writes it as ExpandString)
    return _expand(interp.host.host, value) if value is not None and to_str(name).lower() == "path" else value


class UtcDateTime(NetObject):
    """[System.DateTime]::UtcNow at the host's clock (winsim_scm.clock); ToString('o') only (the round-trip format:
    yyyy-MM-ddTHH:mm:ss.fffffffZ for a UTC time, Microsoft Learn "Standard date and time format strings")."""

    type_name = "System.DateTime"

    def __init__(self, seconds):
        self.seconds = seconds

    def m_tostring(self, interp, node, fmt=None):
        if fmt is None or to_str(fmt) != "o":
            interp.unsupported("DateTime.ToString other than ToString('o')", node)
        t = datetime.datetime.fromtimestamp(self.seconds, datetime.timezone.utc)
        return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%07dZ" % (t.microsecond * 10)


def _host_name(interp, node):
    st = interp.host.state
    # the DNS host name keeps its case; COMPUTERNAME is the upper-case NetBIOS name
    return st.get("dns_hostname") or st["hostname"].lower()


HOST_CMDLETS = {
    "get-service": Cmdlet("Get-Service", _get_service, params=("Name",), positional=("Name",)),
    "stop-service": Cmdlet("Stop-Service", _stop_service, params=("Name",), switches=("Force",),
                           positional=("Name",), changes=True),
    "start-service": Cmdlet("Start-Service", _start_service, params=("Name",), positional=("Name",), changes=True),
    "new-service": Cmdlet("New-Service", _new_service, params=("Name", "BinaryPathName", "DisplayName",
                                                               "StartupType", "DependsOn", "Description"),
                          positional=("Name", "BinaryPathName"), changes=True),
    "set-service": Cmdlet("Set-Service", _set_service, params=("Name", "Description", "DisplayName", "StartupType",
                                                               "Status"), positional=("Name",), changes=True),
    "get-ciminstance": Cmdlet("Get-CimInstance", _get_cim_instance, params=("ClassName", "Filter"),
                              positional=("ClassName",)),
    "invoke-cimmethod": Cmdlet("Invoke-CimMethod", _invoke_cim_method, params=("InputObject", "MethodName",
                                                                               "Arguments"),
                               positional=("MethodName",), changes=True),
    "get-item": Cmdlet("Get-Item", _get_item, params=("LiteralPath", "Path"), switches=("Force",)),
    "get-itemproperty": Cmdlet("Get-ItemProperty", _get_item_property, params=("LiteralPath", "Path", "Name")),
    "set-itemproperty": Cmdlet("Set-ItemProperty", _set_item_property, params=("LiteralPath", "Path", "Name",
                                                                               "Value", "Type"), changes=True),
    "remove-itemproperty": Cmdlet("Remove-ItemProperty", _remove_item_property, params=("LiteralPath", "Path",
                                                                                        "Name"), changes=True),
    "new-item": Cmdlet("New-Item", _new_item, params=("Path", "ItemType", "Value"), switches=("Force",),
                       positional=("Path",), changes=True),
    "test-path": Cmdlet("Test-Path", _test_path, params=("LiteralPath", "Path", "PathType"), positional=("Path",)),
    "get-content": Cmdlet("Get-Content", _get_content, params=("LiteralPath", "Path", "Tail", "Raw", "Encoding")),
    "get-netadapter": Cmdlet("Get-NetAdapter", _get_net_adapter, params=("Name",), positional=("Name",)),
    "get-netipaddress": Cmdlet("Get-NetIPAddress", _get_net_ip_address, params=("InterfaceIndex",
                                                                               "AddressFamily")),
    "start-sleep": Cmdlet("Start-Sleep", _start_sleep, params=("Seconds", "Milliseconds"), positional=("Seconds",)),
    "add-type": Cmdlet("Add-Type", _add_type, params=("Namespace", "Name", "MemberDefinition", "TypeDefinition",
                                                      "Language", "AssemblyName")),
}


def register(interp):
    interp.cmdlets.update(HOST_CMDLETS)
    host = interp.host.host
    t = interp.types
    t["io.file"] = TypeInfo("File", "System.IO.File", statics={"ReadAllText": _read_all_text})
    winfiles.register(interp)
    wincrypto.register(interp)
    winevents.register(interp)
    winprocess.register(interp)
    # after the New-Object of winfiles and wincrypto: -ComObject HNetCfg.FwPolicy2 (the firewall's rules, read only)
    interp.cmdlets["new-object"] = winfirewall.wrap_new_object(copy.copy(interp.cmdlets["new-object"]), interp)
    t["net.dns"] = TypeInfo("Dns", "System.Net.Dns", statics={"GetHostName": _host_name})
    t["datetime"] = TypeInfo("DateTime", "System.DateTime",
                             statics={"UtcNow": lambda i: UtcDateTime(winsim_scm.clock(host))})
    t["datetime"].properties = ("utcnow",)
    t["environment"] = TypeInfo("Environment", "System.Environment", statics={"GetEnvironmentVariable": _get_env})
    t["runtime.interopservices.marshal"] = TypeInfo("Marshal", "System.Runtime.InteropServices.Marshal",
                                                    statics={"GetExceptionForHR": _exception_for_hr})
    t["diagnostics.stopwatch"] = TypeInfo("Stopwatch", "System.Diagnostics.Stopwatch",
                                          statics={"StartNew": lambda i, n: Stopwatch(host)})


__all__ = ["new_interpreter", "status_enum", "SwitchValue", "is_true", "VOID", "type_name", "Hashtable"]
