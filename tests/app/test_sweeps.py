"""The Complexity page's sweeps run in a child process at the lowest priority, one at a time,
shared between sessions, and can be stopped."""

import os
import time

import psutil
from procs import gone, group_nice

from attn_core import bench
from explorer.jobs import sweeps


def tiny(*lengths: int, kernels=("full", "linear_elu")) -> bench.SweepConfig:
    return bench.SweepConfig(
        kernels=kernels, lengths=lengths, min_run_time=0.01, shape=bench.Shape(batch=1, heads=2, d_head=16, window=4)
    )


def wait(job: sweeps.Job, timeout: float = 120) -> None:
    deadline = time.time() + timeout
    while job.active and time.time() < deadline:
        time.sleep(0.05)
    assert not job.active, job.state


def test_a_sweep_runs_in_a_low_priority_child_and_gives_the_engines_rows():
    runner = sweeps.Runner()
    job = runner.submit(tiny(32, 64))
    seen = None
    deadline = time.time() + 60
    # catch the child while it runs, until its priority reads 19: a child started afresh under `nice -n 19` is read
    # at 0 between its start and nice's setting of it (once in a whole run on a busy machine)
    while (seen is None or seen[1] != 19) and job.active and time.time() < deadline:
        proc = job.proc
        if proc is not None:
            try:
                seen = (proc.pid, psutil.Process(proc.pid).nice())
            except psutil.Error:
                pass
        time.sleep(0.01)
    wait(job)
    assert seen is not None and seen[0] != os.getpid() and seen[1] == 19
    assert job.state == "done"
    assert [(r.kernel, r.seq_len) for r in job.rows] == [
        ("full", 32),
        ("full", 64),
        ("linear_elu", 32),
        ("linear_elu", 64),
    ]
    assert all(r.median_ms > 0 and r.runs >= 5 and r.status.startswith("ok") for r in job.rows)
    assert job.matmul_gflops and job.matmul_gflops > 0


def test_identical_sweeps_are_shared_and_others_queue_one_at_a_time():
    runner = sweeps.Runner()
    first = runner.submit(tiny(32, 64, 128))
    again = runner.submit(tiny(32, 64, 128))  # another session, the same settings
    other = runner.submit(tiny(16))
    assert again is first
    assert other.state == "queued" and runner.position(other) == 1
    overlap = False
    deadline = time.time() + 120
    while first.active:
        assert time.time() < deadline, f"the first sweep never ended ({first.state})"
        overlap |= other.state == "running"
        time.sleep(0.01)
    wait(other)
    assert not overlap and first.state == other.state == "done"
    assert other.started >= first.ended
    assert runner.submit(tiny(32, 64, 128)) is first  # a finished sweep is served again


def test_a_sweep_can_be_stopped_and_keeps_its_rows():
    runner = sweeps.Runner()
    job = runner.submit(tiny(32, 64, 128, 256, 512, kernels=("full", "sdpa", "linear_elu", "performer")))
    deadline = time.time() + 120
    while not job.rows:
        assert time.time() < deadline and job.active, f"no row came ({job.state}: {job.message})"
        time.sleep(0.01)
    runner.stop(job)
    wait(job, 30)
    assert job.state == "stopped" and 0 < len(job.rows) < job.total
    assert runner.submit(job.cfg) is not job  # a stopped sweep can be run again


def test_a_queued_sweep_can_be_stopped_before_it_starts():
    runner = sweeps.Runner()
    first = runner.submit(tiny(32, 64))
    queued = runner.submit(tiny(16))
    runner.stop(queued)
    assert queued.state == "stopped" and runner.position(queued) == 0
    wait(first)
    assert queued.rows == [] and queued.started is None


def test_a_failing_chatty_child_never_blocks_and_its_last_line_is_the_message(monkeypatch):
    """200 KB on stderr (more than a pipe holds) before failing: the sweep ends, failed, with its last line."""
    import sys

    script = (
        "import sys; sys.stderr.write('warning: noise\\n' * 15000); sys.stderr.flush(); "
        "print('Traceback: something broke', file=sys.stderr); sys.exit(3)"
    )
    monkeypatch.setattr(sweeps, "command", lambda cfg: [sys.executable, "-c", script])
    runner = sweeps.Runner()
    job = runner.submit(tiny(32))
    wait(job, 60)
    assert job.state == "failed" and job.message == "Traceback: something broke" and job.rows == []


