"""Background workers run at the lowest priority: nice 19, and the heavy and Lab workers in a scheduling
group of their own at the lowest weight, so that with Linux's autogroup their CPU is not charged to their
server's session (``explorer.jobs.children.spawn``, ``own_group``)."""

from __future__ import annotations

import os
import sys
import types

import pytest
from procs import group_nice, nice_of

from explorer.jobs import children

SLEEPER = [sys.executable, "-c", "import time; print('ready', flush=True); time.sleep(60)"]


def autogroup_on() -> bool:
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as f:
            return f.read().strip() == "1"
    except OSError:
        return False


def test_a_session_in_no_group_reads_as_none():
    assert nice_of("") is None and nice_of("\n") is None
    assert nice_of("/autogroup-42 nice 19\n") == 19 and nice_of("/autogroup-7 nice 0") == 0


@pytest.fixture
def started():
    procs = []

    def start(**kw):
        procs.append(children.spawn(SLEEPER, **kw))
        assert procs[-1].stdout.readline().strip() == "ready"  # past ``nice``: the worker itself runs
        return procs[-1]

    yield start
    for p in procs:
        p.kill()
        p.wait()


def test_a_worker_of_its_own_group_has_its_session_at_the_lowest_weight(started):
    proc = started(own_group=True)
    assert os.getsid(proc.pid) == proc.pid != os.getsid(0)
    assert os.getpriority(os.PRIO_PROCESS, proc.pid) == min(19, os.getpriority(os.PRIO_PROCESS, 0) + 19)
    if autogroup_on():
        assert group_nice(proc.pid) == 19 and group_nice(os.getpid()) != 19
    else:  # a kernel without autogroup: nice 19 is the whole story, and saying so is not an error
        assert children.lowest_group(proc.pid) is False


def test_other_children_stay_in_this_session_where_a_signal_to_the_group_reaches_them(started):
    proc = started()
    assert os.getsid(proc.pid) == os.getsid(0)
    assert os.getpriority(os.PRIO_PROCESS, proc.pid) == min(19, os.getpriority(os.PRIO_PROCESS, 0) + 19)
    if autogroup_on():
        assert group_nice(proc.pid) == group_nice(os.getpid())


def test_the_heavy_and_lab_workers_ask_for_a_group_of_their_own(monkeypatch):
    from explorer.jobs import heavy
    from explorer.lab import runs

    asked = []

    def spawned(who):
        def spawn(cmd, **kw):
            asked.append((who, kw))
            return types.SimpleNamespace()  # a process the caller may label

        return spawn

    monkeypatch.setattr(heavy, "spawn", spawned("heavy"))
    monkeypatch.setattr(runs, "spawn", spawned("lab"))
    monkeypatch.setattr(runs.RUNS.workers, "take", lambda: None)  # no idle worker kept: a new one is started
    heavy.Heavy()._spawn()
    runs.RUNS._worker()
    ask = {"stdin": True, "own_group": True, "fork": True}
    assert asked == [("heavy", ask), ("lab", ask)]
