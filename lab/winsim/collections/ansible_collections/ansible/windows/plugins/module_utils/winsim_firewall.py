# Test-lab only: Windows Defender Firewall rules of a simulated host.
"""The host's firewall: its default inbound action and its rules, as the COM API (INetFwRule) holds them.

Sources (Microsoft Learn): "Windows Firewall overview" / "Configure rules" (inbound traffic that matches no
rule is blocked by default; an explicit block rule wins over an allow rule), INetFwRule (Name, Direction
NET_FW_RULE_DIR_IN=1/OUT=2, Action NET_FW_ACTION_BLOCK=0/ALLOW=1, Protocol NET_FW_IP_PROTOCOL_ANY=256, Profiles
NET_FW_PROFILE2_DOMAIN=1/PRIVATE=2/PUBLIC=4/ALL=0x7FFFFFFF; "the Protocol property must be set before the
LocalPorts or RemotePorts properties or an error will be returned"), New-NetFirewallRule (a new rule is
enabled, inbound, allow, any profile unless told otherwise; rule names need not be unique). The rule
properties and their conversion from module options follow community.windows' win_firewall_rule.ps1.

Remote addresses (INetFwRule::put_RemoteAddresses, Microsoft Learn; New-NetFirewallRule -RemoteAddress): comma-delimited
tokens; "*" (any) must then be the only token; an IPv4 or IPv6 address (mask 255.255.255.255 when none is given), a
subnet as address/prefix length or address/mask, a range "start-end" with no spaces, or a keyword. Modelled keyword:
LocalSubnet (not case-sensitive; "any local address on the local subnet": the subnets of the host's adapters). The
other keywords (DefaultGateway, DHCP, DNS, WINS, Internet, Intranet, IntranetRemoteAccess, PlayToDevice,
CaptivePortal) depend on the host's network configuration and are refused as not simulated. A malformed token is
refused as COM does (E_INVALIDARG). A rule narrowed to remote addresses admits only traffic whose source matches one.

State: ``state["firewall"] = {"default_inbound_action": "Block", "rules": [<INetFwRule properties>]}``, and
``"service": {"status": "Stopped", "fails_at": ...}`` while a test has stopped the Windows Defender Firewall service
(stop_service). The API is then refused (require_service): Microsoft Learn's INetFwPolicy page says its service must be
running to access the interface; INetFwPolicy2's pages say nothing, and what is reported from hosts is an RPC failure
0x800706D9 ("There are no more endpoints available from the endpoint mapper") when the rules are enumerated or added
(falahati/WindowsFirewallHelper issue 24: INetFwRules enumeration; microsoft/CSS-Exchange issue 61: INetFwRules.Add).
Where it fails first is unknown, so a test chooses: "create" (New-Object -ComObject HNetCfg.FwPolicy2 itself), or
"rules" (reading or enumerating INetFwPolicy2.Rules, one statement in the scripts). The stand-in win_firewall_rule
fails too (it reads the rules through the same API). Traffic filtering is not changed by it.
"""

from __future__ import annotations

import ipaddress

from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError

DIR_IN, DIR_OUT = 1, 2
ACTION_BLOCK, ACTION_ALLOW = 0, 1
PROTO_ANY, PROTO_TCP, PROTO_UDP, PROTO_ICMP, PROTO_ICMPV6 = 256, 6, 17, 1, 58
PROFILE_BITS = {"domain": 1, "private": 2, "public": 4}
PROFILE_ALL = 0x7FFFFFFF
# The order win_firewall_rule.ps1 compares and prints them in ($fwPropertiesToCompare).
PROPERTIES = ("Description", "Direction", "Action", "ApplicationName", "Grouping", "ServiceName", "Enabled",
              "Profiles", "LocalAddresses", "RemoteAddresses", "LocalPorts", "RemotePorts", "Protocol",
              "InterfaceTypes", "EdgeTraversalOptions", "SecureFlags", "IcmpTypesAndCodes")


def new_rule(name=None):
    """What `New-Object -ComObject HNetCfg.FWRule` starts from (INetFwRule's defaults)."""
    return {"Name": name, "Description": None, "Direction": DIR_IN, "Action": ACTION_ALLOW, "ApplicationName": None,
            "Grouping": None, "ServiceName": None, "Enabled": False, "Profiles": PROFILE_ALL,
            "LocalAddresses": "*", "RemoteAddresses": "*", "LocalPorts": None, "RemotePorts": None,
            "Protocol": PROTO_ANY, "InterfaceTypes": "All", "EdgeTraversalOptions": 0, "SecureFlags": 0,
            "IcmpTypesAndCodes": None}


def rules(state):
    return state.setdefault("firewall", {}).setdefault("rules", [])


