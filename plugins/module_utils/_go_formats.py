# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Go's text formats for durations (``time.ParseDuration``) and timestamps (``time.RFC3339``), parsed and written.

Plain functions, used by the bootstrap-token code (token ttl and expiration) and unit-tested on their own.
PRIVATE to the collection: no compatibility promise outside it.
"""

from __future__ import annotations

import datetime
import re


class FormatError(ValueError):
    """A value that is not a Go duration or an RFC 3339 timestamp (``_bootstrap_token.BootstrapTokenError``)."""


# --- durations (time.ParseDuration) ---------------------------------------------------------------

_DURATION_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "\u00b5s": 1e-6,  # micro sign
    "\u03bcs": 1e-6,  # Greek mu
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_DURATION_PART_RE = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)")


def parse_duration(value):
    """Parse a Go ``time.ParseDuration`` string (``24h``, ``1h30m``, ``90m``, ``1.5h``, ``0``).

    Returns a ``datetime.timedelta`` (sub-microsecond parts are dropped).
    Negative durations and bare numbers other than ``0`` are rejected, as Go does.
    """
    if isinstance(value, datetime.timedelta):
        return value
    if isinstance(value, bool) or value is None:
        raise FormatError("invalid duration %r: expected a string such as '24h', '90m' or '0'" % (value,))
    text = str(value).strip()
    if text in ("0", "+0", "-0"):
        return datetime.timedelta(0)
    if not text:
        raise FormatError("invalid duration '': expected a string such as '24h', '90m' or '0'")
    body = text
    if body[0] in "+-":
        if body[0] == "-":
            raise FormatError("invalid duration %r: it must not be negative" % text)
        body = body[1:]
    pos = 0
    total = 0.0
    while pos < len(body):
        match = _DURATION_PART_RE.match(body, pos)
        if not match:
            hint = ""
            if re.match(r"^\d+(\.\d+)?$", body):
                hint = " (a unit is required, e.g. '%ss' or '%sm')" % (body, body)
            raise FormatError(
                "invalid duration %r%s: use Go duration syntax such as '24h', '1h30m', '90m', '3600s' or '0'"
                % (text, hint)
            )
        total += float(match.group(1)) * _DURATION_UNITS[match.group(2)]
        pos = match.end()
    return datetime.timedelta(microseconds=round(total * 1e6))


def format_duration(delta):
    """Format a timedelta the way Go prints whole-second durations (``23h59m0s``, ``0s``)."""
    seconds = int(delta.total_seconds())
    if seconds == 0:
        return "0s"
    sign = "-" if seconds < 0 else ""
    seconds = abs(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return "%s%dh%dm%ds" % (sign, hours, minutes, secs)
    if minutes:
        return "%s%dm%ds" % (sign, minutes, secs)
    return "%s%ds" % (sign, secs)


# --- timestamps (time.RFC3339) --------------------------------------------------------------------

def format_rfc3339(moment):
    """UTC RFC3339 with ``Z`` and no fractional seconds, like Go's ``time.RFC3339`` in UTC."""
    if moment.tzinfo is None:
        raise FormatError("a timezone-aware datetime is required")
    return moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


_RFC3339_RE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"
)


def parse_rfc3339(text):
    """Parse an RFC3339 timestamp (``Z`` or an offset, optional fraction) into an aware datetime."""
    match = _RFC3339_RE.fullmatch(text.strip()) if isinstance(text, str) else None
    if not match:
        raise FormatError("invalid RFC3339 timestamp %r" % (text,))
    year, month, day, hour, minute, second = (int(x) for x in match.groups()[:6])
    fraction = match.group(7)
    micro = int(round(float(fraction) * 1e6)) if fraction else 0
    micro = min(micro, 999999)
    zone = match.group(8)
    if zone in ("Z", "z"):
        tz = datetime.timezone.utc
    else:
        sign = 1 if zone[0] == "+" else -1
        tz = datetime.timezone(sign * datetime.timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])))
    try:
        return datetime.datetime(year, month, day, hour, minute, second, micro, tzinfo=tz)
    except ValueError as exc:
        raise FormatError("invalid RFC3339 timestamp %r: %s" % (text, exc)) from None
