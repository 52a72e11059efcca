"""A Lab worker dies with its server, whatever state it is in (paused included), and the server
ends its children at exit (killed, not only asked). The server here is a small process started by
the test (so the test is not the worker's parent): it starts a run, pauses it, reports the worker's
pid, and is then ended three ways."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
import time

import psutil
import pytest
from procs import gone, wait_gone

from explorer.jobs import children

ROOT = children.ROOT

SERVER = r"""
import json, sys, time
from attn_core import lab
from explorer.lab.runs import RUNS

run = RUNS.start(lab.LabConfig(task="sort", steps=5000, every=5, seed=77), "s")
deadline = time.time() + 300
while not run.snaps:
    assert time.time() < deadline, (run.state, run.message)
    RUNS.get(run.cfg, "s")
    time.sleep(0.1)
RUNS.pause(run)
print(json.dumps({"worker": run.proc.pid, "state": run.state}), flush=True)
if sys.stdin.readline().strip() == "exit":
    sys.exit(0)
time.sleep(1000)
"""


def read_line(proc: subprocess.Popen, timeout: float) -> str:
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, "the server printed nothing"
    return proc.stdout.readline()


@pytest.mark.parametrize("end", ["exit", "SIGTERM", "SIGKILL"])
def test_a_paused_worker_dies_with_its_server(end):
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=ROOT),
    )
    worker, held = None, []
    try:
        said = json.loads(read_line(server, 300))
        assert said["state"] == "paused"
        worker = said["worker"]
        parent = psutil.Process(psutil.Process(worker).ppid())  # the server, or its fork server (explorer.jobs.forked)
        assert server.pid in (parent.pid, parent.ppid())  # the server's, not the test's
        held = [parent.pid] if parent.pid != server.pid else []
        if end == "exit":
            server.stdin.write("exit\n")
            server.stdin.flush()
        else:
            server.send_signal(getattr(signal, end))
        server.wait(60)
        assert wait_gone(worker), f"the paused worker outlived its server ({psutil.Process(worker).status()})"
        assert all(wait_gone(pid) for pid in held), "the fork server outlived its server"
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        for pid in [worker, *held]:  # a failing run leaves nothing behind
            if pid is not None and not gone(pid):
                os.kill(pid, signal.SIGCONT)
                os.kill(pid, signal.SIGKILL)


def test_a_paused_worker_stays_runnable_and_holds_its_run():
    """Pause stops the training, not the process: a stopped process could not notice its server's end."""
    from attn_core import lab
    from explorer.lab.runs import RUNS

    run = RUNS.start(lab.LabConfig(task="sort", steps=5000, every=5, seed=78), "s")
    try:
        deadline = time.time() + 300
        while not run.snaps:
            assert time.time() < deadline, (run.state, run.message)
            RUNS.get(run.cfg, "s")
            time.sleep(0.1)
        RUNS.pause(run)
        pid = run.proc.pid
        count, same = len(run.snaps), 0
        while same < 6:  # settled: lines written before the pause may still be read
            time.sleep(0.5)
            RUNS.get(run.cfg, "s")
            same = same + 1 if len(run.snaps) == count else 0
            count = len(run.snaps)
            assert psutil.Process(pid).status() != psutil.STATUS_STOPPED
        assert run.state == "paused" and run.proc is not None and run.proc.pid == pid
        RUNS.resume(run)
        deadline = time.time() + 300
        while len(run.snaps) <= count:
            assert time.time() < deadline, "Play did not resume the run"
            RUNS.get(run.cfg, "s")
            time.sleep(0.1)
    finally:
        RUNS.stop(run)


def test_the_server_kills_children_that_ignore_a_polite_end(monkeypatch):
    monkeypatch.setattr(children, "_CLOSED", threading.Event())  # this process goes on after its "end"
    stubborn = (
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); "
        "time.sleep(1000)"
    )
    proc = children.spawn([sys.executable, "-c", stubborn])
    try:
        assert read_line(proc, 60).strip() == "ready"
        children.end_children(grace=1.0)
        assert wait_gone(proc.pid, 30)
        with pytest.raises(OSError):  # and nothing starts after the end: it would outlive it
            children.spawn([sys.executable, "-c", "pass"])
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def test_a_worker_outlives_the_thread_that_started_it():
    """The parent-death signal follows the thread that started a child: the job threads come and go,
    the reused workers must not go with them."""
    box = []
    code = (
        "import sys; from attn_core import command; command.die_with_parent(); print('ready', flush=True); "
        "sys.stdin.read()"
    )
    starter = threading.Thread(target=lambda: box.append(children.spawn([sys.executable, "-c", code], stdin=True)))
    starter.start()
    starter.join()
    proc = box[0]
    try:
        assert read_line(proc, 60).strip() == "ready"
        time.sleep(1.0)
        assert proc.poll() is None
    finally:
        proc.stdin.close()
        proc.wait(30)
