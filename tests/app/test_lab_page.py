"""The Lab page under AppTest, and its runs: shared, bounded, paused, left."""

import json
import time

import pytest
import torch

from attn_core import lab as engine
from explorer.lab_runs import RUNS, SLOTS

PAGE = "pages/8_lab.py"


def charts(at) -> dict:
    out = {}
    for c in at.get("plotly_chart"):
        spec = json.loads(c.proto.spec)
        out[spec["layout"].get("title", {}).get("text", "")] = spec
    return out


def wait_done(at, timeout=120):
    start = time.time()
    while time.time() - start < timeout:
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        text = " ".join(m.value for m in at.markdown)
        if "done" in text or "完成" in text:
            return at
        time.sleep(0.5)
    raise AssertionError("the run did not finish")


@pytest.fixture(autouse=True)
def _stop_all_runs():
    yield
    for run in list(RUNS.runs.values()):
        RUNS.stop(run)


def test_a_short_run_draws_the_engines_curve_and_the_heads(app):
    at = app(PAGE, query={"lab_task": "shift", "lab_steps": "60", "lab_seed": "3"})
    assert not at.exception and any("Press Play" in i.value for i in at.info)
    at.button(key="lab_play").click().run()
    wait_done(at)
    drawn = charts(at)
    cfg = engine.LabConfig(task="shift", steps=60, seed=3, d_model=16, d_k=24, d_v=28, heads=1)
    expect = engine.run(cfg)  # the same settings, computed here: the page shows the engine's numbers
    train_acc, acc = drawn["Accuracy"]["data"][0], drawn["Accuracy"]["data"][1]
    assert all(0.0 <= a <= 1.0 for a in train_acc["y"]) and train_acc["name"] == "train accuracy"
    assert acc["x"] == [p["step"] for p in expect["curve"]]
    assert acc["y"] == pytest.approx([p["val_acc"] for p in expect["curve"]], abs=0.01)
    head = torch.tensor(drawn["layer 0, head 0"]["data"][0]["z"])
    assert torch.allclose(head, torch.tensor(expect["weights"][0][0]), atol=1e-3)
    ideal = torch.tensor(drawn["Ideal pattern (shift by one)"]["data"][0]["z"])
    assert torch.equal(ideal, engine.ideal(cfg))
    assert at.select_slider(key="lab_replay").value == 60  # the scrubber, after the run: one mark per snapshot
    at.select_slider(key="lab_replay").set_value(25).run()
    assert "at step 25" in " ".join(c.value for c in at.caption)


def test_identical_runs_are_one_run_shared_by_sessions_and_different_ones_queue():
    cfgs = [engine.LabConfig(task="sort", steps=5000, seed=s) for s in range(SLOTS + 1)]
    first = RUNS.start(cfgs[0], "student-1")
    assert RUNS.start(cfgs[0], "student-2") is first and set(first.watchers) == {"student-1", "student-2"}
    others = [RUNS.start(c, "student-3") for c in cfgs[1:]]
    time.sleep(1.5)
    assert sum(r.state == "running" for r in [first, *others]) == SLOTS
    waiting = [r for r in others if r.state == "queued"]
    assert len(waiting) == 1 and RUNS.position(waiting[0]) == 1
    RUNS.leave(first, "student-1")
    assert first.state == "running"  # student-2 still watches it
    RUNS.leave(first, "student-2")
    assert first.state == "stopped"  # the last watcher left
    deadline = time.time() + 10
    while waiting[0].state == "queued" and time.time() < deadline:
        time.sleep(0.2)
    assert waiting[0].state == "running"  # the freed slot went to the queue


