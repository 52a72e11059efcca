"""The Lab's presets trained at a server's start are the runs a learner's press asks for
(explorer.classroom.ahead.lab)."""

import threading
import time
from collections import OrderedDict
from dataclasses import replace

import pytest

from attn_core import lab as engine
from explorer.classroom.ahead import lab as ahead
from explorer.lab.runs import RUNS, Run

PAGE = "pages/8_lab.py"


@pytest.fixture
def started(monkeypatch):
    """The settings of every run the page starts (recorded; nothing trains), on a server with no runs yet (a run
    another test left, finished, would be shown instead of started)."""
    monkeypatch.setattr(RUNS, "jobs", OrderedDict())
    seen = []

    def start(cfg, session=""):
        seen.append(cfg)
        return Run(cfg, state="stopped")

    monkeypatch.setattr(RUNS, "start", start)
    return seen


def test_every_preset_pressed_on_the_page_starts_the_runs_trained_ahead(app, started):
    at = app(PAGE)
    for name in engine.PRESETS:
        started.clear()
        at.button(key=f"lab_preset_{name}").click().run()
        assert not at.exception, [e.value for e in at.exception]
        assert set(started) == set(ahead.pressed(name)), name
    assert {c for name in engine.PRESETS for c in ahead.pressed(name)} <= set(ahead.every_press())


def test_the_positions_lesson_played_starts_runs_trained_ahead(app, started):
    from explorer.classroom.tour import BY_KEY, params

    at = app(PAGE, query=params(BY_KEY["positions"]))
    at.button(key="lab_play").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(set(started)) == 2 and set(started) == set(ahead.played(params(BY_KEY["positions"])))
    assert set(started) <= set(ahead.every_press())


def test_a_preset_pressed_after_other_settings_is_not_a_fresh_sessions_run(app, started):
    """The sidebar's seed stays the learner's on a press: that run is not the one trained ahead (and ``pressed``
    with that session's values says which one it is)."""
    at = app(PAGE, query={"seed": "5"})
    at.button(key="lab_preset_linear").click().run()
    assert set(started) == set(ahead.pressed("linear", ahead.fresh_values() | {"seed": 5}))
    assert not set(started) & set(ahead.every_press())


class FakeRuns:
    """Runs that end when told: records how many were active at once."""

    def __init__(self):
        self.lock = threading.Lock()
        self.made: list[Run] = []
        self.most = 0

    def start(self, cfg, session=""):
        run = Run(cfg, state="running", watchers={session: time.time()})
        self.made.append(run)
        self.most = max(self.most, sum(r.active for r in self.made))
        threading.Timer(0.05, lambda: setattr(run, "state", "done")).start()
        return run


def test_presets_train_one_at_a_time_held_and_kept():
    fake = FakeRuns()
    runs = ahead.train_presets(fake, poll_s=0.01)
    assert [r.cfg for r in runs] == ahead.every_press() and len(runs) >= 2 * len(engine.PRESETS)
    assert fake.most == 1  # one of the Lab's slots, never both
    assert all(r.kept and r.watchers[ahead.OWNER] > time.time() + ahead.HOLD_S - 60 for r in runs)


def test_a_kept_run_outlives_the_bound_on_finished_runs():
    cfg = replace(engine.LabConfig(task="shift", steps=10), seed=99)
    kept = Run(engine.validate(cfg), state="done", kept=True)
    with RUNS.lock:
        RUNS.jobs[kept.cfg] = kept
        RUNS.jobs.move_to_end(kept.cfg, last=False)  # the oldest
        for seed in range(40):  # more finished runs than a server keeps
            other = engine.validate(replace(cfg, seed=seed))
            RUNS.jobs[other] = Run(other, state="done")
        RUNS._forget_old()
        kept_left, others_left = kept.cfg in RUNS.jobs, sum(not r.kept for r in RUNS.jobs.values())
        RUNS.jobs.clear()
    assert kept_left and others_left == 32
