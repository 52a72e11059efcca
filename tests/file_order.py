"""The order in which the suite's two workers take its test files (``pytest-xdist --dist loadfile``, which hands
the next file in the queue to whichever worker frees first).

The browser tests spend much of their time waiting on a page (a rerun's end, a chart's second layout); the others
keep a core busy. In xdist's own order (most tests first) the browser files came last and both workers waited in
them together while the cores idled. Here the queue is built by playing the two workers forward with each file's
measured time (``tests/durations.json``, from a whole run; a file not in it counts ``DEFAULT_S``): the worker that
frees first takes the longest waiting file of the other kind than the one its partner is running, so a waiting
browser test has a computing one beside it, and the longest files start early instead of ending the run alone.
"""

from __future__ import annotations

import json
import os

DURATIONS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "durations.json")
DEFAULT_S = 2.0


def waits(path: str) -> bool:
    """A file whose tests mostly wait on a browser."""
    return path.startswith("tests/browser/")


def measured() -> dict[str, float]:
    try:
        with open(DURATIONS) as f:
            return {str(k): float(v) for k, v in json.load(f).items()}
    except (OSError, ValueError, AttributeError):
        return {}


def order(files: list[str], seconds: dict[str, float], workers: int = 2) -> list[str]:
    """``files`` in the order the workers should take them (each once)."""
    weight = {f: seconds.get(f, DEFAULT_S) for f in files}
    queues = {kind: sorted((f for f in files if waits(f) is kind), key=lambda f: -weight[f]) for kind in (True, False)}
    free_at = [0.0] * workers
    running: list[bool | None] = [None] * workers
    out: list[str] = []
    while queues[True] or queues[False]:
        w = min(range(workers), key=free_at.__getitem__)
        others = [running[i] for i in range(workers) if i != w]
        kind = not any(others) if queues[not any(others)] else any(others)  # the kind the partners are not running
        if not queues[kind]:
            kind = not kind
        f = queues[kind].pop(0)
        out.append(f)
        free_at[w] += weight[f]
        running[w] = kind
    return out
