"""The Lab's training runs, outside the server process, bounded and shared.

A run trains in a worker process (``python -m attn_core train --serve``) at the lowest CPU priority:
in the server, the training loop would hold the GIL between its small tensor operations and every
student's rerun would wait. Workers are kept and reused: importing torch anew for every run cost ~2
s, more than a preset takes to train. Identical runs (the same settings and seed) are one run,
shared by every session that asks; at most ``SLOTS`` train at once and the rest wait in a queue,
their position shown. Pause tells the worker to hold its run between two training steps (it stays a
runnable process that reads its input, so it notices its server's end and dies with it: never a
stopped process left behind) and gives the slot back, so paused runs never starve the class; Play
re-queues it for a slot and tells it to go on there; Step lets it reach its next snapshot. A run
that no session has looked at for ``ORPHAN_S`` seconds (its sessions ended) is stopped. A run's peak
memory is estimated before it starts (``lab.check_memory``): settings over ``lab.MAX_BYTES`` are
refused with the estimate and what to reduce. Snapshots are kept as small float tensors in this
module (never in session state); finished runs are kept up to ``KEEP`` runs and ``KEEP_BYTES`` of
snapshots, the oldest dropped first. The queue, the slots, stopping, the bounded keeping and the
idle workers are the job skeleton's (``explorer.jobs``). Another kind of run on the same machinery (the Vision
page's, ``explorer.vision.runs``) gives its own ``resolve``, ``admit``, ``request`` and ``snap``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import ClassVar

import torch

from attn_core.lab import LabConfig, check_memory, validate
from explorer.jobs.children import Idle, JsonLines, spawn
from explorer.jobs.skeleton import Jobs

SLOTS = 2  # trainings at once: one per core of the machine this was measured on
KEEP = 32  # finished runs kept
KEEP_BYTES = 64 * 2**20  # and at most this many bytes of their snapshots (a 5,000-step run is ~13 MiB)
IDLE_S = 120.0  # a worker with no run for this long exits (each holds ~300 MiB: torch and the model code)
ORPHAN_S = 30.0  # a running run no session has looked at for this long is stopped (a paused one: PAUSED_S)
PAUSED_S = 600.0


@dataclass
class Snap:
    step: int
    train_loss: float | None
    val_loss: float | None
    val_acc: float
    grad_qk: float | None
    weights: list  # per layer: a (H, L, L) float tensor on the probe example
    status: str
    train_acc: float = 0.0
    scores: list = field(default_factory=list)  # per layer, per head: the head detector's scores
    # per layer, per head: the probe's query-key map (two points a token, each with its norm)
    qk: list = field(default_factory=list)

    @property
    def nbytes(self) -> int:
        points = sum(len(h["queries"]) + len(h["keys"]) for layer in self.qk for h in layer)  # x, y and its norm
        weights = sum(w.numel() * w.element_size() for w in self.weights)
        return weights + points * 3 * 8 + 200  # the numbers and the object


@dataclass
class Run:
    cfg: LabConfig  # resolved
    state: str = "queued"  # queued, running, paused, done, diverged, stopped, failed
    snaps: list[Snap] = field(default_factory=list)
    message: str = ""
    proc: subprocess.Popen | None = None
    watchers: dict = field(default_factory=dict)  # session id -> the last time it looked
    pause_at_next: bool = False  # Step: run to the next snapshot, then pause
    holds_slot: bool = False  # a training slot is this run's (a paused run gives it back)
    resuming: bool = False  # Play on a paused run: it waits in the queue for a slot
    error: tuple = (None, {})  # a failed run's engine error code and params, for the message in the UI's language
    # never dropped from the finished runs kept (a preset trained at the start: explorer.classroom.ahead.lab)
    kept: bool = False

    @property
    def seen(self) -> float:
        return max(self.watchers.values(), default=0.0)

    def abandoned(self) -> bool:
        return time.time() - self.seen > (PAUSED_S if self.state == "paused" else ORPHAN_S)

    @property
    def active(self) -> bool:
        return self.state in ("queued", "running", "paused")

    @property
    def nbytes(self) -> int:
        return sum(x.nbytes for x in self.snaps)

    @property
    def progress(self) -> float:
        return (self.snaps[-1].step if self.snaps else 0) / self.cfg.steps


WORKER = [sys.executable, "-m", "attn_core", "train", "--serve"]


def tell(proc: subprocess.Popen, control: str) -> None:
    """Pause or Play, on the worker's input (``attn_core.lab.cli.Commands``); a worker that has
    ended hears nothing (its run's end is read from its output)."""
    try:
        proc.stdin.write(json.dumps({"control": control}) + "\n")
        proc.stdin.flush()
    except (OSError, ValueError):
        pass


class Runs(Jobs):
    """The server's Lab runs (see the module's docstring), on the shared job skeleton."""

    made: ClassVar[
        list[Runs]
    ] = []  # every one of this server (the Lab's, the Vision page's): their live redraws share a budget

    def __init__(self) -> None:
        super().__init__(SLOTS, "lab-run")
        self.workers = Idle(lambda: IDLE_S, "lab-reaper")
        Runs.made.append(self)

    @property
    def runs(self):  # the runs by their settings (the skeleton's jobs)
        return self.jobs

    @property
    def idle(self) -> list[tuple[subprocess.Popen, float]]:
        """The workers waiting for a run, since when."""
        return self.workers.waiting

    def keep(self) -> tuple[int, int]:
        return KEEP, KEEP_BYTES

    def give_up(self, run: Run) -> bool:
        return run.state != "queued" or run.abandoned()

    # ---- what a kind of run decides (the Lab's here; the Vision page's in explorer.vision.runs) ----

    def resolve(self, cfg):
        """The settings as the run's key (checked: a bad one raises AttentionConfigError)."""
        return validate(cfg)

    def admit(self, cfg) -> None:
        """Refuse settings before anything starts (the Lab: over its memory bound)."""
        check_memory(cfg)

    def request(self, cfg) -> dict:
        """The worker's input line that starts the run."""
        return cfg.to_dict()

    def snap(self, item: dict):
        """One snapshot line of the worker as kept here (it has ``step`` and ``status``)."""
        weights = [torch.tensor(w, dtype=torch.float32) for w in item.pop("weights")]
        return Snap(weights=weights, **item)

    # ---- the runs ----

    def get(self, cfg: LabConfig, session: str = "") -> Run | None:
        """The run for these settings, if any (``session`` is marked as watching it)."""
        with self.lock:
            run = self.runs.get(self.resolve(cfg))
            if run is not None:
                run.watchers[session] = time.time()
        return run

    def start(self, cfg: LabConfig, session: str = "") -> Run:
        """The run for these settings: the running, queued, paused or finished one, else a new one.
        Settings estimated over ``lab.MAX_BYTES`` raise an AttentionConfigError (nothing starts)."""
        cfg = self.resolve(cfg)
        self.admit(cfg)
        with self.lock:
            run = self.runs.get(cfg)
            if run is not None and run.state not in ("stopped", "failed"):
                run.watchers[session] = time.time()
                return run
            run = Run(cfg, watchers={session: time.time()})
            self.add(cfg, run)
        return run

    def pause(self, run: Run) -> None:
        """Suspend a running run and give its slot back (another run may train meanwhile)."""
        with self.lock:
            if run.state != "running" or run.proc is None:
                return
            tell(run.proc, "pause")
            run.state = "paused"
            give = run.holds_slot
            run.holds_slot = False
        if give:
            self.slots.release()

    def resume(self, run: Run) -> None:
        """Play on a paused run: it queues for a slot and continues when it has one."""
        with self.lock:
            if run.state != "paused" or run.proc is None or run.resuming:
                return
            run.resuming = True
            run.state = "queued"
            self.queue.append(run)
        threading.Thread(target=self._continue, args=(run,), name="lab-resume", daemon=True).start()

    def _continue(self, run: Run) -> None:
        if not self.wait_for_slot(run):
            with self.lock:
                run.resuming = False
            self.stop(run)
            return
        with self.lock:
            run.resuming = False
            if run in self.queue:
                self.queue.remove(run)
            if run.state != "queued" or run.proc is None:  # stopped or ended while it waited
                self.slots.release()
                return
            run.holds_slot = True
            run.state = "running"
            tell(run.proc, "play")

    def step(self, run: Run) -> None:
        """Run to the next snapshot, then pause."""
        run.pause_at_next = True
        self.resume(run)

    def leave(self, run: Run, session: str) -> None:
        """``session`` no longer watches ``run``; the last one to leave stops it."""
        with self.lock:
            run.watchers.pop(session, None)
            last = not run.watchers
        if last and run.active:
            self.stop(run)

    def _worker(self) -> subprocess.Popen:
        return self.workers.take() or spawn(WORKER, stdin=True, own_group=True, fork=True)

    def execute(self, run: Run) -> None:
        try:
            proc = self._worker()
            proc.stdin.write(json.dumps(self.request(run.cfg)) + "\n")
            proc.stdin.flush()
        except OSError as err:
            run.state, run.message = "failed", str(err)
            return
        run.proc = proc
        threading.Thread(target=self._watch, args=(run,), daemon=True).start()
        lines = JsonLines(proc.stdout)
        end = self._snapshots(run, lines)
        run.proc = None
        with self.lock:
            if run in self.queue:  # it ended (buffered lines) while it waited to resume
                self.queue.remove(run)
        if end is None and proc.poll() is None:
            try:
                proc.wait(timeout=2.0)
            except subprocess.TimeoutExpired:
                pass
        self._ended(run, proc, end, lines)

    def _snapshots(self, run: Run, lines: JsonLines) -> dict | None:
        """Read the worker's snapshots into ``run`` until its end line (returned; None if it died)."""
        for item in lines:
            if "end" in item:
                return item
            snap = self.snap(item)
            run.snaps.append(snap)
            if run.pause_at_next and snap.status == "running":
                run.pause_at_next = False
                self.pause(run)
        return None

    def _ended(self, run: Run, proc: subprocess.Popen, end: dict | None, lines: JsonLines) -> None:
        if end is not None and end["end"] == "ok" and run.state in ("running", "paused", "queued"):
            self.workers.give(proc)  # the worker goes back to wait for the next run
            run.state = run.snaps[-1].status if run.snaps else "failed"
        elif run.state in ("running", "paused", "queued"):
            ended = f"the worker ended (exit status {proc.returncode})"
            if proc.returncode is not None and proc.returncode < 0:
                ended = f"the worker was killed by signal {-proc.returncode}"
            run.state, run.message = "failed", (end or {}).get("message") or lines.last_other or ended
            run.error = (end or {}).get("code"), (end or {}).get("params") or {}

    def _watch(self, run: Run) -> None:
        """Stop a run whose sessions have all gone."""
        while run.proc is not None and run.active:
            if run.abandoned():
                self.stop(run)
                return
            time.sleep(1.0)


RUNS = Runs()
