#!/usr/bin/python
# -*- coding: utf-8 -*-
# Test-lab stand-in for community.windows.win_firewall_rule over the simulated Windows Defender Firewall
# (winsim_firewall). As the real win_firewall_rule.ps1 (community.windows 2.x/3.x, a legacy Parse-Args module):
# rules are matched by name (or, without a name, by group), a new rule is built like a fresh HNetCfg.FWRule with
# the given options (enabled unless told otherwise), an existing one only gets the options the task passes,
# absent removes every match; check mode reports without changing, diff mode returns diff.prepared.
from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.ansible.windows.plugins.module_utils import winsim_firewall as fw
from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import SimError
from ansible_collections.ansible.windows.plugins.module_utils.winsim_module import run

# Read by win_firewall_rule.ps1 but not documented; no kubewin.nodes task passes them, so they are refused
# here rather than silently ignored.
NOT_SIMULATED = ("interfacetypes", "edge", "security")


def _wanted(p):
    """The fresh rule with the task's options, and which properties the task set (the ps1's userPassedArguments)."""
    rule = fw.new_rule(p.get("name"))
    rule["Enabled"] = True if p.get("enabled") is None else p["enabled"]
    passed = {"Enabled"} if p.get("enabled") is not None else set()

    def put(prop, value):
        rule[prop] = value
        passed.add(prop)

    if p.get("description") is not None:
        put("Description", p["description"])
    if p.get("group") is not None:
        put("Grouping", p["group"])
    for opt, prop in (("program", "ApplicationName"), ("service", "ServiceName")):
        if p.get(opt) is not None:
            put(prop, None if p[opt] == "any" else p[opt])
    if p.get("protocol") is not None:
        put("Protocol", fw.PROTO_ANY if p["protocol"] == "any" else fw.protocol_number(p["protocol"]))
    for opt, prop in (("localport", "LocalPorts"), ("remoteport", "RemotePorts")):
        if p.get(opt) is not None:
            passed.add(prop)
            if p[opt] != "any":
                fw.set_ports(rule, prop, p[opt])
    for opt, prop in (("localip", "LocalAddresses"), ("remoteip", "RemoteAddresses")):
        if p.get(opt) is not None:
            passed.add(prop)
            # win_firewall_rule.ps1 leaves "any" unset ("*"); anything else goes to put_*Addresses, which refuses a
            # malformed token (winsim_firewall.set_addresses)
            if str(p[opt]).lower() == "any":
                rule[prop] = "*"
            else:
                fw.set_addresses(rule, prop, p[opt])
    if p.get("icmp_type_code") is not None:
        put("IcmpTypesAndCodes", ",".join(p["icmp_type_code"]))
    if p.get("direction") is not None:
        put("Direction", fw.DIR_IN if p["direction"] == "in" else fw.DIR_OUT)
    if p.get("action") is not None:
        put("Action", fw.ACTION_ALLOW if p["action"] == "allow" else fw.ACTION_BLOCK)
    if p.get("profiles") is not None:
        put("Profiles", fw.profiles_mask(p["profiles"]))
    return rule, passed


def _show(value):
    return "" if value is None else str(value)


def _diff_rule(diff, sign, rule):
    """A whole rule removed (-) or added (+), in the real module's diff lines."""
    if diff is not None:
        diff.append("%s[%s]" % (sign, rule["Name"]))
        diff.extend("%s%s='%s'" % (sign, k, _show(rule.get(k))) for k in fw.PROPERTIES)


def body(sim):
    p = sim.params
    for opt in NOT_SIMULATED:
        if p.get(opt) is not None:
            raise SimError("winsim: win_firewall_rule option '%s' is not simulated" % opt)
    if not p.get("name") and not p.get("group"):
        raise SimError("Either name or group must be specified")
    diff = [] if sim.module._diff else None
    existing = fw.find(sim.state, p.get("name"), p.get("group"))
    if p["state"] == "absent":
        if not existing:
            sim.result["msg"] = ("Firewall rule '%s' does not exist." % p["name"] if p.get("name")
                                 else "No firewall rules in group '%s' exist." % p["group"])
        else:
            for rule in existing:
                _diff_rule(diff, "-", rule)
                if not sim.check_mode:
                    fw.rules(sim.state).remove(rule)
            sim.result["changed"] = True
            sim.result["msg"] = "Firewall rule(s) '%s' removed." % "', '".join(r["Name"] for r in existing)
    else:
        wanted, passed = _wanted(p)
        if not existing and p.get("name"):
            _diff_rule(diff, "+", wanted)
            if not sim.check_mode:
                fw.rules(sim.state).append(wanted)
            sim.result["changed"] = True
            sim.result["msg"] = "Firewall rule '%s' created." % p["name"]
        elif existing:
            changed_rules, unchanged_rules = [], []
            for rule in existing:
                if diff is not None:
                    diff.append("[%s]" % rule["Name"])
                changed = False
                for k in fw.PROPERTIES:
                    if k in passed and rule.get(k) != wanted.get(k):
                        if diff is not None:
                            diff.extend(["-%s='%s'" % (k, _show(rule.get(k))), "+%s='%s'" % (k, _show(wanted.get(k)))])
                        if not sim.check_mode:
                            rule[k] = wanted.get(k)
                        changed = True
                (changed_rules if changed else unchanged_rules).append(rule["Name"])
            sim.result["changed"] = bool(changed_rules)
            sim.result["msg"] = "Firewall rule(s) changed '%s' - unchanged '%s'" % (
                "', '".join(changed_rules), "', '".join(unchanged_rules))
    if diff is not None:
        sim.result["diff"] = {"prepared": "".join(line + "\n" for line in diff)}


if __name__ == "__main__":
    run("win_firewall_rule", body, collection="community.windows")
