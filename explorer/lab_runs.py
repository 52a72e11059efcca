"""The Lab's training runs, outside the server process, bounded and shared.

A run trains in a worker process (``python -m attn_core train --serve``) at the lowest CPU
priority: in the server, the training loop would hold the GIL between its small tensor
operations and every student's rerun would wait. Workers are kept and reused: importing torch
anew for every run cost ~2 s, more than a preset takes to train. Identical runs (the same settings and seed) are one run, shared by
every session that asks; at most ``SLOTS`` train at once and the rest wait in a queue, their
position shown. Pause suspends the child (SIGSTOP) and gives its slot back, so paused runs never
starve the class; Play re-queues it for a slot and resumes it there; Step lets it reach its next
snapshot. A run that no session has looked at for ``ORPHAN_S`` seconds (its sessions ended) is
stopped. A run's peak memory is estimated before it starts (``lab.check_memory``): settings over
``lab.MAX_BYTES`` are refused with the estimate and what to reduce. Snapshots are kept as small
float tensors in this module (never in session state); finished runs are kept up to ``KEEP`` runs
and ``KEEP_BYTES`` of snapshots, the oldest dropped first.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

import torch

from attn_core.lab import LabConfig, check_memory, validate

from .sweeps import ROOT, JsonLines, _lowest_priority

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

    @property
    def nbytes(self) -> int:
        return sum(w.numel() * w.element_size() for w in self.weights) + 200  # the numbers and the object


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


class Runs:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.runs: OrderedDict[LabConfig, Run] = OrderedDict()
        self.queue: list[Run] = []
        self.slots = threading.Semaphore(SLOTS)
        self.idle: list[tuple[subprocess.Popen, float]] = []  # workers waiting for a run, since when
        self.reaper: threading.Thread | None = None

    def _reap(self) -> None:
        """End the workers that have waited for a run longer than IDLE_S; stop when none is left."""
        while True:
            time.sleep(min(IDLE_S / 4, 10.0))
            with self.lock:
                old = [(p, t) for p, t in self.idle if time.time() - t > IDLE_S]
                self.idle = [(p, t) for p, t in self.idle if (p, t) not in old]
                if not self.idle:
                    self.reaper = None
            for proc, _ in old:
                proc.terminate()
            if self.reaper is None:
                return

    def _worker(self) -> subprocess.Popen:
        with self.lock:
            while self.idle:
                proc, _ = self.idle.pop()
                if proc.poll() is None:
                    return proc
        return subprocess.Popen(
            _lowest_priority(WORKER),
            cwd=ROOT,
            env=dict(os.environ, PYTHONUNBUFFERED="1"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    def get(self, cfg: LabConfig, session: str = "") -> Run | None:
        """The run for these settings, if any (``session`` is marked as watching it)."""
        with self.lock:
            run = self.runs.get(validate(cfg))
            if run is not None:
                run.watchers[session] = time.time()
        return run

    def start(self, cfg: LabConfig, session: str = "") -> Run:
        """The run for these settings: the running, queued, paused or finished one, else a new one.
        Settings estimated over ``lab.MAX_BYTES`` raise an AttentionConfigError (nothing starts)."""
        cfg = validate(cfg)
        check_memory(cfg)
        with self.lock:
            run = self.runs.get(cfg)
            if run is not None and run.state not in ("stopped", "failed"):
                run.watchers[session] = time.time()
                return run
            run = Run(cfg, watchers={session: time.time()})
            self.runs[cfg] = run
            self._forget_old()
            self.queue.append(run)
        threading.Thread(target=self._run, args=(run,), name="lab-run", daemon=True).start()
        return run

    def position(self, run: Run) -> int:
        """How many runs wait before this one (0: it is not waiting)."""
        with self.lock:
            return self.queue.index(run) + 1 if run in self.queue else 0

    def pause(self, run: Run) -> None:
        """Suspend a running run and give its slot back (another run may train meanwhile)."""
        with self.lock:
            if run.state != "running" or run.proc is None:
                return
            run.proc.send_signal(signal.SIGSTOP)
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
        while not self.slots.acquire(timeout=0.5):
            if run.state != "queued" or run.abandoned():
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
            run.proc.send_signal(signal.SIGCONT)

    def step(self, run: Run) -> None:
        """Run to the next snapshot, then pause."""
        run.pause_at_next = True
        self.resume(run)

    def stop(self, run: Run) -> None:
        """Stop a run: its worker is ended (a new one starts for the next run)."""
        with self.lock:
            if run in self.queue:
                self.queue.remove(run)
            if run.active:
                run.state = "stopped"
            proc = run.proc
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGCONT)  # a paused worker must wake to end
            proc.terminate()

    def leave(self, run: Run, session: str) -> None:
        """``session`` no longer watches ``run``; the last one to leave stops it."""
        with self.lock:
            run.watchers.pop(session, None)
            last = not run.watchers
        if last and run.active:
            self.stop(run)

    def _forget_old(self) -> None:
        """Drop the oldest finished runs beyond ``KEEP`` runs or ``KEEP_BYTES`` of snapshots."""
        finished = [(c, r.nbytes) for c, r in self.runs.items() if not r.active]
        total = sum(b for _, b in finished)
        for i, (cfg, nbytes) in enumerate(finished):
            if len(finished) - i <= KEEP and total <= KEEP_BYTES:
                break
            del self.runs[cfg]
            total -= nbytes

    def kept_bytes(self) -> int:
        with self.lock:
            return sum(r.nbytes for r in self.runs.values() if not r.active)

    def _run(self, run: Run) -> None:
        while not self.slots.acquire(timeout=0.5):  # wait for a slot, unless the run was stopped or abandoned
            if run.state != "queued" or run.abandoned():
                self.stop(run)
                return
        with self.lock:
            if run.state != "queued":
                self.slots.release()
                return
            self.queue.remove(run)
            run.state = "running"
            run.holds_slot = True
        try:
            self._train(run)
        finally:
            with self.lock:
                give = run.holds_slot
                run.holds_slot = False
                self._forget_old()
            if give:
                self.slots.release()

    def _train(self, run: Run) -> None:
        try:
            proc = self._worker()
            proc.stdin.write(json.dumps(run.cfg.to_dict()) + "\n")
            proc.stdin.flush()
        except OSError as err:
            run.state, run.message = "failed", str(err)
            return
        run.proc = proc
        threading.Thread(target=self._watch, args=(run,), daemon=True).start()
        end, lines = None, JsonLines(proc.stdout)
        for item in lines:
            if "end" in item:
                end = item
                break
            weights = [torch.tensor(w, dtype=torch.float32) for w in item.pop("weights")]
            run.snaps.append(Snap(weights=weights, **item))
            if run.pause_at_next and item["status"] == "running":
                run.pause_at_next = False
                self.pause(run)
        run.proc = None
        with self.lock:
            if run in self.queue:  # it ended (buffered lines) while it waited to resume
                self.queue.remove(run)
        if end is None and proc.poll() is None:
            try:
                proc.wait(timeout=2.0)
            except subprocess.TimeoutExpired:
                pass
        if end is not None and end["end"] == "ok" and run.state in ("running", "paused", "queued"):
            with self.lock:
                self.idle.append((proc, time.time()))  # the worker goes back to wait for the next run
                if self.reaper is None:
                    self.reaper = threading.Thread(target=self._reap, name="lab-reaper", daemon=True)
                    self.reaper.start()
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