def test_the_complexity_page_says_a_sweep_failed_and_why(monkeypatch):
    import os
    import sys

    from streamlit.testing.v1 import AppTest

    script = "import sys; print('error: the child gave up', file=sys.stderr); sys.exit(2)"
    monkeypatch.setattr(sweeps, "command", lambda cfg: [sys.executable, "-c", script])
    monkeypatch.setattr(sweeps, "RUNNER", sweeps.Runner())
    app = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "app.py")
    at = AppTest.from_file(app, default_timeout=120)
    at.run()
    at.switch_page("pages/6_complexity.py").run()
    at.button(key="cx_run").click().run()
    wait(next(iter(sweeps.RUNNER.jobs.values())), 60)
    at.run()
    assert not at.exception
    assert any("the child gave up" in e.value for e in at.error)


def test_a_childs_lines_that_are_not_json_objects_are_kept_as_its_last_words():
    import io

    from explorer.jobs.children import JsonLines

    lines = JsonLines(io.StringIO('{"row": 1}\nwarning: slow\n3\n{"end": "ok"}\n\n[1, 2]\n'))
    assert list(lines) == [{"row": 1}, {"end": "ok"}]  # a bare number or list is no result
    assert lines.last_other == "[1, 2]"


SERVER = r"""
import json, time
from attn_core import bench
from explorer.jobs import children, forked, sweeps

shape = bench.Shape(batch=1, heads=2, d_head=16)
seen = {}
for how in ("forked", "afresh"):
    if how == "afresh":  # as when the fork server cannot serve it: a child started afresh
        children._FORKS.start = lambda *args, **kw: None
    cfg = bench.SweepConfig(kernels=("full",), lengths=(32, 64), min_run_time=60, shape=shape)
    job = sweeps.Runner().submit(cfg)  # a runner each: both sweeps run at once
    deadline = time.time() + 300
    while job.proc is None:
        assert time.time() < deadline and job.active, (job.state, job.message)
        time.sleep(0.05)
    seen[how] = {"pid": job.proc.pid, "forked": isinstance(job.proc, forked.Forked)}
print(json.dumps(seen), flush=True)
time.sleep(1000)
"""


def test_a_sweeps_child_has_a_session_of_its_own_at_the_lowest_priority_and_dies_with_its_server():
    """Killed, a server ends nothing itself: its sweeps' children, outside the server's session, end with it whether
    forked (through their fork server) or started afresh (their own parent-death signal)."""
    import json
    import signal
    import subprocess
    import sys

    from explorer.jobs import children

    server = subprocess.Popen([sys.executable, "-c", SERVER], cwd=children.ROOT, stdout=subprocess.PIPE, text=True)
    kids = {}
    try:
        kids = json.loads(server.stdout.readline())
        for how, child in kids.items():
            assert child["forked"] is (how == "forked"), how
            pid = child["pid"]
            deadline = time.time() + 30  # a forked child is reported at its fork, before it has left the fork server's
            while (os.getsid(pid), group_nice(pid)) not in ((pid, None), (pid, 19)) and time.time() < deadline:
                time.sleep(0.05)  # session for one of its own at the lowest weight
            assert os.getsid(pid) == pid != os.getsid(server.pid), how  # a session of its own
            assert psutil.Process(pid).nice() == 19, how
            assert group_nice(pid) in (None, 19), how  # with autogroup, its group at the lowest weight
        server.kill()
        server.wait(60)
        # a parent-death signal ends a child at once; 20 s is well before its first row (each point is timed for 60 s),
        # whose write to the closed pipe would end it anyway
        deadline = time.time() + 20
        while not all(gone(c["pid"]) for c in kids.values()) and time.time() < deadline:
            time.sleep(0.1)
        left = [how for how, c in kids.items() if not gone(c["pid"])]
        assert not left, f"the sweeps' children outlived their server: {left}"
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        for child in kids.values():
            if not gone(child["pid"]):
                os.kill(child["pid"], signal.SIGKILL)
