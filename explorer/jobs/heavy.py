"""The Explain, Inside, Next token and Real model pages' slow computations, outside the server, shared and bounded.

Each runs in a worker (``python -m attn_core.heavy``, at the lowest CPU priority) that has the
model loaded and serves request after request; at most ``SLOTS`` compute at once, the rest wait in
a queue with their position shown. A job is keyed by its plain request (kind and arguments):
identical requests from any session are one job, and a finished one is kept (``KEEP`` jobs and
``KEEP_BYTES`` of results, the oldest dropped first). Its parts arrive as plain lists and floats,
each as soon as the worker has it, so a page draws what has arrived and polls for the rest instead
of holding its script thread (and the GIL) for seconds. A session that asks for something else
leaves the jobs it watched; a job nobody watches any more is cancelled (the worker stops between
two parts and serves the next request). The queue, the slots and the bounded keeping are the job
skeleton's (``explorer.jobs.skeleton``).

An Explain job that starts when nothing else runs or waits, with a second worker waiting, takes the
other slot too and computes in both workers (the references in one, the methods read from attention
in the other: ``explorer.jobs.split``), so that one learner alone on the server gets both cores; it
is still one job, and never more than ``SLOTS`` workers compute at once.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

from explorer.base.cache import nbytes as size_of
from explorer.jobs.children import Idle, JsonLines, spawn
from explorer.jobs.skeleton import Jobs
from explorer.jobs.split import execute_split, second_slot

SLOTS = 2  # computations at once on the server (two cores; each worker runs torch on one thread)
KEEP = 64  # finished jobs kept
KEEP_BYTES = 48 * 2**20  # and at most this many bytes of their results
IDLE_S = 300.0  # a worker with nothing to do for this long exits (each holds ~400 MiB: torch and the model)
WORKER = [sys.executable, "-m", "attn_core.heavy"]
_IDS = itertools.count(1)
RETRY_S = 30.0  # a job whose worker died is tried again when asked for after this long
STAGED = {"explain"}  # kinds whose worker sends several parts (and can stop between two)


@dataclass
class Job:
    kind: str
    args: dict
    state: str = "queued"  # queued, running, done, failed, stopped
    result: dict = field(default_factory=dict)  # the parts that have arrived, merged
    parts: int = 0
    progress: float = 0.0
    error: tuple = (None, {})  # a failed job's engine error code and params
    message: str = ""
    proc: subprocess.Popen | None = None
    helper: subprocess.Popen | None = None  # a split job's second worker (flow), while it computes
    split: bool = False  # computed in two workers
    holds_slot: bool = False
    watchers: set = field(default_factory=set)
    id: int = field(default_factory=lambda: next(_IDS))
    started: float | None = None
    ended: float | None = None
    size: int = 0

    @property
    def active(self) -> bool:
        return self.state in ("queued", "running")

    @property
    def done(self) -> bool:
        return self.state == "done"

    @property
    def nbytes(self) -> int:
        return self.size

    def fail(self, end: dict | None, other_line: str) -> None:
        """Failed: the worker's end line says why (its engine error code and params), else the last line
        it wrote that was not JSON, else that it ended."""
        self.state = "failed"
        self.message = (end or {}).get("message") or other_line or "the worker ended"
        self.error = (end or {}).get("code"), (end or {}).get("params") or {}


def key_of(kind: str, args: dict) -> tuple:
    return kind, json.dumps(args, sort_keys=True, ensure_ascii=False)


def offered_table() -> str:
    """The operator's table of offered models as this process has it now (``ATTN_EXPLORER_MODELS``): a request
    names its model by its offered name, which a worker resolves with the table it started with."""
    from attn_core.models import MODELS_ENV

    return os.environ.get(MODELS_ENV, "")


class Heavy(Jobs):
    def __init__(self) -> None:
        super().__init__(SLOTS, "heavy")
        self.workers = Idle(lambda: IDLE_S, "heavy-reaper")
        self.spawned = 0  # workers started, for the tests
        self.warming = False  # a thread is starting workers (``warm``)

    def keep(self) -> tuple[int, int]:
        return KEEP, KEEP_BYTES

    def ask(self, kind: str, args: dict, session: str = "") -> Job:
        """The job for this request (the queued, running or finished one, else a new one), watched by ``session``."""
        args = json.loads(json.dumps(args))  # plain: tuples as lists, as the worker will see them
        key = key_of(kind, args)
        with self.lock:
            job = self.jobs.get(key)
            if job is None or job.state == "stopped" or (job.state == "failed" and self.retry(job)):
                job = Job(kind, args)
                self.add(key, job)
            else:
                self.jobs.move_to_end(key)
            job.watchers.add(session)
        return job

    @staticmethod
    def retry(job: Job) -> bool:
        """Whether a failed job is computed again when asked for: an engine's refusal (a sentence it
        cannot take) never is, the same answer would come; a worker that died, after ``RETRY_S``."""
        return job.error[0] is None and time.time() - (job.ended or 0.0) > RETRY_S

    def retry_now(self) -> None:
        """A learner pressed "Try again" after a worker died: every job that failed so (not an engine's
        refusal) is computed anew when next asked for."""
        with self.lock:
            for job in self.jobs.values():
                if job.state == "failed" and job.error[0] is None:
                    job.ended = 0.0

    def leave(self, job: Job, session: str = "") -> None:
        """``session`` no longer waits for ``job``; a job nobody waits for any more is cancelled."""
        with self.lock:
            job.watchers.discard(session)
            last = not job.watchers
        if last and (job.state == "queued" or (job.state == "running" and job.kind in STAGED)):
            self.stop(job)  # a job of one part that runs is let finish: its result is kept for the next asker

    def position(self, job: Job) -> int:
        """How many computations run or wait before this one (0 when it is running or finished)."""
        with self.lock:
            if job not in self.queue:
                return 0
            running = sum(1 for j in self.jobs.values() if j.state == "running")
            return self.queue.index(job) + running

    def stop(self, job: Job) -> None:
        """A queued job leaves the queue; a running one is asked to stop between two parts (its worker is kept)."""
        with self.lock:
            if job in self.queue:
                self.queue.remove(job)
            if not job.active:
                return
            was = job.state
            job.state, job.ended = "stopped", time.time()
            procs = [job.proc, job.helper]
        for proc in procs:
            if was == "running" and proc is not None and proc.poll() is None:
                try:
                    proc.stdin.write(json.dumps({"cancel": True, "id": job.id}) + "\n")
                    proc.stdin.flush()
                except (OSError, ValueError):
                    pass

    def warm(self) -> threading.Thread | None:
        """Start workers if fewer than ``SLOTS`` wait and none computes: their imports and the model's
        load (seconds) are then behind them when the first request comes (two waiting: an Explain
        request can use both cores). In a thread of its own (returned; None when there is nothing to
        do): a page's rerun never waits for a start (the first one waits for the fork server's imports)."""
        with self.lock:
            if self.warming or any(j.state == "running" for j in self.jobs.values()):
                return None
            self.warming = True
        thread = threading.Thread(target=self._warm, name="heavy-warm", daemon=True)
        thread.start()
        return thread

    def _warm(self) -> None:
        try:
            with self.workers.lock:
                missing = SLOTS - sum(1 for p, _ in self.workers.waiting if p.poll() is None)
            for _ in range(max(0, missing)):
                self.workers.give(self._spawn())
        except OSError:
            return
        finally:
            with self.lock:
                self.warming = False

    def _spawn(self) -> subprocess.Popen:
        self.spawned += 1
        proc = spawn(WORKER, stdin=True, own_group=True, fork=True)
        proc.table = offered_table()  # what the model names it is sent mean to it
        return proc

    def _end_stale(self) -> None:
        """Waiting workers started under another table of offered models end: a name must mean to the worker
        what it means to the server (its table is fixed for a server's life; a test process changes it)."""
        with self.workers.lock:
            stale = [p for p, _ in self.workers.waiting if getattr(p, "table", None) != offered_table()]
            self.workers.waiting = [(p, t) for p, t in self.workers.waiting if p not in stale]
        for proc in stale:
            proc.terminate()
            threading.Thread(target=proc.wait, daemon=True).start()

    def on_start(self, job: Job) -> None:
        job.started = time.time()

    def execute(self, job: Job) -> None:
        self._end_stale()
        pair = second_slot(self, job)
        if pair is not None:
            try:
                execute_split(self, job, *pair)
            finally:
                self.slots.release()
            return
        try:
            proc = self.workers.take() or self._spawn()
            proc.stdin.write(json.dumps({"kind": job.kind, "args": job.args, "id": job.id}) + "\n")
            proc.stdin.flush()
        except OSError as err:
            job.state, job.message, job.ended = "failed", str(err), time.time()
            return
        job.proc = proc
        lines = JsonLines(proc.stdout)
        end = None
        for item in lines:
            if "end" in item:
                end = item
                break
            part = item.get("part") or {}
            with self.lock:
                if part:  # a part with nothing new only moves the progress bar (the page is not drawn again)
                    job.result = {**job.result, **part}  # a new dict: a reader never sees one half-updated
                    job.parts += 1
                job.progress = float(item.get("progress", job.progress))
        with self.lock:
            job.proc, job.ended = None, time.time()
            job.size = size_of(job.result) + size_of(job.args)
            if end is not None:  # it answered (a result, a cancel or a refusal): back to wait for the next request
                self.workers.give(proc)
            if end is not None and end["end"] == "ok" and job.state == "running":
                job.state, job.progress = "done", 1.0
            elif job.state == "running":
                job.fail(end, lines.last_other)
            if end is None and proc.poll() is None:
                proc.terminate()
        if end is None:
            threading.Thread(target=proc.wait, daemon=True).start()


HEAVY = Heavy()
