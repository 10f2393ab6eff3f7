# Test-lab only: Windows Defender Firewall rules of a simulated host.
"""The host's firewall: its default inbound action and its rules, as the COM API (INetFwRule) holds them.

Sources (Microsoft Learn): "Windows Firewall overview" / "Configure rules" (inbound traffic that matches no
rule is blocked by default; an explicit block rule wins over an allow rule), INetFwRule (Name, Direction
NET_FW_RULE_DIR_IN=1/OUT=2, Action NET_FW_ACTION_BLOCK=0/ALLOW=1, Protocol NET_FW_IP_PROTOCOL_ANY=256, Profiles
NET_FW_PROFILE2_DOMAIN=1/PRIVATE=2/PUBLIC=4/ALL=0x7FFFFFFF; "the Protocol property must be set before the
LocalPorts or RemotePorts properties or an error will be returned"), New-NetFirewallRule (a new rule is
enabled, inbound, allow, any profile unless told otherwise; rule names need not be unique). The rule
properties and their conversion from module options follow community.windows' win_firewall_rule.ps1.

State: ``state["firewall"] = {"default_inbound_action": "Block", "rules": [<INetFwRule properties>]}``.
"""

from __future__ import annotations

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


def find(state, name=None, group=None):
    """Rules by name (PowerShell -eq: case-insensitive), else all rules of a group."""
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


def _applies(rule, proto, port, profile):
    mask = rule.get("Profiles", PROFILE_ALL)
    matches = (rule.get("Enabled") and rule.get("Direction") == DIR_IN
               and (mask == PROFILE_ALL or mask & PROFILE_BITS[profile])
               and rule.get("Protocol") in (PROTO_ANY, proto)
               and _port_matches(rule.get("LocalPorts"), port))
    if not matches or rule.get("Action") == ACTION_BLOCK:
        # a block rule counts however it is narrowed (the stricter reading: it may block this traffic)
        return bool(matches)
    # Allow rules narrowed to a program, a service, or local or remote addresses do not admit traffic in
    # general: counted as not matching (the stricter reading for "may other nodes reach this port").
    return (not rule.get("ApplicationName") and not rule.get("ServiceName")
            and rule.get("RemoteAddresses") in (None, "", "*") and rule.get("LocalAddresses") in (None, "", "*"))


def inbound_allowed(state, proto, port, profile="public"):
    """Whether the host's firewall lets inbound ``proto`` ("tcp"/"udp") traffic to local ``port`` through, in
    ``profile`` (Public: where Windows puts a network it has not identified). Block rules win over allow
    rules; with neither, the default inbound action (Block on Windows Server) decides."""
    fw = state.get("firewall") or {}
    number = protocol_number(proto)
    matching = [r for r in fw.get("rules", []) if _applies(r, number, int(port), profile)]
    if any(r.get("Action") == ACTION_BLOCK for r in matching):
        return False
    if any(r.get("Action") == ACTION_ALLOW for r in matching):
        return True
    return fw.get("default_inbound_action", "Block") == "Allow"
