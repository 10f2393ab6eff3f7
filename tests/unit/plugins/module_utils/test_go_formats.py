"""Unit tests for plugins/module_utils/_go_formats.py (Go durations and RFC 3339 timestamps)."""

import datetime

import pytest

from ansible_collections.kubewin.nodes.plugins.module_utils import _go_formats as gf


@pytest.mark.parametrize("text,seconds", [
    ("24h", 86400), ("90m", 5400), ("1h30m", 5400), ("1.5h", 5400), ("0", 0), ("0s", 0),
    ("3600s", 3600), ("2h45m10s", 9910), ("+10m", 600), (".5m", 30), ("1500ms", 1.5),
    ("24h0m0s", 86400), ("1m30s500ms", 90.5),
])
def test_parse_duration(text, seconds):
    assert gf.parse_duration(text).total_seconds() == pytest.approx(seconds)


@pytest.mark.parametrize("bad", ["", "24", "3600", "h", "1d", "1 h", "-1h", "1h-5m", "abc", "1hh", True, None])
def test_parse_duration_rejects(bad):
    with pytest.raises(gf.FormatError):
        gf.parse_duration(bad)


def test_parse_duration_bare_number_hint():
    with pytest.raises(gf.FormatError, match="unit is required.*3600s"):
        gf.parse_duration("3600")


def test_format_duration_go_style():
    assert gf.format_duration(datetime.timedelta(hours=24)) == "24h0m0s"
    assert gf.format_duration(datetime.timedelta(minutes=90)) == "1h30m0s"
    assert gf.format_duration(datetime.timedelta(seconds=59)) == "59s"
    assert gf.format_duration(datetime.timedelta(0)) == "0s"


# --- RFC 3339 timestamps ------------------------------------------------------------------------

def test_parse_rfc3339_rejects_garbage():
    for bad in ("2025-03-01 12:00:00", "2025-03-01T12:00:00", "tomorrow", "2025-13-01T00:00:00Z"):
        with pytest.raises(gf.FormatError):
            gf.parse_rfc3339(bad)
