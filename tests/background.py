"""Waiting in a page test for the parts a page asks of the background jobs (``explorer.jobs.heavy``)."""

from __future__ import annotations

import time


def until_done(at, timeout: float = 600.0):
    """Rerun the page (as its poll does) until the parts computed in the background have arrived (the
    workers run at the lowest CPU priority: on a machine busy with other work they can take minutes)."""
    deadline = time.monotonic() + timeout
    while at.get("progress") and time.monotonic() < deadline:
        time.sleep(0.2)
        at.run()
    assert not at.get("progress"), "still computing"
    return at
