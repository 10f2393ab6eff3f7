"""The support bundle's node_bundle script through the lab's interpreter, with the simulated Get-WinEvent
(winsim/ps/winevents.py): a record whose message cannot be formatted costs only its message, an empty log is an empty
list (review-s7 B2), a log the host lacks is named, and the runtime's log is read where it is (its event source, its
--log-file). No control plane."""

import os
from unittest import mock

import pytest
from winsim import core
from winsim.ps.winhost import run_kubewin_script as run_ps

# isort: split
# winsim.core has put the stand-in ansible.windows collection on sys.path.
from ansible_collections.ansible.windows.plugins.module_utils import winsim_scm

from ansible_collections.kubewin.nodes.plugins.plugin_utils import _bundle as bundle

LOCALE = "The locale specific resource for the desired message is not present"
T0 = 1.9e9


@pytest.fixture
def host(tmp_path):
    with mock.patch.object(winsim_scm.time, "time", return_value=T0):
        yield core.create_host(str(tmp_path), "w")


def _plant(host, logs, log_file=None):
    with host.open():
        host.state["eventlogs"] = logs
        if log_file:
            svc = host.state["services"]["containerd"]
            svc["image_path"] += ' --log-file "%s"' % log_file
            local = host.local_path(log_file)
            os.makedirs(os.path.dirname(local), exist_ok=True)
            with open(local, "w") as f:
                f.write("time=1 level=info msg=\"starting containerd\"\ntime=2 level=info msg=serving\n")


def _run(host, runtime="containerd", **params):
    with host.open():
        answer = run_ps(host, "node_bundle", dict(bundle.script_parameters(runtime, True, 10, 4, 3), **params), False)
    assert not answer["failed"], answer["error"]
    return answer["result"]


def _record(seconds, event_id, provider, message, level=4, format_error=None):
    r = {"time": seconds, "id": event_id, "level": level, "provider": provider, "message": message}
    if format_error:
        r["format_error"] = format_error
    return r


def test_an_unformattable_record_costs_its_message_only_and_an_empty_log_is_no_error(host):
    _plant(host, {"System": {"sources": ["Service Control Manager", "Disk"], "records": [
        _record(T0 - 30, 7036, "Service Control Manager", "The kubelet service entered the running state."),
        _record(T0 - 20, 11, "Disk", None, level=2, format_error=LOCALE),
        _record(T0 - 10, 7036, "Service Control Manager", "The kube-proxy service entered the running state.")]},
        "Application": {"sources": [], "records": []}})
    events = _run(host)["events"]
    system = events["System"]
    assert system["error"] is None and system["note"] == "read with errors, the first: " + LOCALE
    # newest first, the unformattable one kept with Get-WinEvent's NoEventMessage
    assert [(r["id"], r["message"]) for r in system["records"]] == [
        (7036, "The kube-proxy service entered the running state."), (11, "Cannot retrieve event message text."),
        (7036, "The kubelet service entered the running state.")]
    assert system["records"][1]["level"] == "Error" and system["records"][1]["provider"] == "Disk"
    assert system["records"][0]["time"] == "2030-03-17T17:46:30.0000000Z"
    assert events["Application"] == {"records": [], "error": None, "note": None}


def test_max_events_keeps_the_newest_and_a_missing_log_is_named(host):
    records = [_record(T0 - 100 + i, 1000 + i, "Service Control Manager", "m%d" % i) for i in range(5)]
    _plant(host, {"System": {"sources": ["Service Control Manager"], "records": records}})
    events = _run(host)["events"]
    assert [r["id"] for r in events["System"]["records"]] == [1004, 1003, 1002]  # MaxEvents 3
    assert events["Application"]["records"] == []
    assert events["Application"]["error"] == 'There is not an event log on the localhost computer that matches ' \
                                             '"Application".'


def test_the_runtime_log_is_its_log_file_and_its_config_the_one_its_command_line_names(host):
    """containerd registers no event source (review-s8 W3): no Application read for it; its --log-file and the
    --config its service runs with are read (the collection's own containerd logs to C:\\var\\log\\containerd)."""
    log_file = "C:\\var\\log\\containerd\\containerd.log"
    _plant(host, {"System": {"sources": [], "records": []}, "Application": {"sources": ["x"], "records": [
        _record(T0 - 8, 2, "x", "other")]}}, log_file=log_file)
    with host.open():
        host.state["services"]["containerd"]["image_path"] += ' --config "C:\\ctd conf\\config.toml"'
        local = host.local_path("C:\\ctd conf\\config.toml")
        os.makedirs(os.path.dirname(local))
        with open(local, "w") as f:
            f.write("version = 3\n")
    result = _run(host)
    runtime = result["runtime"]
    assert runtime["events"] is None
    assert runtime["log_file"] == log_file
    assert runtime["log"]["text"].endswith("msg=serving") and runtime["log"]["lines"] == 2
    assert runtime["config_file"] == "C:\\ctd conf\\config.toml" and runtime["config"]["text"] == "version = 3"
    files = {f["file"]: f for f in bundle.host_files(result, bundle.script_parameters("containerd", True, 10, 4, 3),
                                                     {}) if f["file"]}
    assert "node/runtime/containerd.log" in files and "node/runtime/events.json" not in files
    assert files["node/runtime/config.toml"]["text"] == "version = 3\n"


def test_a_runtime_without_an_event_source_and_log_file_has_a_note_and_no_file(host):
    # the default host: containerd 2.x registered without --log-file; asked for an event source, Get-WinEvent says
    # there is none
    result = _run(host, RuntimeEventSource="containerd")
    runtime = result["runtime"]
    assert runtime["events"]["records"] == [] and runtime["events"]["error"] is None
    assert runtime["events"]["note"] == 'There is not an event provider on the localhost computer that matches ' \
                                        '"containerd".'
    assert runtime["log_file"] is None and runtime["log"] is None and runtime["config_file"] is None
    # a host state from before event logs were modelled: the fresh System and Application logs, empty
    assert result["events"]["System"] == {"records": [], "error": None, "note": None}


def test_the_read_tail_limits_are_parameters_of_the_shared_function(host):
    # node_bundle reads MaxChars bytes (4 KiB here) with the same Read-LogTail as service_apply's 64 KiB watch
    with host.open():
        local = host.local_path("C:\\var\\log\\kubelet\\kubelet.log")
        os.makedirs(os.path.dirname(local), exist_ok=True)
        with open(local, "w") as f:
            f.write("".join("I1128 line %04d %s\n" % (i, "x" * 40) for i in range(200)))
    entry = _run(host)["files"]["C:\\var\\log\\kubelet\\kubelet.log"]
    assert entry["truncated"] is True and entry["lines"] == 10
    assert entry["text"].split("\n")[-1].startswith("I1128 line 0199")
