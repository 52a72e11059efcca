"""Where the test suite's CPU goes, test by test and by kind of process: a pytest plugin and its report.

    bash scripts/test.sh -p benchmarks.suite_cpu        (or python -m pytest -p benchmarks.suite_cpu tests/...)
    python benchmarks/suite_cpu.py [DIR] [--top N] [--out FILE]

The plugin: each test process (each xdist worker, or pytest alone) appends a JSON line per test to
``DIR/cpu-<worker>.jsonl`` (``DIR``: ``$SUITE_CPU_DIR``, else ``artifacts/suite_cpu``): the test's id, its wall time
(setup, call and teardown) and the CPU seconds that its own process and each kind of descendant process (``kind``:
Chromium, the Streamlit servers, ``python -m attn_core`` commands and workers, Playwright's driver, g++...) spent
while it ran. A thread reads every descendant's CPU once a second; what a process that ended during the test took
after its last reading (all of it, for one that started and ended between two readings) is "ended between readings",
from what the test process's ended children took in all (the processes it waited for). A process that outlives the
tests (a session's server) is counted in the tests that ran while it worked. What the machine spent on the suite
as a whole, busy or idle, is ``/proc/stat``'s (the records in ``results/suite_time.txt`` say which they quote).

The report: the CPU by kind, by file and the costliest tests.
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import sys
import threading
import time

import pytest

DEFAULT_DIR = os.path.join("artifacts", "suite_cpu")
PERIOD_S = 1.0


def kind(name: str, cmdline: list[str]) -> str:
    """What a process is, from its name and command line."""
    line = " ".join(cmdline)
    if "chrom" in name or "chrom" in line:
        return "chromium"
    if name in ("node", "playwright") or (cmdline and cmdline[0].endswith("/node")):
        return "playwright driver"
    if name.startswith("python") or "python" in (cmdline[0] if cmdline else ""):
        if "streamlit" in line and " run " in f" {line} ":
            return "streamlit server"
        if "attn_core" in line:
            return "python -m attn_core"
        return "python, other"
    if name in ("cc1plus", "g++", "c++", "as", "ld", "collect2"):
        return "compiler"
    return name or "?"


class _Reader:
    """The latest CPU reading of every descendant of this process, by (pid, start time): (kind, seconds, parent pid),
    and which of them were alive at the last reading."""

    def __init__(self) -> None:
        import psutil

        self._me = psutil.Process()
        self._lock = threading.Lock()
        self.seen: dict[tuple[int, float], tuple[str, float, int]] = {}
        self.alive: frozenset = frozenset()
        self._stop = threading.Event()
        self.read()
        threading.Thread(target=self._loop, name="suite-cpu", daemon=True).start()

    @property
    def pid(self) -> int:
        return self._me.pid

    def read(self) -> None:
        import psutil

        found = {}
        for p in self._me.children(recursive=True):
            try:
                with p.oneshot():
                    t = p.cpu_times()
                    key = (p.pid, p.create_time())
                    known = self.seen.get(key)
                    what = known[0] if known else kind(p.name(), p.cmdline())
                    found[key] = (what, t.user + t.system, p.ppid())
            except psutil.Error:
                pass
        with self._lock:
            self.seen.update(found)
            self.alive = frozenset(found)

    def _loop(self) -> None:
        while not self._stop.wait(PERIOD_S):
            self.read()

    def snapshot(self) -> tuple[dict, frozenset]:
        self.read()
        with self._lock:
            return dict(self.seen), self.alive

    def forget(self, alive: frozenset) -> None:
        """Let go of the processes not in ``alive`` (those that ended by a test's end: no later test's reading needs
        them, and a key is never used again, its start time in it)."""
        with self._lock:
            self.seen = {k: v for k, v in self.seen.items() if k in alive}

    def own(self) -> tuple[float, float]:
        """This process's CPU seconds, and those of its children that ended and were waited for (theirs included)."""
        t = self._me.cpu_times()
        return t.user + t.system, t.children_user + t.children_system

    def stop(self) -> None:
        self._stop.set()


def spent(before: dict, after: dict) -> dict[str, float]:
    """CPU seconds by kind between two snapshots: each process's reading after less its reading before (0 for a process
    that started in between)."""
    out: dict[str, float] = collections.defaultdict(float)
    for key, (what, seconds, *_) in after.items():
        delta = seconds - before.get(key, (what, 0.0))[1]
        if delta > 0:
            out[what] += delta
    return dict(out)


