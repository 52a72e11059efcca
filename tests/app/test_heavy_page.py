"""A page whose heavy work is a background job, under AppTest, with the worker replaced by one the test holds back:
the Real model's "Why this weight?" (jobs why_weight and atlas).

The gated worker is the real one (``python -m attn_core.heavy``) that waits, before it reads its first request,
until the test creates a file (``tests/gated_heavy.py``); so the page is seen while its job is certainly still
computing, without timing.
"""

from __future__ import annotations

import sys
import time

import pytest
from background import until_done
from streamlit.testing.v1 import AppTest

from explorer.jobs import heavy, waiting
from explorer.model import real

PAGE = "pages/7_model.py"
QUERY = {"sentence": "Otters hold hands while they sleep", "rm_why": "1", "rm_layer": "1", "rm_head": "2"}
QUERY["rm_query"] = "2"
GATED = [sys.executable, "-m", "tests.gated_heavy"]  # the real worker, held back until a file exists
DIES = "import sys; sys.stdin.readline(); sys.exit(3)\n"  # reads the request, then dies without an answer


@pytest.fixture
def jobs(monkeypatch, tmp_path):
    """A fresh job table whose workers are gated: returns the gate's path (create it to let them go)."""
    gate = tmp_path / "go"
    fresh = heavy.Heavy()
    monkeypatch.setattr(heavy, "HEAVY", fresh)
    monkeypatch.setattr(waiting, "HEAVY", fresh)
    monkeypatch.setattr(heavy, "WORKER", [*GATED, str(gate)])
    real.wait_for(real.pt.BUNDLED, timeout=300)
    yield fresh, gate
    gate.touch()
    procs = [p for p, _ in fresh.workers.waiting] + [j.proc for j in fresh.jobs.values() if j.proc is not None]
    for proc in procs:  # this table's workers end with the test
        proc.kill()


def page(query: dict | None = None) -> AppTest:
    at = AppTest.from_file("../../app.py", default_timeout=120)
    for k, v in (query or QUERY).items():
        at.query_params[k] = v
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def let_idle_go(table) -> None:
    """End the workers waiting idle in ``table`` once its warm-up thread, if any, has finished starting them."""
    deadline = time.monotonic() + 120
    while table.warming and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not table.warming, "the warm-up never finished"
    while (proc := table.workers.take()) is not None:
        proc.kill()


def why_jobs(table) -> list:
    return [j for j in list(table.jobs.values()) if j.kind == "why_weight"]


def test_the_page_returns_while_its_job_computes_and_others_do_not_wait(jobs):
    table, gate = jobs
    at = page()
    (job,) = why_jobs(table)
    assert job.active and at.get("progress")  # drawn, with "Computing…", before the job could end
    assert "Computing" in at.get("progress")[0].proto.text
    other = AppTest.from_file("../../app.py", default_timeout=120)
    other.run()
    other.switch_page("pages/1_steps.py").run()  # another session's pages: drawn while the job is held
    assert not other.exception and other.get("plotly_chart") and job.active
    gate.touch()
    at = until_done(at)
    assert job.done and any(m.label == "the model's weight" for m in at.metric)


def test_two_sessions_asking_the_same_share_one_job_and_one_leaving_keeps_it(jobs, monkeypatch):
    table, gate = jobs
    who = {"id": "a"}  # AppTest gives every session one id: the test names them
    monkeypatch.setattr(waiting, "session_id", lambda: who["id"])
    a = page()
    who["id"] = "b"
    b = page()
    (job,) = why_jobs(table)  # one job for both sessions
    assert len(job.watchers) == 2
    who["id"] = "a"
    a.selectbox(key="rm_key").set_value(3).run()  # A asks for another weight: it leaves the first job
    assert len(why_jobs(table)) == 2 and job.state != "stopped" and len(job.watchers) == 1
    gate.touch()
    who["id"] = "b"
    b = until_done(b)
    assert job.done and any(m.label == "the model's weight" for m in b.metric)


DIED = [("en", "could not be computed", "Try again"), ("zh", "没能算出", "重试")]


@pytest.mark.parametrize("lang,said,button", DIED)
def test_a_dead_worker_is_said_in_the_ui_language_and_try_again_computes_it(jobs, monkeypatch, lang, said, button):
    table, gate = jobs
    gate.touch()
    monkeypatch.setattr(heavy, "WORKER", [sys.executable, "-c", DIES])
    at = page(QUERY | {"lang": lang})
    deadline = time.monotonic() + 120
    while any(j.active for j in list(table.jobs.values())) and time.monotonic() < deadline:
        time.sleep(0.1)  # every job the page asked for (the atlas too) has met its dying worker
    (job,) = why_jobs(table)
    assert job.state == "failed" and job.error[0] is None
    at = page(
        QUERY | {"lang": lang}
    )  # drawn afresh (AppTest reruns a page with translated radio labels in English only)
    assert any(said in e.value for e in at.error), [e.value for e in at.error]
    retry = [b for b in at.button if b.label == button]
    assert retry and not at.exception
    if lang != "en":
        return
    monkeypatch.setattr(heavy, "WORKER", [sys.executable, "-m", "attn_core.heavy"])  # a worker that lives
    let_idle_go(table)  # the dying ones the page's warm-up started ahead would take the retried job
    retry[0].click().run()
    at = until_done(at)
    assert any(m.label == "the model's weight" for m in at.metric) and not at.error, [e.value for e in at.error]
    assert len(why_jobs(table)) == 1 and why_jobs(table)[0] is not job  # computed anew
