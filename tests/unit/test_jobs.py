"""The job skeleton behind the Lab's runs and the sweeps: bounded slots, order, stop, bounded keeping."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from explorer.jobs.skeleton import Jobs


@dataclass
class Fake:
    key: int
    state: str = "queued"
    proc: None = None
    holds_slot: bool = False
    nbytes: int = 10
    go: threading.Event = field(default_factory=threading.Event)

    @property
    def active(self) -> bool:
        return self.state in ("queued", "running")


class Manager(Jobs):
    def __init__(self, slots: int, fifo: bool, keep=(16, None)) -> None:
        super().__init__(slots, "test-jobs")
        self.fifo, self.kept = fifo, keep
        self.order: list[int] = []
        self.running = self.most = 0

    def first_in_line(self) -> bool:
        return self.fifo

    def keep(self):
        return self.kept

    def execute(self, job: Fake) -> None:
        with self.lock:
            self.order.append(job.key)
            self.running += 1
            self.most = max(self.most, self.running)
        job.go.wait(30)
        with self.lock:
            self.running -= 1
        job.state = "done"


def until(cond, timeout: float = 30.0) -> None:
    deadline = time.time() + timeout
    while not cond():
        assert time.time() < deadline, "timed out"
        time.sleep(0.01)


def submit(m: Manager, n: int) -> list[Fake]:
    jobs = [Fake(i) for i in range(n)]
    for job in jobs:
        with m.lock:
            m.add(job.key, job)
    return jobs


def test_no_more_jobs_run_than_slots_and_one_slot_runs_them_in_order():
    m = Manager(1, fifo=True)
    jobs = submit(m, 5)
    until(lambda: jobs[0].state == "running")
    assert [m.position(j) for j in jobs] == [0, 1, 2, 3, 4]
    for job in jobs:  # released one at a time: each must be the one running
        until(lambda job=job: job.state == "running")
        assert sum(j.state == "running" for j in jobs) == 1
        job.go.set()
    until(lambda: all(j.state == "done" for j in jobs))
    assert m.order == [0, 1, 2, 3, 4] and m.most == 1


def test_two_slots_run_two_at_once_and_a_queued_job_can_be_stopped():
    m = Manager(2, fifo=False)
    jobs = submit(m, 4)
    until(lambda: sum(j.state == "running" for j in jobs) == 2)
    waiting = [j for j in jobs if j.state == "queued"]
    m.stop(waiting[0])
    assert waiting[0].state == "stopped" and m.position(waiting[0]) == 0
    for job in jobs:
        job.go.set()
    until(lambda: all(not j.active for j in jobs))
    assert m.most == 2 and waiting[0].key not in m.order and len(m.order) == 3


def test_finished_jobs_are_kept_within_their_count_and_bytes_the_oldest_dropped_first():
    m = Manager(4, fifo=False, keep=(3, 25))
    jobs = submit(m, 5)
    for job in jobs:
        job.go.set()
    until(lambda: all(j.state == "done" for j in jobs) and not any(j.holds_slot for j in jobs))
    with m.lock:
        m._forget_old()
    assert m.kept_bytes() <= 25 and list(m.jobs) == [3, 4]  # 3 by count, 2 by bytes: the newest


def test_a_finished_job_is_noted_with_its_end_only_where_the_benchmark_asks(tmp_path, monkeypatch):
    """``ATTN_EXPLORER_JOB_TIMINGS`` names a file: each finished job appends its state and when it ended (after its
    slot is given back); once unset, the file is left alone."""
    import json

    from explorer.jobs.skeleton import TIMINGS_ENV

    path = tmp_path / "jobs.jsonl"
    monkeypatch.setenv(TIMINGS_ENV, str(path))
    before = time.time()
    (job,) = submit(Manager(1, fifo=True), 1)
    job.go.set()
    until(lambda: path.exists() and path.read_text().endswith("\n"))
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert len(lines) == 1 and lines[0]["jobs"] == "test-jobs" and lines[0]["state"] == "done"
    assert before <= lines[0]["ended"] <= time.time()
    monkeypatch.delenv(TIMINGS_ENV)
    m = Manager(1, fifo=True)
    (job,) = submit(m, 1)
    job.go.set()
    until(lambda: job.state == "done" and m.slots.acquire(timeout=0.01))  # its slot given back: noted, or not
    time.sleep(0.1)
    assert len(path.read_text().splitlines()) == 1


def test_a_timings_file_that_cannot_be_written_is_logged_and_the_job_still_ends(tmp_path, monkeypatch):
    """A benchmark's ``ATTN_EXPLORER_JOB_TIMINGS`` naming a folder: the job ends done, its slot is given back, no
    exception escapes its thread, and the log says why nothing was noted."""
    import threading

    from explorer.jobs import skeleton

    escaped, warned = [], []
    monkeypatch.setattr(threading, "excepthook", lambda args: escaped.append(args.exc_value))
    monkeypatch.setattr(skeleton._LOG, "warning", lambda msg, *a: warned.append(msg % a))
    monkeypatch.setenv(skeleton.TIMINGS_ENV, str(tmp_path))  # a folder: open(..., "a") raises IsADirectoryError
    m = Manager(1, fifo=True)
    (job,) = submit(m, 1)
    job.go.set()
    until(lambda: job.state == "done" and m.slots.acquire(timeout=0.01))
    until(lambda: bool(warned))
    assert not escaped and skeleton.TIMINGS_ENV in warned[0] and str(tmp_path) in warned[0]
