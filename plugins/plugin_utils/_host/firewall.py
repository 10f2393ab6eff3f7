# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The inbound rules this collection owns, as the node_facts script reads them (INetFwRule), in the terms of
community.windows.win_firewall_rule's options, so a role can skip that module for a rule already as it wants it.

Each rule becomes {description, direction, action, protocol, localport, remoteip, profiles, enabled}: the options the
roles pass, which are all the module compares (its ``$fwPropertiesToCompare``, restricted to the options given). Only
what the module itself would produce from those options maps back to them; anything else maps to a value no option
can have (the raw number, the text as read), so the role's equality fails and the module runs and decides:
- Direction 1/2 -> in/out, Action 1/0 -> allow/block, Protocol 6/17/256 -> tcp/udp/any (ConvertTo-ProtocolType);
- Profiles: 0x7FFFFFFF -> [domain, private, public] (ConvertTo-Profile gives that for all three), 1..6 -> the
  profiles of those bits (in that order);
- RemoteAddresses: "*" -> any; each token an address with or without a prefix length or mask -> that address (a
  single host) or address/prefix length, the address as read (Windows writes a subnet back as address/mask; whether
  it keeps host bits, 10.1.2.3/8, is not documented: kept, such a token equals the option only if the host kept them,
  and the module, comparing two read-backs, would then change nothing either); any other token (LocalSubnet, a range)
  as read, so a list mixing them still compares token by token;
- LocalPorts as read.
Names are matched as win_firewall_rule matches them (-eq: case-insensitive): keys are lower case, and a name two
rules share maps to None (the module would change each).

When the script could not read the rules (its firewall_error: the API needs the Windows Defender Firewall service,
MpsSvc; Microsoft Learn's INetFwPolicy page says its service must be running, INetFwPolicy2's says nothing, so the
stricter reading is taken: any failure), the rules are unknown: the facts then carry no firewall_rules at all, which
every role reads as "not known, run win_firewall_rule" (the node and network roles' ``| default({})``, reset's
``is not defined``), as before the facts read the rules.
"""

from __future__ import annotations

import ipaddress

# The node_facts script reads the rules whose names match this (-like): the ones the roles make.
RULE_PATTERN = "kubewin-*"
_DIRECTIONS = {1: "in", 2: "out"}
_ACTIONS = {0: "block", 1: "allow"}
_PROTOCOLS = {6: "tcp", 17: "udp", 256: "any"}
_PROFILES = (("domain", 1), ("private", 2), ("public", 4))
PROFILE_ALL = 0x7FFFFFFF


def _address(token):
    """One RemoteAddresses token read back: an address as itself or address/prefix length; else the text as read (a
    keyword, a range: only the same text compares equal)."""
    addr, slash, suffix = token.partition("/")
    try:
        ip = ipaddress.ip_address(addr)
        if not slash:
            prefix = ip.max_prefixlen
        elif suffix.isdigit() and int(suffix) <= ip.max_prefixlen:
            prefix = int(suffix)
        else:  # a mask (IPv4 only), contiguous
            prefix = ipaddress.IPv4Network("0.0.0.0/%s" % suffix).prefixlen if ip.version == 4 else None
    except ValueError:
        return token
    if prefix is None:
        return token
    return str(ip) if prefix == ip.max_prefixlen else "%s/%d" % (ip, prefix)


def remote_addresses(value):
    """RemoteAddresses (or a remoteip option) token by token as ``_address`` reads them, sorted and without repeats;
    empty or * is any. win_firewall_rule compares remoteip as a set, so the facts and the desired value (both made
    here) must too: an inventory listing the same addresses in another order then skips the module (review-s6 F1)."""
    if value in (None, "", "*"):
        return "any"
    return ",".join(sorted({_address(token.strip()) for token in str(value).split(",")}))


def _profiles(mask):
    if mask == PROFILE_ALL:
        return [name for name, _bit in _PROFILES]
    if isinstance(mask, int) and 0 < mask < 7:
        return [name for name, bit in _PROFILES if mask & bit]
    return mask


def as_options(rule):
    """One rule of the script's answer in win_firewall_rule's option terms."""
    return {
        "description": rule.get("description"),
        "direction": _DIRECTIONS.get(rule.get("direction"), rule.get("direction")),
        "action": _ACTIONS.get(rule.get("action"), rule.get("action")),
        "protocol": _PROTOCOLS.get(rule.get("protocol"), rule.get("protocol")),
        "localport": rule.get("local_ports"),
        "remoteip": remote_addresses(rule.get("remote_addresses")),
        "profiles": _profiles(rule.get("profiles")),
        "enabled": rule.get("enabled"),
    }


def rule_facts(rules):
    """{lower-case name: options, or None when several rules have that name} of the script's firewall_rules."""
    out = {}
    for rule in rules or []:
        key = str(rule.get("name") or "").lower()
        out[key] = None if key in out else as_options(rule)
    return out


def firewall_facts(answer):
    """The facts' firewall part of the script's answer: {"firewall": {"state": "read"}, "firewall_rules": rule_facts}
    or, when the rules could not be read, {"firewall": {"state": "unknown", "reason": ...}} and no firewall_rules."""
    error = answer.get("firewall_error")
    if error:
        return {"firewall": {"state": "unknown", "reason": (
            "the Windows Firewall rules could not be read (%s): is the Windows Defender Firewall service running "
            "(Get-Service MpsSvc)? The firewall tasks run community.windows.win_firewall_rule instead of being "
            "skipped; it uses the same API and fails the same way until the service runs" % str(error).strip())}}
    return {"firewall": {"state": "read"}, "firewall_rules": rule_facts(answer.get("firewall_rules"))}
