"""k8s.waiter: one deadline shared by a task's waits, and the poll loop."""

from k8s_fakes import FakeTime

from ansible_collections.kubewin.nodes.plugins.module_utils._k8s import waiter


def test_poll_returns_as_soon_as_done_without_sleeping(monkeypatch):
    clock = FakeTime()
    monkeypatch.setattr(waiter, "time", clock)
    value, done = waiter.poll(waiter.Deadline(30), 2.0, lambda: "ready", lambda v: v == "ready")
    assert (value, done) == ("ready", True) and clock.sleeps == []


def test_poll_times_out_with_the_last_value_read_after_the_last_sleep(monkeypatch):
    clock = FakeTime()
    monkeypatch.setattr(waiter, "time", clock)
    reads = []
    value, done = waiter.poll(waiter.Deadline(5), 2.0, lambda: reads.append(clock.now) or len(reads), lambda v: False)
    assert done is False
    # sleeps never overshoot the deadline, and one read follows the last sleep
    assert clock.sleeps == [2.0, 2.0, 1.0] and value == 4 and reads[-1] == 1005.0


def test_a_deadline_is_shared_and_never_negative(monkeypatch):
    clock = FakeTime()
    monkeypatch.setattr(waiter, "time", clock)
    deadline = waiter.Deadline(-3)
    assert deadline.timeout == 0 and deadline.left() == 0
    deadline = waiter.Deadline(10)
    clock.sleep(4)
    assert deadline.left() == 6
