# Test-lab only: Get-WinEvent over the simulated host's event logs (``state["eventlogs"]``).
"""``Get-WinEvent -LogName <log>`` and ``Get-WinEvent -FilterHashtable @{LogName; ProviderName}``, each with
``-MaxEvents``: the only forms kubewin.nodes' scripts use. Sources: Microsoft Learn, Get-WinEvent
(https://learn.microsoft.com/powershell/module/microsoft.powershell.diagnostics/get-winevent: records newest first,
-MaxEvents a number from 1, -FilterHashtable keys LogName and ProviderName), and PowerShell's own implementation,
src/Microsoft.PowerShell.Commands.Diagnostics/GetEventCommand.cs with resources/GetEventResources.txt:

- ReadEvents: a record whose message cannot be formatted (EventRecord.FormatDescription throws) is written anyway, with
  the message "Cannot retrieve event message text." (NoEventMessage), AFTER a non-terminating error carrying the
  exception's message (its error id is that message); -ErrorAction Stop makes that error the end of the whole read.
- ReadEvents: a read that gives no record is the non-terminating error NoMatchingEventsFound, "No events were found
  that match the specified selection criteria." (category ObjectNotFound).
- A log the host does not have: NoMatchingLogsFound, 'There is not an event log on the localhost computer that
  matches "<log>".'; a provider no log has (FindProvidersByLogForWildcardPatterns): NoMatchingProvidersFound,
  'There is not an event provider on the localhost computer that matches "<provider>".'

State: ``{"eventlogs": {"<log>": {"sources": [provider names registered for the log], "records": [{"time": seconds
since the epoch, "id", "level" (1 critical .. 4 information), "provider", "message", "format_error": the message
FormatDescription fails with, or absent}]}}}``, records oldest first. A host state without ``eventlogs`` has the empty
System and Application logs of a fresh install. TimeCreated is a local DateTime; the host's time zone is not modelled,
so only ``ToUniversalTime()`` is offered on it. Anything else (-Oldest, -ListLog, other hashtable keys, wildcards) is
"not supported by the lab interpreter".
"""

from __future__ import annotations

import re

from .builtins import Cmdlet
from .values import ErrorRecord, Hashtable, NetObject, to_str

COMMAND = "Microsoft.PowerShell.Commands.GetWinEventCommand"
NO_EVENT_MESSAGE = "Cannot retrieve event message text."
NO_EVENTS = "No events were found that match the specified selection criteria."
# EventRecord.LevelDisplayName of the standard levels (winmeta.xml: win:Critical 1 .. win:Informational 4)
LEVELS = {0: "Information", 1: "Critical", 2: "Error", 3: "Warning", 4: "Information", 5: "Verbose"}


def default_logs():
    """The event logs of a fresh host, as far as the lab models them: System and Application, no records."""
    return {"System": {"sources": ["Service Control Manager"], "records": []},
            "Application": {"sources": [], "records": []}}


class EventTime(NetObject):
    """EventRecord.TimeCreated (a local DateTime): ToUniversalTime() only (the host's time zone is not modelled)."""

    type_name = "System.DateTime"

    def __init__(self, seconds):
        self.seconds = seconds

    def m_touniversaltime(self, interp, node):
        from .winhost import UtcDateTime
        return UtcDateTime(self.seconds)

    def m_tostring(self, interp, node, fmt=None):
        interp.unsupported("TimeCreated.ToString (local time; use ToUniversalTime())", node)


class EventLogRecord(NetObject):
    """System.Diagnostics.Eventing.Reader.EventLogRecord as Get-WinEvent writes it (Message a NoteProperty)."""

    type_name = "System.Diagnostics.Eventing.Reader.EventLogRecord"

    def __init__(self, log, record, message):
        self.log, self.record, self.message = log, record, message

    def prop_timecreated(self):
        return EventTime(self.record["time"])

    def prop_id(self):
        return int(self.record["id"])

    def prop_level(self):
        return int(self.record["level"])

    def prop_leveldisplayname(self):
        return LEVELS.get(int(self.record["level"]), str(self.record["level"]))

    def prop_providername(self):
        return self.record["provider"]

    def prop_logname(self):
        return self.log

    def prop_message(self):
        return self.message


