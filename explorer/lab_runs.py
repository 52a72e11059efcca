"""The Lab's training runs, outside the server process, bounded and shared.

A run trains in a worker process (``python -m attn_core train --serve``) at the lowest CPU
priority: in the server, the training loop would hold the GIL between its small tensor
operations and every student's rerun would wait. Workers are kept and reused: importing torch
anew for every run cost ~2 s, more than a preset takes to train. Identical runs (the same settings and seed) are one run, shared by
every session that asks; at most ``SLOTS`` train at once and the rest wait in a queue, their
position shown. Pause suspends the child (SIGSTOP), Play resumes it, Step lets it reach its next
snapshot. A run that no session has looked at for ``ORPHAN_S`` seconds (its sessions ended) is
stopped. Snapshots are kept as small float tensors in this module (never in session state); at
most ``KEEP`` finished runs are kept.
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

from attn_core.lab import LabConfig, validate

from .sweeps import ROOT, JsonLines, _lowest_priority

SLOTS = 2  # trainings at once: one per core of the machine this was measured on
KEEP = 32  # finished runs kept (a run is a few hundred KB at most)
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


@dataclass
class Run:
    cfg: LabConfig  # resolved
    state: str = "queued"  # queued, running, paused, done, diverged, stopped, failed
    snaps: list[Snap] = field(default_factory=list)
    message: str = ""
    proc: subprocess.Popen | None = None
    watchers: dict = field(default_factory=dict)  # session id -> the last time it looked
    pause_at_next: bool = False  # Step: run to the next snapshot, then pause

    @property
    def seen(self) -> float:
        return max(self.watchers.values(), default=0.0)

    def abandoned(self) -> bool:
        return time.time() - self.seen > (PAUSED_S if self.state == "paused" else ORPHAN_S)

    @property
    def active(self) -> bool:
        return self.state in ("queued", "running", "paused")

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
        """The run for these settings: the running, queued, paused or finished one, else a new one."""
        cfg = validate(cfg)
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
        if run.state == "running" and run.proc is not None:
            run.proc.send_signal(signal.SIGSTOP)
            run.state = "paused"

    def resume(self, run: Run) -> None:
        if run.state == "paused" and run.proc is not None:
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
        finished = [c for c, r in self.runs.items() if not r.active]
        for cfg in finished[: max(0, len(finished) - KEEP)]:
            del self.runs[cfg]

    def _run(self, run: Run) -> None:
        while not self.slots.acquire(timeout=0.5):  # wait for a slot, unless the run was stopped or abandoned
            if run.state != "queued" or run.abandoned():
                self.stop(run)
                return
        try:
            with self.lock:
                if run.state != "queued":
                    return
                self.queue.remove(run)
                run.state = "running"
            self._train(run)
        finally:
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
        if end is not None and end["end"] == "ok" and run.state in ("running", "paused"):
            with self.lock:
                self.idle.append((proc, time.time()))  # the worker goes back to wait for the next run
                if self.reaper is None:
                    self.reaper = threading.Thread(target=self._reap, name="lab-reaper", daemon=True)
                    self.reaper.start()
            run.state = run.snaps[-1].status if run.snaps else "failed"
        elif run.state in ("running", "paused"):
            run.state, run.message = "failed", (end or {}).get("message") or lines.last_other or "the worker ended"

    def _watch(self, run: Run) -> None:
        """Stop a run whose sessions have all gone."""
        while run.proc is not None and run.active:
            if run.abandoned():
                self.stop(run)
                return
            time.sleep(1.0)


RUNS = Runs()
