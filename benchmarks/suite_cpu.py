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
as a whole, busy or idle, is ``/proc/stat``'s, read once a second by the first worker's thread into
``DIR/machine.jsonl`` where the machine has one (the records in ``results/suite_time.txt`` say which they quote).

The report: the CPU by kind, by file and the costliest tests; then, from ``machine.jsonl`` and each test's start, how
busy the machine was while the tests ran and its idle core-seconds by the files the workers were running at the time
(the waits of two browser files side by side, say).
"""

from __future__ import annotations

import argparse
import collections
import glob
import itertools
import json
import os
import sys
import threading
import time

import pytest

DEFAULT_DIR = os.path.join("artifacts", "suite_cpu")
PERIOD_S = 1.0
STAT = "/proc/stat"


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

    def __init__(self, machine: str | None = None) -> None:
        import psutil

        self._me = psutil.Process()
        self._lock = threading.Lock()
        self.seen: dict[tuple[int, float], tuple[str, float, int]] = {}
        self.alive: frozenset = frozenset()
        self._stop = threading.Event()
        self._machine = machine  # where this reader appends the machine's readings (one worker's does)
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
            if self._machine:
                reading = machine_reading()
                if reading:
                    with open(self._machine, "a") as f:
                        f.write(json.dumps(reading) + "\n")

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


def machine_reading(path: str = STAT) -> dict | None:
    """The machine's CPU ticks so far, all cores together (``/proc/stat``'s first line): busy (user, nice, system,
    irq, softirq, steal) and idle (idle, iowait), with the time and the ticks per second; None where there is none."""
    try:
        with open(path) as f:
            fields = f.readline().split()
        v = [int(x) for x in fields[1:9]]
    except (OSError, ValueError, IndexError):
        return None
    if fields[0] != "cpu" or len(v) < 8:
        return None
    busy, idle = v[0] + v[1] + v[2] + v[5] + v[6] + v[7], v[3] + v[4]
    return {"t": round(time.time(), 3), "busy": busy, "idle": idle, "hz": os.sysconf("SC_CLK_TCK")}


_READER: _Reader | None = None


def _reader() -> _Reader:
    """Started at a process's first test (an xdist controller, which runs none, reads nothing); the first worker's
    (or pytest's alone) also reads the machine."""
    global _READER
    if _READER is None:
        first = os.environ.get("PYTEST_XDIST_WORKER", "gw0") == "gw0"
        _READER = _Reader(os.path.join(_folder(), "machine.jsonl") if first else None)
    return _READER


def pytest_unconfigure(config) -> None:
    if _READER is not None:
        _READER.stop()


def _folder() -> str:
    folder = os.environ.get("SUITE_CPU_DIR", DEFAULT_DIR)
    os.makedirs(folder, exist_ok=True)
    return folder


def _path() -> str:
    return os.path.join(_folder(), f"cpu-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.jsonl")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    reader = _reader()
    (before, before_alive), (own, reaped), t0 = reader.snapshot(), reader.own(), time.monotonic()
    start = time.time()
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
        row = {"id": item.nodeid, "wall": round(wall, 3), "cpu": cpu, "start": round(start, 3)}
        f.write(json.dumps(row) + "\n")


def load(folder: str) -> tuple[list[dict], int]:
    """Every test's line under ``folder`` (with its worker, from the file's name), and how many lines could not be
    read (a worker killed while writing one)."""
    rows, unreadable = [], 0
    for name in sorted(glob.glob(os.path.join(folder, "cpu-*.jsonl"))):
        worker = os.path.basename(name)[len("cpu-") : -len(".jsonl")]
        with open(name) as f:
            for line in filter(str.strip, f):
                try:
                    row = json.loads(line)
                    start = float(row["start"]) if "start" in row else None  # a line of before it was written
                    rows.append(
                        {
                            "id": str(row["id"]),
                            "wall": float(row["wall"]),
                            "cpu": dict(row["cpu"]),
                            "worker": worker,
                            "start": start,
                        }
                    )
                except (ValueError, KeyError, TypeError):
                    unreadable += 1
    return rows, unreadable


def load_machine(folder: str) -> list[dict]:
    """The machine's readings under ``folder`` in time order (a line cut short left out)."""
    out = []
    try:
        with open(os.path.join(folder, "machine.jsonl")) as f:
            for line in filter(str.strip, f):
                try:
                    r = json.loads(line)
                    out.append({k: float(r[k]) for k in ("t", "busy", "idle", "hz")})
                except (ValueError, KeyError, TypeError):
                    pass
    except OSError:
        return []
    return sorted(out, key=lambda r: r["t"])


def idle_by_files(rows: list[dict], machine: list[dict]) -> dict:
    """How busy the machine was from the first test's start to the last one's end, and its idle core-seconds by the
    files its workers were running then: each interval between two readings is charged to the files running at its
    middle ("-" for a worker between two tests)."""
    timed = [r for r in rows if r.get("start") is not None]
    if not timed or len(machine) < 2:
        return {}
    first, last = min(r["start"] for r in timed), max(r["start"] + r["wall"] for r in timed)
    workers = sorted({r["worker"] for r in timed})
    by_worker = {
        w: sorted((r["start"], r["start"] + r["wall"], r["id"].split("::")[0]) for r in timed if r["worker"] == w)
        for w in workers
    }

    def running(worker: str, t: float) -> str:
        return next((f for a, b, f in by_worker[worker] if a <= t < b), "-")

    idle = busy = read = 0.0
    pairs: dict[tuple, float] = collections.defaultdict(float)
    for a, b in itertools.pairwise(machine):
        middle = (a["t"] + b["t"]) / 2
        if not first <= middle <= last:
            continue
        read += b["t"] - a["t"]
        spare, used = (b["idle"] - a["idle"]) / b["hz"], (b["busy"] - a["busy"]) / b["hz"]
        idle, busy = idle + spare, busy + used
        pairs[tuple(sorted(running(w, middle) for w in workers))] += spare
    share = busy / (busy + idle) if busy + idle else 0.0
    # "read": the part of those seconds the readings cover (the first worker reads; it may end before the other)
    return {"seconds": last - first, "read": read, "busy_share": share, "idle": idle, "pairs": dict(pairs)}


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
    idle = summary.get("idle")
    if idle:
        lines.append(
            f"# the machine while the tests ran ({idle['seconds']:.1f} s, {idle['read']:.1f} s of it read): "
            f"{100 * idle['busy_share']:.1f} % busy, "
            f"{idle['idle']:.1f} core-seconds idle, by the files the workers ran then (the {top} largest)"
        )
        for files, spare in sorted(idle["pairs"].items(), key=lambda x: -x[1])[:top]:
            lines.append(f"{spare:9.1f} s  {' + '.join(files)}")
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

    summary = summarize(rows)
    summary["idle"] = idle_by_files(rows, load_machine(args.dir))
    emit(report(summary, args.top), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