RPC_UNAVAILABLE = "There are no more endpoints available from the endpoint mapper. (Exception from HRESULT: 0x800706D9)"
FAIL_POINTS = ("create", "rules")


def stop_service(state, fails_at="rules"):
    """Stop the simulated Windows Defender Firewall service (MpsSvc): the firewall API fails at ``fails_at``."""
    if fails_at not in FAIL_POINTS:
        raise ValueError("fails_at must be one of %s" % (FAIL_POINTS,))
    state.setdefault("firewall", {})["service"] = {"status": "Stopped", "fails_at": fails_at}


def start_service(state):
    state.setdefault("firewall", {}).pop("service", None)


def require_service(state, point):
    """SimError (the RPC failure's text) when the firewall service is stopped and the API fails at ``point``
    ("create", "rules") or earlier."""
    svc = (state.get("firewall") or {}).get("service")
    if svc and svc.get("status") == "Stopped" and FAIL_POINTS.index(svc["fails_at"]) <= FAIL_POINTS.index(point):
        raise SimError(RPC_UNAVAILABLE)


def find(state, name=None, group=None):
    """Rules by name (PowerShell -eq: case-insensitive), else all rules of a group (through the firewall API, so
    refused while its service is stopped)."""
    require_service(state, "rules")
    if name:
        return [r for r in rules(state) if (r.get("Name") or "").lower() == name.lower()]
    return [r for r in rules(state) if (r.get("Grouping") or "").lower() == (group or "").lower()]


def protocol_number(value):
    """win_firewall_rule.ps1 ConvertTo-ProtocolType."""
    text = str(value)
    if text.isdigit():
        return int(text)
    low = text.lower()
    if low == "tcp":
        return PROTO_TCP
    if low == "udp":
        return PROTO_UDP
    if low.startswith("icmpv4"):
        return PROTO_ICMP
    if low.startswith("icmpv6"):
        return PROTO_ICMPV6
    raise SimError("Unknown protocol '%s'." % value)


def profiles_mask(names):
    """win_firewall_rule.ps1 ConvertTo-Profile: the sum of the profiles, all three being 0x7FFFFFFF."""
    mask = 0
    for n in dict.fromkeys(names):
        if n not in PROFILE_BITS:
            raise SimError("Unknown profile '%s'." % n)
        mask += PROFILE_BITS[n]
    return PROFILE_ALL if mask == 7 else mask


def set_ports(rule, key, value):
    # INetFwRule::put_LocalPorts/put_RemotePorts: ports exist for TCP and UDP only; COM answers E_INVALIDARG.
    if rule["Protocol"] not in (PROTO_TCP, PROTO_UDP):
        raise SimError("Value does not fall within the expected range. (%s needs protocol tcp or udp)" % key)
    rule[key] = str(value)


UNMODELLED_KEYWORDS = ("defaultgateway", "dhcp", "dns", "wins", "internet", "intranet", "intranetremoteaccess",
                       "playtodevice", "captiveportal")
INVALID_ARG = "Value does not fall within the expected range."


def _keyword(token):
    low = token.lower()
    return low[:-1] if low[-1:] in ("4", "6") and low[:-1] in UNMODELLED_KEYWORDS + ("localsubnet",) else low


def _address_token(token):
    """One token as (low, high) addresses, or "localsubnet"; SimError for what COM refuses or is not simulated."""
    if _keyword(token) == "localsubnet":
        return "localsubnet"
    if _keyword(token) in UNMODELLED_KEYWORDS:
        raise SimError("winsim: firewall remote address keyword '%s' is not simulated" % token)
    try:
        if "-" in token:
            if " " in token:
                raise ValueError(token)
            low, high = (ipaddress.ip_address(p) for p in token.split("-", 1))
            if low.version != high.version or low > high:
                raise ValueError(token)
            return low, high
        if "/" in token:
            addr, suffix = token.split("/", 1)
            if "." in suffix:  # a mask: 255.255.255.0
                suffix = str(ipaddress.ip_network("0.0.0.0/%s" % suffix).prefixlen)
            net = ipaddress.ip_network("%s/%s" % (addr, suffix), strict=False)
        else:
            net = ipaddress.ip_network(token)
    except ValueError:
        raise SimError("%s (RemoteAddresses token '%s')" % (INVALID_ARG, token)) from None
    return net[0], net[-1]


def address_tokens(value):
    """The tokens of a RemoteAddresses value, each checked (``_address_token``); [] for "*" (any)."""
    tokens = [t.strip() for t in str(value).split(",")]
    if "*" in tokens:
        if len(tokens) > 1:
            raise SimError("%s ('*' must be the only RemoteAddresses token: %s)" % (INVALID_ARG, value))
        return []
    if any(not t for t in tokens):
        raise SimError("%s (an empty RemoteAddresses token: %r)" % (INVALID_ARG, value))
    for t in tokens:
        _address_token(t)
    return tokens