def paused_count(run, timeout: float = 30.0) -> int:
    """The number of snapshots once a pause has settled: the state reads paused, the child is stopped,
    its pipe is empty and the count has not moved over ten reads in a row (lines already written
    before the pause are still read after it)."""
    import fcntl
    import termios
    from array import array

    import psutil

    deadline, last, same = time.time() + timeout, -1, 0
    while same < 10:
        assert time.time() < deadline, f"the pause never settled (state {run.state}, {len(run.snaps)} snapshots)"
        time.sleep(0.05)
        proc = run.proc
        if run.state != "paused" or proc is None or psutil.Process(proc.pid).status() != psutil.STATUS_STOPPED:
            same = 0
            continue
        waiting = array("i", [0])
        fcntl.ioctl(proc.stdout.fileno(), termios.FIONREAD, waiting)
        count = len(run.snaps)
        same = same + 1 if count == last and waiting[0] == 0 else 0
        last = count
    return last


def test_pause_holds_the_run_and_play_resumes_it():
    run = RUNS.start(engine.LabConfig(task="sort", steps=5000, every=5), "s")
    deadline = time.time() + 30
    while not run.snaps and time.time() < deadline:
        time.sleep(0.2)
    RUNS.pause(run)
    held = paused_count(run)
    time.sleep(1.5)
    assert run.state == "paused" and len(run.snaps) == held
    RUNS.resume(run)
    deadline = time.time() + 30
    while len(run.snaps) == held and time.time() < deadline:
        time.sleep(0.2)
    assert len(run.snaps) > held


def test_bad_lab_links_are_dropped_with_a_notice_and_the_page_still_works(app):
    at = app(PAGE, query={"lab_lr": "nan", "lab_batch": "0", "lab_steps": "1e9", "lab_task": "<b>x</b>"})
    assert not at.exception
    notice = " ".join(w.value for w in at.sidebar.warning).replace("\\", "")
    assert all(name in notice for name in ("lab_lr", "lab_batch", "lab_steps", "lab_task"))
    assert at.number_input(key="lab_lr").value == pytest.approx(3e-3)


def test_a_variant_the_lab_cannot_train_says_which_it_can_in_the_uis_language(app):
    at = app(PAGE, query={"kernel": "performer", "lang": "zh"})
    assert not at.exception
    shown = " ".join(e.value for e in at.error).replace("\\", "")  # as shown: Markdown escapes removed
    assert "实验室可训练的变体" in shown and "linear_elu" in shown


def test_a_preset_sets_both_runs_and_the_table_compares_them(app):
    at = app(PAGE)
    at.button(key="lab_preset_positions").click().run()
    assert not at.exception
    assert at.selectbox(key="lab_pos").value == "none" and at.selectbox(key="lab_b").value == "positions"
    wait_done(at, timeout=180)
    deadline = time.time() + 120
    while time.time() < deadline and len([m for m in at.markdown if "done" in m.value]) < 2:
        time.sleep(0.5)
        at.run()
    table = at.dataframe[0].value
    reached = dict(zip(table.iloc[:, 0], table.iloc[:, 1]))
    assert reached["A"] == "did not reach it" and reached["B"].isdigit()  # positions are what reverse needs


def test_a_worker_left_idle_exits_and_the_next_run_gets_a_fresh_one(monkeypatch):
    from explorer import lab_runs

    monkeypatch.setattr(lab_runs, "IDLE_S", 0.5)
    run = RUNS.start(engine.LabConfig(task="shift", steps=10, seed=11), "s")
    deadline = time.time() + 60
    while run.active and time.time() < deadline:
        time.sleep(0.1)
    assert run.state == "done" and len(RUNS.idle) >= 1
    worker = RUNS.idle[-1][0]
    deadline = time.time() + 10
    while worker.poll() is None and time.time() < deadline:
        time.sleep(0.1)
    assert worker.poll() is not None and all(p is not worker for p, _ in RUNS.idle)  # ended, memory returned
    again = RUNS.start(engine.LabConfig(task="shift", steps=10, seed=12), "s")
    deadline = time.time() + 60
    while again.active and time.time() < deadline:
        time.sleep(0.1)
    assert again.state == "done"