def between_readings(reaped: float, me: int, before: dict, before_alive, after: dict, after_alive) -> float:
    """The CPU of processes that ended during a test without being read at their end: what this process's ended
    children took (``reaped``, their ended descendants included) less the last readings of those processes. A process
    that starts and ends between two readings is only counted here (its kind unknown)."""
    ended = {k: v for k, v in after.items() if k not in after_alive and (k in before_alive or k not in before)}
    reaped_by: set[int] = {me}
    chain: set = set()
    grew = True
    while grew:  # the ended processes whose parent is this process, or an ended process that waited for them
        new = {k for k, v in ended.items() if k not in chain and v[2] in reaped_by}
        chain |= new
        reaped_by |= {k[0] for k in new}
        grew = bool(new)
    return max(0.0, reaped - sum(ended[k][1] for k in chain))


_READER: _Reader | None = None


def _reader() -> _Reader:
    """Started at a process's first test (an xdist controller, which runs none, reads nothing)."""
    global _READER
    if _READER is None:
        _READER = _Reader()
    return _READER


def pytest_unconfigure(config) -> None:
    if _READER is not None:
        _READER.stop()


def _path() -> str:
    folder = os.environ.get("SUITE_CPU_DIR", DEFAULT_DIR)
    os.makedirs(folder, exist_ok=True)
    return os.path.join(folder, f"cpu-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.jsonl")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    reader = _reader()
    (before, before_alive), (own, reaped), t0 = reader.snapshot(), reader.own(), time.monotonic()
    yield
    (after, after_alive), (own_after, reaped_after) = reader.snapshot(), reader.own()
    wall = time.monotonic() - t0
    cpu = spent(before, after)
    cpu["test process"] = own_after - own
    unread = between_readings(reaped_after - reaped, reader.pid, before, before_alive, after, after_alive)
    if unread > 0.005:
        cpu["ended between readings"] = unread
    reader.forget(after_alive)
    with open(_path(), "a") as f:
        f.write(json.dumps({"id": item.nodeid, "wall": round(wall, 3), "cpu": cpu}) + "\n")


def load(folder: str) -> tuple[list[dict], int]:
    """Every test's line under ``folder``, and how many lines could not be read (a worker killed while writing one)."""
    rows, unreadable = [], 0
    for name in sorted(glob.glob(os.path.join(folder, "cpu-*.jsonl"))):
        with open(name) as f:
            for line in filter(str.strip, f):
                try:
                    row = json.loads(line)
                    rows.append({"id": str(row["id"]), "wall": float(row["wall"]), "cpu": dict(row["cpu"])})
                except (ValueError, KeyError, TypeError):
                    unreadable += 1
    return rows, unreadable


def summarize(rows: list[dict]) -> dict:
    """Totals by kind, by file (with its kinds) and by test, each test's CPU the sum over its kinds."""
    by_kind: dict[str, float] = collections.defaultdict(float)
    by_file: dict[str, dict[str, float]] = collections.defaultdict(lambda: collections.defaultdict(float))
    wall: dict[str, float] = collections.defaultdict(float)
    tests = []
    for row in rows:
        file = row["id"].split("::")[0]
        wall[file] += row["wall"]
        for what, seconds in row["cpu"].items():
            by_kind[what] += seconds
            by_file[file][what] += seconds
        tests.append((sum(row["cpu"].values()), row["wall"], row["id"]))
    files = {f: (sum(k.values()), wall[f], dict(k)) for f, k in by_file.items()}
    return {"kinds": dict(by_kind), "files": files, "tests": sorted(tests, reverse=True)}


def report(summary: dict, top: int = 25) -> list[str]:
    kinds, files = summary["kinds"], summary["files"]
    total = sum(kinds.values())
    lines = [f"# the suite's CPU by kind of process: {total:.1f} s over {len(summary['tests'])} tests"]
    lines += [f"{s:9.1f} s  {100 * s / total:5.1f} %  {k}" for k, s in sorted(kinds.items(), key=lambda x: -x[1])]
    lines.append(f"# by file (the {top} costliest): CPU, the tests' wall time, the largest kinds")
    for f, (cpu, w, k) in sorted(files.items(), key=lambda x: -x[1][0])[:top]:
        largest = ", ".join(f"{n} {s:.0f}" for n, s in sorted(k.items(), key=lambda x: -x[1])[:3])
        lines.append(f"{cpu:9.1f} s  wall {w:7.1f} s  {f}  ({largest})")
    lines.append(f"# the {top} costliest tests: CPU, wall")
    lines += [f"{cpu:9.1f} s  wall {w:6.1f} s  {test}" for cpu, w, test in summary["tests"][:top]]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dir", nargs="?", default=os.environ.get("SUITE_CPU_DIR", DEFAULT_DIR))
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--out", default="")
    args = parser.parse_args(argv)
    rows, unreadable = load(args.dir)
    if unreadable:
        print(f"{unreadable} line(s) under {args.dir} could not be read and are left out", file=sys.stderr)
    if not rows:
        print(f"no test's CPU under {args.dir}: run the tests with -p benchmarks.suite_cpu first", file=sys.stderr)
        return 2
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from benchmarks.record import emit

    emit(report(summarize(rows), args.top), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
