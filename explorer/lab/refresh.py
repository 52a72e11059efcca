"""How often a Lab page redraws its live charts while a run trains: once a second while few learners watch,
less often as more do, so that the whole server's Lab redraws stay near ``PER_S`` a second. Each redraw is a
rerun of the page's live fragment (about twenty charts: the curves and every head's weights of both runs); a
class whose learners all train at once would otherwise spend the server on redraws and slow every other page."""

from __future__ import annotations

import time

PER_S = 1.5  # the Lab's redraws a second for the whole server, while several learners watch runs train
LOW_S, HIGH_S = 1.0, 5.0  # one learner sees a redraw a second; thirty, one every five seconds
LOOKED_S = 2 * HIGH_S  # a session that has not looked at a run for this long has left it


def watching(runs, now: float | None = None) -> int:
    """The sessions that looked at a queued or running run within ``LOOKED_S`` (``runs``: a ``Runs``)."""
    now = time.time() if now is None else now
    with runs.lock:
        moving = [r for r in runs.runs.values() if r.state in ("queued", "running")]
        return len({s for r in moving for s, seen in list(r.watchers.items()) if now - seen <= LOOKED_S})


def interval_s(runs, now: float | None = None) -> float:
    """Seconds between one session's redraws: LOW_S up to PER_S watching sessions, then their number over
    PER_S, at most HIGH_S."""
    return min(HIGH_S, max(LOW_S, watching(runs, now) / PER_S))
