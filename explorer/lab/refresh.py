"""How often a page redraws its live charts while a run trains (the Lab's runs and the Vision page's, on the Lab's
workers): once a second while few learners watch, less often as more do, so that the whole server's live redraws
stay near ``PER_S`` a second. Each redraw is a rerun of the page's live fragment (on the Lab about twenty charts:
the curves and every head's weights of both runs); a class whose learners all train at once would otherwise spend
the server on redraws and slow every other page."""

from __future__ import annotations

import time

from explorer.lab.runs import Runs

PER_S = 1.5  # the Lab's redraws a second for the whole server, while several learners watch runs train
LOW_S, HIGH_S = 1.0, 5.0  # one learner sees a redraw a second; thirty, one every five seconds
LOOKED_S = 2 * HIGH_S  # a session that has not looked at a run for this long has left it


def watching(every_runs=None, now: float | None = None) -> int:
    """The sessions that looked at a queued or running run within ``LOOKED_S``; ``every_runs``: the ``Runs`` to
    read (default: every one of this server, ``Runs.made``)."""
    now = time.time() if now is None else now
    sessions = set()
    for runs in Runs.made if every_runs is None else every_runs:
        with runs.lock:
            moving = [r for r in runs.runs.values() if r.state in ("queued", "running")]
            sessions |= {s for r in moving for s, seen in list(r.watchers.items()) if now - seen <= LOOKED_S}
    return len(sessions)


def interval_s(every_runs=None, now: float | None = None) -> float:
    """Seconds between one session's redraws: LOW_S up to PER_S watching sessions, then their number over
    PER_S, at most HIGH_S."""
    return min(HIGH_S, max(LOW_S, watching(every_runs, now) / PER_S))
