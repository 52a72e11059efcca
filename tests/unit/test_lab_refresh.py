"""How often the Lab and Vision pages redraw their live charts (``explorer.lab.refresh``): once a second while up to
PER_S sessions watch runs train, then less often so the server's live redraws stay near PER_S a second, never slower
than one in HIGH_S; only sessions that looked lately at a queued or running run count, once over all the server's
runs (the Lab's and the Vision page's)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import pytest

from explorer.lab import refresh
from explorer.lab.runs import RUNS, Run, Runs
from explorer.vision.runs import VISION_RUNS

NOW = 1_000_000.0


@dataclass
class FakeRuns:
    """What ``refresh`` reads of the server's ``Runs``: its lock and its runs by key."""

    runs: dict = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


def runs_watched(states_and_watchers: list[tuple[str, dict]]) -> FakeRuns:
    out = FakeRuns()
    for i, (state, watchers) in enumerate(states_and_watchers):
        out.runs[i] = Run(cfg=None, state=state, watchers=dict(watchers))
    return out


@pytest.mark.parametrize("sessions", [0, 1, 2, 3, 5, 7, 8, 30, 100])
def test_the_interval_keeps_the_servers_redraws_near_their_budget(sessions):
    runs = [runs_watched([("running", {f"s{i}": NOW - 1 for i in range(sessions)})])]
    assert refresh.watching(runs, NOW) == sessions
    every = refresh.interval_s(runs, NOW)
    assert refresh.LOW_S <= every <= refresh.HIGH_S
    if sessions <= refresh.PER_S:
        assert every == refresh.LOW_S  # a learner alone, or two: a redraw a second
    elif every < refresh.HIGH_S:
        assert sessions / every == pytest.approx(refresh.PER_S)  # the server's redraws a second: the budget
    else:
        assert sessions / refresh.PER_S >= refresh.HIGH_S  # so many that the slowest redraw is reached


def test_only_sessions_that_look_lately_at_a_moving_run_count():
    runs = runs_watched(
        [
            ("running", {"a": NOW - 1, "b": NOW - refresh.LOOKED_S - 1}),  # b has left
            ("queued", {"a": NOW, "c": NOW - 2}),  # a counted once
            ("done", {"d": NOW}),  # a finished run is not redrawn
            ("paused", {"e": NOW}),
            ("failed", {"f": NOW}),
        ]
    )
    vision = runs_watched([("running", {"c": NOW, "g": NOW - 3})])  # c watches a Lab run and a Vision run
    assert refresh.watching([runs], NOW) == 2
    assert refresh.watching([runs, vision], NOW) == 3


def test_every_runs_of_the_server_is_counted_by_default():
    assert RUNS in Runs.made and VISION_RUNS in Runs.made
    assert refresh.watching() == refresh.watching(Runs.made) >= 0
    assert refresh.LOW_S <= refresh.interval_s() <= refresh.HIGH_S