def _error(interp, message, fqid, category, exc="System.Exception", node=None):
    interp.write_error(ErrorRecord(message, exc, "%s,%s" % (fqid, COMMAND), category, None, interp.where(node)))


def _one(interp, value, what, node):
    if isinstance(value, list):
        if len(value) != 1:
            interp.unsupported("Get-WinEvent with several %s" % what, node)
        value = value[0]
    value = to_str(value)
    if re.search(r"[*?\[]", value):
        interp.unsupported("Get-WinEvent with a wildcard %s" % what, node)
    return value


def _get_win_event(interp, b, items, node):
    logs = interp.host.state.get("eventlogs") or default_logs()
    if ("LogName" in b) == ("FilterHashtable" in b):
        interp.unsupported("Get-WinEvent without exactly one of -LogName and -FilterHashtable", node)
    provider = None
    if "LogName" in b:
        log = _one(interp, b["LogName"], "log names", node)
    else:
        query = b["FilterHashtable"]
        if isinstance(query, list) and len(query) == 1:
            query = query[0]
        if not isinstance(query, Hashtable) or set(k.lower() for k in query.keys()) - {"logname", "providername"} \
                or "logname" not in set(k.lower() for k in query.keys()):
            interp.unsupported("Get-WinEvent -FilterHashtable other than @{LogName; ProviderName}", node)
        log = _one(interp, query.get("LogName"), "log names", node)
        if query.get("ProviderName") is not None:
            provider = _one(interp, query.get("ProviderName"), "provider names", node)
    most = b.get("MaxEvents")
    if most is not None and int(most) < 1:  # [ValidateRange(1, long.MaxValue)]
        raise interp.error("Cannot validate argument on parameter 'MaxEvents'. The %s argument is less than the "
                           "minimum allowed range of 1. Supply an argument that is greater than or equal to 1 and "
                           "then try the command again." % int(most), node,
                           "System.Management.Automation.ParameterBindingValidationException",
                           "ParameterArgumentValidationError,%s" % COMMAND, "InvalidData")
    name = next((n for n in logs if n.lower() == log.lower()), None)
    if name is None:
        _error(interp, 'There is not an event log on the localhost computer that matches "%s".' % log,
               "NoMatchingLogsFound", "ObjectNotFound", node=node)
        return []
    if provider is not None:
        owners = [n for n, entry in logs.items() if any(s.lower() == provider.lower() for s in entry["sources"])]
        if not owners:
            _error(interp, 'There is not an event provider on the localhost computer that matches "%s".' % provider,
                   "NoMatchingProvidersFound", "ObjectNotFound", node=node)
            return []
        if name not in owners:  # BuildStructuredQuery: every log removed as irrelevant
            _error(interp, "The specified providers do not write events to any of the specified logs.",
                   "LogsAndProvidersDontOverlap", "InvalidArgument", node=node)
            return []
    out = []
    for record in reversed(logs[name]["records"]):  # newest first
        if provider is not None and record["provider"].lower() != provider.lower():
            continue
        if most is not None and len(out) >= int(most):
            break
        message = record.get("message")
        if record.get("format_error"):
            # the error first, then the record with NoEventMessage (ReadEvents); Stop ends the read here
            _error(interp, record["format_error"], record["format_error"], "NotSpecified",
                   "System.Diagnostics.Eventing.Reader.EventLogException", node)
            message = NO_EVENT_MESSAGE
        out.append(EventLogRecord(name, record, message))
    if not out:
        _error(interp, NO_EVENTS, "NoMatchingEventsFound", "ObjectNotFound", node=node)
    return out


def register(interp):
    interp.cmdlets["get-winevent"] = Cmdlet("Get-WinEvent", _get_win_event,
                                            params=("LogName", "FilterHashtable", "MaxEvents"))