def _readback_token(token):
    """One token as get_RemoteAddresses gives it back. Microsoft Learn documents what put_ takes (a subnet by prefix
    length or mask, a single address meaning mask 255.255.255.255), not what get_ returns; Windows shows subnets as
    address/mask (Get-NetFirewallAddressFilter, wf.msc). The stricter choice is taken, the one that makes the roles'
    skip miss rather than hit where a host might differ: an IPv4 address or subnet reads back as its NETWORK address
    and its mask (10.1.2.3/8 -> 10.0.0.0/255.0.0.0, 192.0.2.10 -> 192.0.2.10/255.255.255.255), a keyword in its
    documented case (localsubnet -> LocalSubnet), anything else (ranges, IPv6) as written."""
    if _keyword(token) == "localsubnet":
        return "LocalSubnet" + token[len("localsubnet"):]
    if "-" in token or ":" in token:
        return token
    addr, dummy, suffix = token.partition("/")
    if "." in suffix:
        suffix = str(ipaddress.ip_network("0.0.0.0/%s" % suffix).prefixlen)
    net = ipaddress.ip_network("%s/%s" % (addr, suffix or 32), strict=False)
    return "%s/%s" % (net.network_address, net.netmask)


def set_addresses(rule, key, value):
    """INetFwRule::put_RemoteAddresses / put_LocalAddresses: refused (E_INVALIDARG) unless every token is valid; kept
    in the form get_ reads back (_readback_token), which is what a script and win_firewall_rule compare."""
    tokens = address_tokens(value)
    rule[key] = ",".join(_readback_token(t) for t in tokens) if tokens else "*"


def local_subnets(state):
    """The subnets of the host's adapters (state["adapters"]: ip, prefix)."""
    out = []
    for a in state.get("adapters") or []:
        if a.get("ip"):
            out.append(ipaddress.ip_network("%s/%s" % (a["ip"], a.get("prefix", 32)), strict=False))
    return out


def _remote_matches(value, remote, state):
    if value in (None, "", "*"):
        return True
    if remote is None:
        return False
    ip = ipaddress.ip_address(remote)
    for token in address_tokens(value):
        span = _address_token(token)
        if span == "localsubnet":
            if any(ip in net for net in local_subnets(state)):
                return True
        elif span[0].version == ip.version and span[0] <= ip <= span[1]:
            return True
    return False


def _port_matches(ports, port):
    if ports in (None, "", "*") or str(ports).lower() == "any":
        return True
    for item in str(ports).split(","):
        item = item.strip()
        if "-" in item:
            low, high = item.split("-", 1)
            if low.isdigit() and high.isdigit() and int(low) <= port <= int(high):
                return True
        elif item.isdigit() and int(item) == port:
            return True
    return False


def _applies(rule, proto, port, profile, remote=None, state=None):
    mask = rule.get("Profiles", PROFILE_ALL)
    matches = (rule.get("Enabled") and rule.get("Direction") == DIR_IN
               and (mask == PROFILE_ALL or mask & PROFILE_BITS[profile])
               and rule.get("Protocol") in (PROTO_ANY, proto)
               and _port_matches(rule.get("LocalPorts"), port))
    if not matches or rule.get("Action") == ACTION_BLOCK:
        # a block rule counts however it is narrowed (the stricter reading: it may block this traffic), unless the
        # source is known and outside its remote addresses
        return bool(matches) and (remote is None or _remote_matches(rule.get("RemoteAddresses"), remote, state or {}))
    # Allow rules narrowed to a program, a service, or local addresses do not admit traffic in general: counted as
    # not matching (the stricter reading for "may other nodes reach this port"). One narrowed to remote addresses
    # admits a source among them only (without a source: not at all).
    return (not rule.get("ApplicationName") and not rule.get("ServiceName")
            and _remote_matches(rule.get("RemoteAddresses"), remote, state or {})
            and rule.get("LocalAddresses") in (None, "", "*"))


def inbound_allowed(state, proto, port, profile="public", remote=None):
    """Whether the host's firewall lets inbound ``proto`` ("tcp"/"udp") traffic to local ``port`` through, in
    ``profile`` (Public: where Windows puts a network it has not identified), from the IP address ``remote`` (None:
    any source, so an allow rule narrowed to remote addresses does not count). Block rules win over allow
    rules; with neither, the default inbound action (Block on Windows Server) decides."""
    fw = state.get("firewall") or {}
    number = protocol_number(proto)
    matching = [r for r in fw.get("rules", []) if _applies(r, number, int(port), profile, remote, state)]
    if any(r.get("Action") == ACTION_BLOCK for r in matching):
        return False
    if any(r.get("Action") == ACTION_ALLOW for r in matching):
        return True
    return fw.get("default_inbound_action", "Block") == "Allow"
