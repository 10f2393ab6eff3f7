"""``New-Object -ComObject HNetCfg.FwPolicy2`` over the simulated firewall (winsim_firewall), read only.

Microsoft Learn: INetFwPolicy2 (ProgID HNetCfg.FwPolicy2), its Rules property (INetFwRules: Count, Item(name),
enumerated by foreach through _NewEnum); INetFwRule's properties Name, Description, ApplicationName, ServiceName,
Protocol, LocalPorts, RemotePorts, LocalAddresses, RemoteAddresses, IcmpTypesAndCodes, Direction, InterfaceTypes,
Enabled, Grouping, Profiles, EdgeTraversal, Action. What a script reads is what the host's rules hold (winsim_firewall
keeps them as INetFwRule's properties). Nothing else is modelled, and the stricter choice is taken: any other ProgID,
setting a property, or a method (Add, Remove, Item, EnableRuleGroup ...) fails as not simulated.
While a test has stopped the firewall service (winsim_firewall.stop_service), New-Object or the Rules read fails with
the RPC error as a COMException (winsim_firewall.require_service says where and why).
"""

from __future__ import annotations

from .interp import PSError
from .values import MISSING, ErrorRecord, NetObject, to_str

# As winsim_firewall.FAIL_POINTS / RPC_UNAVAILABLE / require_service (lab/tests/test_firewall_stopped.py checks they
# agree): that module_utils is not shipped with win_powershell's payload, so the interpreter reads the state itself.
FAIL_POINTS = ("create", "rules")
RPC_UNAVAILABLE = "There are no more endpoints available from the endpoint mapper. (Exception from HRESULT: 0x800706D9)"


def service_refuses(state, point):
    """Whether the firewall API fails at ``point`` ("create", "rules"): its service stopped by a test
    (winsim_firewall.stop_service) with a failure point at or before this one."""
    svc = (state.get("firewall") or {}).get("service")
    return bool(svc and svc.get("status") == "Stopped"
                and FAIL_POINTS.index(svc["fails_at"]) <= FAIL_POINTS.index(point))

# INetFwRule's property names (Microsoft Learn) -> the key winsim_firewall stores it under
_RULE_PROPERTIES = {p.lower(): p for p in (
    "Name", "Description", "ApplicationName", "ServiceName", "Protocol", "LocalPorts", "RemotePorts",
    "LocalAddresses", "RemoteAddresses", "IcmpTypesAndCodes", "Direction", "InterfaceTypes", "Enabled", "Grouping",
    "Profiles", "Action")}


class FwRule(NetObject):
    """One INetFwRule of the host (a copy: the scripts only read)."""

    type_name = "System.__ComObject#{9c27c8da-189b-4dde-89f7-8b39a316782c}"

    def __init__(self, rule):
        self.rule = dict(rule)

    def ps_get(self, name):
        low = name.lower()
        if low == "edgetraversal":
            return bool(self.rule.get("EdgeTraversalOptions"))
        key = _RULE_PROPERTIES.get(low)
        if key is None:
            return MISSING
        value = self.rule.get(key)
        # INetFwRule's BSTR properties read as $null when unset; Enabled is a VARIANT_BOOL
        return bool(value) if key == "Enabled" else value


class FwPolicy2(NetObject):
    """INetFwPolicy2: only its Rules, read when the property is read."""

    type_name = "System.__ComObject#{98325047-c671-4174-8d81-defcd3f03186}"

    def __init__(self, state):
        self.state = state

    def prop_rules(self):
        if service_refuses(self.state, "rules"):
            # a COM property getter's exception, as PowerShell's COM adapter surfaces it
            raise PSError(ErrorRecord('Exception getting "Rules": "%s"' % RPC_UNAVAILABLE,
                                      "System.Management.Automation.GetValueInvocationException",
                                      "CatchFromBaseAdapterGetValueTI"), script_terminating=False)
        return [FwRule(r) for r in (self.state.get("firewall") or {}).get("rules") or []]


def wrap_new_object(cmdlet, interp):
    """New-Object learns -ComObject HNetCfg.FwPolicy2; the rest goes to the earlier New-Object."""
    inner = cmdlet.fn

    def new_object(interp_, b, items, node):
        if "ComObject" not in b:
            return inner(interp_, b, items, node)
        if set(b) - {"ComObject"} or to_str(b["ComObject"]).lower() != "hnetcfg.fwpolicy2":
            interp_.unsupported("New-Object -ComObject other than HNetCfg.FwPolicy2 alone", node)
        if service_refuses(interp_.host.state, "create"):
            # New-Object's CoCreateInstance failure: a terminating error of the cmdlet
            raise interp_.error("Creating an instance of the COM component with CLSID "
                                "{E2B3C97F-6AE1-41AC-817A-F6F92166D7DD} from the IClassFactory failed due to the "
                                "following error: 800706d9 %s" % RPC_UNAVAILABLE, node,
                                "System.Runtime.InteropServices.COMException",
                                "NoCOMClassIdentified,Microsoft.PowerShell.Commands.NewObjectCommand",
                                "ResourceUnavailable")
        return [FwPolicy2(interp_.host.state)]

    cmdlet.fn = new_object
    cmdlet.params = [p for p in cmdlet.params if p != "ComObject"] + ["ComObject"]
    return cmdlet
