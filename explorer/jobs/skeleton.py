"""The job skeleton behind the Lab's runs (``explorer.lab.runs``), the Complexity page's sweeps
(``explorer.jobs.sweeps``) and the Explain and Inside pages' slow parts (``explorer.jobs.heavy``).

A job is keyed by its plain configuration: identical requests from any session are one job.
``Jobs`` keeps them (the finished ones bounded, in count and in bytes, the oldest dropped first),
queues them for a bounded number of slots (each job waits in a thread of its own, and gives up
when ``give_up`` says so), runs ``execute`` in its slot, and stops one on request (its child
process is ended). The children themselves are ``explorer.jobs.children``'s.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import threading
import time
from collections import OrderedDict
from collections.abc import Hashable

TIMINGS_ENV = "ATTN_EXPLORER_JOB_TIMINGS"  # a file: each finished job's kind and end time appended (the benchmarks')
_LOG = logging.getLogger(__name__)


class Jobs:
    """The skeleton. A job has ``state`` ("queued", "running", ...; ``active`` while it may still
    run), ``proc`` (its child, while one runs) and ``nbytes`` (what it keeps). Subclasses give
    ``execute`` and may change ``give_up``, ``stopped``, ``keep``, ``first_in_line``, ``on_start``."""

    def __init__(self, slots: int, name: str) -> None:
        self.lock = threading.Lock()
        self.jobs: OrderedDict[Hashable, object] = OrderedDict()
        self.queue: list = []
        self.slots = threading.Semaphore(slots)
        self.name = name

    # ---- what a subclass decides ----

    def execute(self, job) -> None:
        raise NotImplementedError

    def give_up(self, job) -> bool:
        """A queued job stops waiting for a slot (it was stopped meanwhile)."""
        return job.state != "queued"

    def keep(self) -> tuple[int, int | None]:
        """(finished jobs kept, bytes of them kept; None: any)."""
        return 16, None

    def first_in_line(self) -> bool:
        """Whether jobs start strictly in the order they were queued."""
        return False

    def stopped(self, job) -> None:
        """Mark a job stopped on request (a running one may be marked by ``execute`` when its child ends)."""
        if job.active:
            job.state = "stopped"

    # ---- the skeleton ----

    def get(self, key: Hashable):
        with self.lock:
            return self.jobs.get(key)

    def add(self, key: Hashable, job) -> None:
        """Keep ``job`` under ``key`` and queue it (call with the lock held)."""
        self.jobs[key] = job
        self.jobs.move_to_end(key)
        self._forget_old()
        self.queue.append(job)
        threading.Thread(target=self._run, args=(job,), name=self.name, daemon=True).start()

    def wait_for_slot(self, job) -> bool:
        """Wait until ``job`` holds a slot (True), or until it gives up (False)."""
        while True:
            if self.give_up(job):
                return False
            if self.first_in_line():
                with self.lock:
                    ahead = bool(self.queue) and self.queue[0] is not job
                if ahead:
                    time.sleep(0.05)
                    continue
            if self.slots.acquire(timeout=0.5):
                return True

    def _run(self, job) -> None:
        if not self.wait_for_slot(job):
            self.stop(job)
            return
        with self.lock:
            if job.state != "queued":
                self.slots.release()
                return
            self.queue.remove(job)
            job.state = "running"
            job.holds_slot = True
            self.on_start(job)
        try:
            self.execute(job)
        finally:
            with self.lock:
                give = job.holds_slot
                job.holds_slot = False
                self._forget_old()
            if give:
                self.slots.release()
            self.note(job)

    def note(self, job) -> None:
        """Append the job's end to the file ``ATTN_EXPLORER_JOB_TIMINGS`` names, if it names one: a benchmark compares
        when a job ended with when its page showed the result (``benchmarks/explain_wait.py``)."""
        path = os.environ.get(TIMINGS_ENV)
        if not path:
            return
        line = {"jobs": self.name, "kind": getattr(job, "kind", None), "state": job.state, "ended": time.time()}
        try:
            with open(path, "a") as f:  # one short line per write: lines of two threads do not interleave
                f.write(json.dumps(line) + "\n")
        except OSError as err:  # a benchmark's file it cannot write: said in the log, the job unaffected
            _LOG.warning("%s names a file that cannot be written: %s", TIMINGS_ENV, err)

    def on_start(self, job) -> None:
        """Called with the lock held as ``job`` takes its slot."""

    def position(self, job) -> int:
        """How many jobs wait before this one (0: it is not waiting)."""
        with self.lock:
            return self.queue.index(job) + 1 if job in self.queue else 0

    def stop(self, job) -> None:
        """Stop a job: out of the queue, its child ended (woken first, should it be paused)."""
        with self.lock:
            if job in self.queue:
                self.queue.remove(job)
            self.stopped(job)
            proc = job.proc
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGCONT)  # a paused child must wake to end
            proc.terminate()

    def _forget_old(self) -> None:
        """Drop the oldest finished jobs beyond ``keep()`` (call with the lock held)."""
        count, max_bytes = self.keep()
        finished = [
            (key, getattr(job, "nbytes", 0))
            for key, job in self.jobs.items()
            if not job.active and not getattr(job, "kept", False)  # a job marked kept is never dropped
        ]
        total = sum(b for _, b in finished)
        for i, (key, nbytes) in enumerate(finished):
            if len(finished) - i <= count and (max_bytes is None or total <= max_bytes):
                break
            del self.jobs[key]
            total -= nbytes

    def kept_bytes(self) -> int:
        with self.lock:
            return sum(getattr(job, "nbytes", 0) for job in self.jobs.values() if not job.active)
