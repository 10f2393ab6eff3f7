"""The lab starts every time (issue 22 point 5): lab/bin/lab-up and lab/mirror/mirror-up judge a process they
just started by whether it exists, not by its /proc/<pid>/cmdline (until its exec, a copy of the starting shell),
and print nothing about a pid that is gone. Driven with a stand-in `setsid` that execs slowly; no control plane
is started (lab-up's own functions are run on their own)."""

import os
import re
import shutil
import socket
import subprocess
import sys
import time

import pytest

LAB = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROCS = os.path.join(LAB, "bin", "lab-procs.sh")
MIRROR_UP = os.path.join(LAB, "mirror", "mirror-up")
MIRROR_DOWN = os.path.join(LAB, "mirror", "mirror-down")

# For its first 1.5 s this process is not yet the command it starts: its cmdline names neither the command nor its
# arguments, as a forked shell's before its exec.
SLOW_SETSID = """#!/bin/bash
export _SLOW_ARGV="$(printf '%%q ' "$@")"
exec bash -c 'sleep 1.5; eval "exec %s $_SLOW_ARGV"'
"""


@pytest.fixture
def slow_path(tmp_path):
    bindir = tmp_path / "slowbin"
    bindir.mkdir()
    (bindir / "setsid").write_text(SLOW_SETSID % shutil.which("setsid"))
    (bindir / "setsid").chmod(0o755)
    return "%s:%s" % (bindir, os.environ["PATH"])


def gone_pid():
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def bash(script, env=None, timeout=60):
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, **(env or {})))


def lab_up_functions(*names):
    """The text of lab-up's own shell functions, to run them without starting a control plane."""
    with open(os.path.join(LAB, "bin", "lab-up")) as f:
        text = f.read()
    out = []
    for name in names:
        m = re.search(r"^%s\(\) \{.*?^\}$" % re.escape(name), text, re.S | re.M)
        assert m, "lab-up has no function %s" % name
        out.append(m.group(0))
    return "\n".join(out)


def test_a_slowly_exec_ing_component_that_comes_up_is_not_reported_failed(tmp_path, slow_path):
    run = tmp_path / "run"
    (run / "pids").mkdir(parents=True)
    (run / "logs").mkdir()
    fake_lab = tmp_path / "lab"
    (fake_lab / "_cache").mkdir(parents=True)
    program = fake_lab / "_cache" / "component"  # a lab binary: up (its marker file) a moment after its exec
    program.symlink_to(sys.executable)
    program = "%s -c 'import pathlib, time; time.sleep(0.5); pathlib.Path(\"%s/up\").touch(); time.sleep(30)'" % (
        program, run)
    script = """
. %s
%s
run=%s; lab=%s
setsid %s >>"$run/logs/c.log" 2>&1 < /dev/null &
echo $! > "$run/pids/c.pid"
alive c && echo "alive before its exec"
wait_for c 20 test -f "$run/up"
alive c && echo "alive after"
kill "$(cat "$run/pids/c.pid")"
""" % (PROCS, lab_up_functions("alive", "wait_for"), run, fake_lab, program)
    p = bash(script, env={"PATH": slow_path})
    assert p.returncode == 0, p.stderr
    assert p.stdout.split("\n")[:2] == ["alive after", ""], p.stdout
    assert p.stderr == ""


def test_a_component_that_exits_is_reported_failed_at_once(tmp_path, slow_path):
    (tmp_path / "pids").mkdir()
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "c.log").write_text("bind: address already in use\n")
    script = """
. %s
%s
run=%s
setsid false < /dev/null &
echo $! > "$run/pids/c.pid"
wait_for c 30 false
""" % (PROCS, lab_up_functions("wait_for"), tmp_path)
    began = time.time()
    p = bash(script, env={"PATH": slow_path})
    assert p.returncode == 1
    assert time.time() - began < 10
    assert "lab-up: c failed to start (its process exited)" in p.stderr
    assert "address already in use" in p.stderr


def test_proc_wait_tells_running_but_silent_from_gone(tmp_path):
    script = """
. %s
sleep 30 & echo $! > %s/a.pid
proc_wait %s/a.pid 3 0.1 false; echo "running: $?"
kill %%1; wait
proc_wait %s/a.pid 3 0.1 false; echo "gone: $?"
echo %d > %s/a.pid
proc_wait %s/a.pid 3 0.1 false; echo "recycled: $?"
proc_cmdline %d || echo "no cmdline"
""" % (PROCS, tmp_path, tmp_path, tmp_path, gone_pid(), tmp_path, tmp_path, gone_pid())
    p = bash(script)
    assert p.stdout.split() == ["running:", "2", "gone:", "1", "recycled:", "1", "no", "cmdline"], p.stdout
    assert p.stderr == ""


def test_mirror_up_with_a_stale_pid_and_a_slow_exec_comes_up_without_noise(tmp_path, slow_path):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    pidfile = tmp_path / "pids" / "mirror.pid"
    pidfile.parent.mkdir()
    pidfile.write_text("%d\n" % gone_pid())  # a mirror of an earlier lab that is gone
    env = dict(os.environ, LAB_MIRROR_PORT=str(port), LAB_MIRROR_ROOT=str(tmp_path / "root"),
               LAB_MIRROR_PIDFILE=str(pidfile), LAB_MIRROR_LOG=str(tmp_path / "mirror.log"),
               LAB_PYTHON=sys.executable, PATH=slow_path)
    try:
        p = subprocess.run([MIRROR_UP], env=env, capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        assert p.stdout.strip().splitlines()[-1] == "http://127.0.0.1:%d" % port
        assert p.stderr == ""
    finally:
        subprocess.run([MIRROR_DOWN, "--purge"], env=env, capture_output=True, text=True, timeout=60)


def test_lab_up_says_nothing_about_a_component_whose_recorded_pid_is_gone(tmp_path):
    (tmp_path / "pids").mkdir()
    (tmp_path / "pids" / "etcd.pid").write_text("%d\n" % gone_pid())
    p = bash(". %s\n%s\nrun=%s; lab=%s\nalive etcd || echo down\nalive kwok || echo down"
             % (PROCS, lab_up_functions("alive"), tmp_path, LAB))
    assert (p.stdout, p.stderr) == ("down\ndown\n", "")


def test_lab_down_stops_a_component_the_pid_files_do_not_list(tmp_path):
    """A lab-up that raced another left a running component out of lab/_run/pids; the next lab-up then failed on
    its port (etcd: "bind: address already in use"). lab-down stops any process of this lab's binaries whose command
    line names this run directory, and leaves another run directory's (the kubespray flavour's) alone."""
    lab = tmp_path / "lab"
    shutil.copytree(os.path.join(LAB, "bin"), lab / "bin")
    (lab / "_cache" / "bin").mkdir(parents=True)
    (lab / "_run" / "pids").mkdir(parents=True)
    tail = lab / "_cache" / "bin" / "tail"
    shutil.copy(shutil.which("tail"), tail)
    ours = subprocess.Popen([str(tail), "-F", "/dev/null", str(lab / "_run" / "etcd" / "member")],
                            stderr=subprocess.DEVNULL)
    other = subprocess.Popen([str(tail), "-F", "/dev/null", str(lab / "_run-kubespray" / "etcd" / "member")],
                             stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        out = subprocess.run([str(lab / "bin" / "lab-down")], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert ours.wait(timeout=20) is not None
        assert "which %s/pids did not list" % (lab / "_run") in out.stdout
        assert other.poll() is None
    finally:
        for p in (ours, other):
            if p.poll() is None:
                p.kill()
                p.wait()
