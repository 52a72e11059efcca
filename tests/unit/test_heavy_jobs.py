"""The Explain and Inside pages' slow parts as shared background jobs (``explorer.jobs.heavy``, worker
``attn_core.heavy``): identical requests are one job, the parts arrive in stages, and what arrives
equals the engine's direct, in-process computation."""

import io
import json
import threading
import time

import numpy as np
import pytest

from attn_core import heavy as worker
from attn_core import models as pt
from attn_core.explain import explain as X
from attn_core.explain import staged
from attn_core.interpret import ablate, patch
from explorer.jobs import heavy

pytestmark = pytest.mark.usefixtures("one_thread")  # as the workers compute (tests/conftest.py)

SENTENCE = "The animal didn't cross the street because it was too tired"


@pytest.fixture(scope="module")
def pre():
    return pt.load()


def close(a, b, path="") -> None:
    """Equal structures; floats within rtol 1e-5 (atol 1e-7 near zero)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), (path, set(a) ^ set(b) if isinstance(b, dict) else b)
        for k in a:
            close(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            close(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and not isinstance(a, bool):
        assert isinstance(b, (int, float)), path
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-7, err_msg=path)
    else:
        assert a == b, (path, a, b)


def wait(job, timeout=240.0):
    deadline = time.monotonic() + timeout
    while job.active and time.monotonic() < deadline:
        time.sleep(0.05)
    assert job.done, (job.state, job.message)
    return job


@pytest.mark.parametrize("removal", ["attention", "delete"])
def test_the_stages_merged_are_explain(pre, removal):
    direct = X.explain(pre, SENTENCE, removal=removal, shapley=False, layers=True)
    close(worker.plain(direct), worker.plain(staged.merged(pre, SENTENCE, removal)))
    first = staged.cheap(pre, SENTENCE, removal)  # the part drawn at once is the same numbers
    for k in ("raw", "rollout", "norm"):
        close(worker.plain(direct["layers"][k]), first["layers"][k], k)
    assert first["tokens"] == direct["tokens"]


def test_the_two_halves_joined_are_explain_in_its_order(pre):
    """The references in one worker, the methods read from attention in another, the last parts joined:
    the same dict as explain, keys in the same order (the page lists the methods as the dicts give them)."""
    direct = worker.plain(X.explain(pre, SENTENCE, removal="delete", shapley=False, layers=True, steps=16))
    split = worker.plain(staged.merged_split(pre, SENTENCE, "delete", steps=16))
    close(direct, split)
    for key in staged.NESTED:
        assert list(split[key]) == list(direct[key]), key
    att = list(staged.stages(pre, SENTENCE, "delete", 16, part="attention"))
    assert set(att[-1][1]["curves"]) == set(X.METHODS) and all(not part for _, part in att[:-1])
    refs = list(staged.stages(pre, SENTENCE, "delete", 16, part="references"))
    assert set(refs[-1][1]["curves"]) == {"loo", "ig"} and "ig" not in att[-1][1]["curves"]
    assert all("flow" not in part.get("layers", {}) for _, part in refs)


def test_an_explain_job_on_an_idle_server_uses_both_workers(pre):
    jobs = heavy.Heavy()
    jobs.warm().join()  # two workers wait: the job takes both slots
    assert len(jobs.workers.waiting) == heavy.SLOTS == 2
    job = wait(jobs.ask("explain", {"sentence": SENTENCE, "removal": "attention", "steps": 16}, "me"))
    assert job.split and jobs.spawned == 2
    close(worker.plain(X.explain(pre, SENTENCE, shapley=False, layers=True, steps=16)), job.result)
    assert list(job.result["methods"]) == list(X.METHODS)
    assert len(jobs.workers.waiting) == 2 and jobs.slots.acquire(blocking=False) and jobs.slots.acquire(blocking=False)
    jobs.slots.release()
    jobs.slots.release()
    bad = wait_failed(jobs.ask("explain", {"sentence": "!!!", "removal": "attention", "steps": 16}, "me"))
    assert bad.split and bad.error[0] is not None  # a refusal keeps its code, and both workers are kept
    assert len(jobs.workers.waiting) == 2 and jobs.spawned == 2


def wait_failed(job, timeout=240.0):
    deadline = time.monotonic() + timeout
    while job.active and time.monotonic() < deadline:
        time.sleep(0.05)
    assert job.state == "failed", (job.state, job.message)
    return job


def test_the_worker_streams_parts_and_can_be_cancelled(pre):
    requests = [
        {"kind": "explain", "args": {"sentence": SENTENCE, "removal": "mask", "steps": 8}, "id": 1},
        {"kind": "patching", "args": {"clean": SENTENCE, "corrupted": SENTENCE.replace("tired", "wide")}, "id": 2},
        {"kind": "explain", "args": {"sentence": "!!!", "removal": "mask", "steps": 8}, "id": 3},
        {"kind": "nothing", "args": {}, "id": 4},
    ]
    out = io.StringIO()
    worker.serve(io.StringIO("".join(json.dumps(r) + "\n" for r in requests)), out, load=lambda: pre)
    lines = [json.loads(x) for x in out.getvalue().splitlines()]
    ends = [x for x in lines if "end" in x]
    assert [e["end"] for e in ends] == ["ok", "ok", "error", "error"]
    assert ends[2]["code"] == "no_word_pieces" or ends[2]["code"]  # an engine error keeps its code for the UI
    first = lines[: lines.index(ends[0])]
    assert len(first) >= 5 and [x["progress"] for x in first] == sorted(x["progress"] for x in first)
    merged = {}
    for x in first:
        merged.update(x["part"])
    close(worker.plain(X.explain(pre, SENTENCE, removal="mask", shapley=False, layers=True, steps=8)), merged)
    restored = lines[lines.index(ends[0]) + 1]["part"]["restored"]
    np.testing.assert_allclose(
        restored, patch.patch_map(pre, SENTENCE, SENTENCE.replace("tired", "wide"))["restored"], rtol=1e-5, atol=1e-7
    )
    # a cancel for the running request stops it between two parts; a late one for another id is ignored
    out = io.StringIO()
    inp = "".join(
        json.dumps(r) + "\n"
        for r in (requests[0], {"cancel": True, "id": 1}, {"cancel": True, "id": 99}, {**requests[1], "id": 5})
    )
    worker.serve(io.StringIO(inp), out, load=lambda: pre)
    ends = [json.loads(x)["end"] for x in out.getvalue().splitlines() if "end" in json.loads(x)]
    assert ends == ["cancelled", "ok"]


def test_identical_requests_are_one_job_and_equal_the_direct_computation(pre):
    jobs = heavy.Heavy()
    args = {"sentence": SENTENCE, "mode": "zero", "masked": [], "second": None}
    a = jobs.ask("importance", args, "session-a")
    b = jobs.ask("importance", dict(reversed(args.items())), "session-b")  # the same request, keys in another order
    assert a is b and a.watchers == {"session-a", "session-b"}
    wait(a)
    assert jobs.ask("importance", args, "session-c") is a  # a finished job is kept and shared
    assert jobs.spawned == 1
    np.testing.assert_allclose(
        a.result["importance"], ablate.importance(pre, SENTENCE)["importance"], rtol=1e-5, atol=1e-7
    )
    ex = wait(jobs.ask("explain", {"sentence": SENTENCE, "removal": "attention", "steps": 16}, "session-a"))
    close(worker.plain(X.explain(pre, SENTENCE, shapley=False, layers=True, steps=16)), ex.result)
    assert jobs.spawned == 1  # the worker served both


def test_a_job_nobody_waits_for_is_cancelled_and_the_worker_kept(pre):
    jobs = heavy.Heavy()
    job = jobs.ask("explain", {"sentence": SENTENCE + " again", "removal": "delete", "steps": 64}, "me")
    deadline = time.monotonic() + 120
    while job.parts == 0 and time.monotonic() < deadline:  # running in its worker
        time.sleep(0.02)
    other = jobs.ask("explain", {"sentence": SENTENCE + " again", "removal": "delete", "steps": 64}, "you")
    assert other is job
    jobs.leave(job, "me")
    assert job.state == "running"  # someone else still waits for it
    jobs.leave(job, "you")
    assert job.state == "stopped"
    while job.proc is not None and time.monotonic() < deadline:  # it stops between two parts
        time.sleep(0.02)
    assert job.proc is None and job.state == "stopped" and len(jobs.workers.waiting) == 1
    nxt = wait(jobs.ask("patching", {"clean": SENTENCE, "corrupted": SENTENCE.replace("tired", "wide")}, "me"))
    assert "restored" in nxt.result and jobs.spawned == 1  # the cancelled job's worker served the next one


def test_a_refused_request_is_one_failed_job_and_its_worker_serves_the_next(pre):
    """A page polls: a request the engine refuses must not start a new job (and a new worker) on every
    poll; the refusal keeps its code for the message in the UI's language."""
    jobs = heavy.Heavy()
    bad = {"clean": SENTENCE, "corrupted": "A much shorter one"}
    job = jobs.ask("patching", bad, "me")
    deadline = time.monotonic() + 240
    while job.active and time.monotonic() < deadline:
        time.sleep(0.05)
    assert job.state == "failed" and job.error[0] == "patch_length"
    assert jobs.ask("patching", bad, "me") is job  # asked again: the same answer, nothing new started
    while not jobs.workers.waiting and time.monotonic() < deadline:
        time.sleep(0.02)
    good = wait(jobs.ask("patching", {"clean": SENTENCE, "corrupted": SENTENCE.replace("tired", "wide")}, "me"))
    assert "restored" in good.result and jobs.spawned == 1


