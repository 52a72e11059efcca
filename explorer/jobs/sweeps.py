"""The Complexity page's sweeps, run outside the server process, one at a time, shared.

A sweep times kernels for a minute or more. Run inside the server it would hold the GIL and
both cores away from every student, and the students' reruns would corrupt its timings. So each
sweep runs as ``python -m attn_core bench --jsonl`` in a child process at the lowest CPU priority, in a
session of its own at the lowest weight as the job workers are (the server's reruns come first; forked from the
fork server, without the seconds of its imports, where it can be), one at a time per server (the rest wait in
a queue, with their position shown), and a finished sweep is shared: every session that asks for the same
configuration gets the same rows. Beside each sweep we record how many other sessions the server
had while it ran, since timings taken under load are not comparable with a quiet machine's.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

from attn_core import bench
from attn_core.bench.sweeping import OWN
from attn_core.knobs import in_context
from explorer.base.runtime import active_sessions
from explorer.jobs.children import JsonLines, spawn
from explorer.jobs.skeleton import Jobs

KEEP = 16  # finished sweeps kept per server (each is a few dozen rows)


@dataclass
class Job:
    cfg: bench.SweepConfig
    state: str = "queued"  # queued, running, done, stopped, failed
    rows: list[bench.Row] = field(default_factory=list)
    matmul_gflops: float | None = None
    sessions_max: int = 0  # other sessions seen while it ran (the server's own count, minus the asker)
    started: float | None = None
    ended: float | None = None
    message: str = ""
    proc: subprocess.Popen | None = None
    holds_slot: bool = False

    @property
    def active(self) -> bool:
        return self.state in ("queued", "running")

    @property
    def total(self) -> int:
        return len(self.cfg.kernels) * len(self.cfg.lengths)


def shape_flags(sh: bench.Shape) -> list[str]:
    """The shape as the bench CLI's flags: its own fields (batch, d_head), then every knob it carries
    (attn_core.knobs: each with a sweep span), the heads and each kernel option, so each kernel in the child gets
    its own (dilation, global tokens and block too, not the window alone); a switch (causal) only when on."""
    out = [arg for name in OWN for arg in ("--" + name.replace("_", "-"), str(getattr(sh, name)))]
    table = in_context("sweep")
    values = {name: getattr(sh, name) for name in table if name in bench.fields_of_shape()} | dict(sh.extra)
    for name, value in values.items():
        knob = table[name]
        if knob.type != "bool":
            out += [knob.cli, str(value)]
        elif value:
            out.append(knob.cli)
    return out


def command(cfg: bench.SweepConfig) -> list[str]:
    return [
        sys.executable,
        "-m",
        "attn_core",
        "bench",
        "--jsonl",
        "--kernels",
        ",".join(cfg.kernels),
        "--lengths",
        ",".join(str(L) for L in cfg.lengths),
        *shape_flags(cfg.shape),
        "--device",
        cfg.device,
        "--dtype",
        cfg.dtype,
        "--min-run-time",
        str(cfg.min_run_time),
    ]


class Runner(Jobs):
    """The server's sweeps: a queue, one child process at a time, in the order they were asked for."""

    def __init__(self) -> None:
        super().__init__(1, "sweeps")

    def keep(self) -> tuple[int, None]:
        return KEEP, None

    def first_in_line(self) -> bool:
        return True

    def submit(self, cfg: bench.SweepConfig) -> Job:
        """The job for this configuration: the running, queued or finished one if there is one."""
        bench.validate_sweep(cfg)
        with self.lock:
            job = self.jobs.get(cfg)
            if job is not None and job.state in ("queued", "running", "done"):
                return job
            job = Job(cfg)
            self.add(cfg, job)
            return job

    def position(self, job: Job) -> int:
        """How many sweeps run before this one (the running one included); 0 when it is not waiting."""
        with self.lock:
            if job not in self.queue:
                return 0
            running = any(j.state == "running" for j in self.jobs.values())
            return self.queue.index(job) + running

    def stopped(self, job: Job) -> None:
        """A queued sweep is stopped at once; a running one when its child has ended (``execute``)."""
        if job.state == "queued":
            job.state, job.ended = "stopped", time.time()

    def on_start(self, job: Job) -> None:
        job.started = time.time()

    def execute(self, job: Job) -> None:
        try:
            proc = spawn(command(job.cfg), own_group=True, fork=True)
        except OSError as err:
            job.state, job.message, job.ended = "failed", str(err), time.time()
            return
        job.proc = proc
        watcher = threading.Thread(target=self._watch_sessions, args=(job,), daemon=True)
        watcher.start()
        lines = JsonLines(proc.stdout)
        for item in lines:
            if "row" in item:
                job.rows.append(bench.Row(**item["row"]))
            elif "matmul_gflops" in item:
                job.matmul_gflops = item["matmul_gflops"]
        code = proc.wait()
        with self.lock:
            job.proc, job.ended = None, time.time()
            if job.state == "stopped" or code < 0:
                job.state = "stopped"
            elif code == 0:
                job.state = "done"
            else:
                job.state, job.message = "failed", lines.last_other or f"exit code {code}"

    def _watch_sessions(self, job: Job) -> None:
        while job.state == "running":
            job.sessions_max = max(job.sessions_max, active_sessions() - 1)
            time.sleep(0.5)


RUNNER = Runner()