def test_a_page_looks_at_a_queued_job_less_often_than_at_one_that_computes(monkeypatch):
    """A class typing 30 sentences at once had 30 pages polling 4 times a second (explain_burst_cpu.txt); a queued
    job's page now looks once a second, and still sees its job start within a second."""
    from explorer.jobs import waiting

    drawn = []
    pollers = {every: lambda job, seen, every=every: drawn.append((job.state, every)) for every in waiting.POLLERS}
    monkeypatch.setattr(waiting, "POLLERS", pollers)
    for state in ("queued", "running"):
        assert waiting.status(heavy.Job("explain", {"sentence": "x"}, state=state)) is False
    assert drawn == [("queued", waiting.QUEUED_POLL_S), ("running", waiting.POLL_S)]
    assert waiting.POLL_S < waiting.QUEUED_POLL_S <= 1.0


class _Waiting:
    """A stand-in for a worker that waits to be used (``Idle`` asks only whether it lives)."""

    def poll(self):
        return None

    def terminate(self):
        pass


def test_warming_never_holds_the_pages_thread(monkeypatch):
    """A page asks for warm workers on its rerun; the first start waits for the fork server's imports
    (seconds): the rerun must not wait with it."""
    jobs = heavy.Heavy()
    gate, started = threading.Event(), []

    def start():
        assert gate.wait(60)
        started.append(1)
        return _Waiting()

    monkeypatch.setattr(jobs, "_spawn", start)
    thread = jobs.warm()
    assert thread is not None and thread.is_alive() and not started  # back while the start waits
    assert jobs.warm() is None  # one warming at a time
    gate.set()
    thread.join(60)
    assert len(started) == heavy.SLOTS and len(jobs.workers.waiting) == heavy.SLOTS
    assert jobs.warm().join(60) is None and len(started) == heavy.SLOTS  # enough wait: none more starts
