"""An Explain job in two workers at once, when the server is otherwise idle: the references in one
worker (its parts shown as they come), the methods read from attention in the other; the two last
parts are joined by the first worker into the one the whole computation ends with, and shown
together (the page never sees half of the last part). Still one job of ``explorer.jobs.heavy``'s,
holding both slots, so never more than ``SLOTS`` workers compute at once."""

from __future__ import annotations

import json
import subprocess
import threading
import time

from explorer.base.cache import nbytes as size_of
from explorer.jobs.children import JsonLines

SPLIT = {"explain"}  # kinds computed in two workers at once when the server is otherwise idle
HALVES = ("references", "attention")  # the first worker's half, the second's


def second_slot(heavy, job) -> tuple[subprocess.Popen, subprocess.Popen] | None:
    """Two waiting workers and the other slot for ``job``, when nothing else runs or waits (else None:
    a job never waits for a second slot nor starts a worker for it, and one that waits for its
    first is never delayed)."""
    if job.kind not in SPLIT:
        return None
    with heavy.lock:
        if heavy.queue or any(j.state == "running" and j is not job for j in heavy.jobs.values()):
            return None
        if not heavy.slots.acquire(blocking=False):
            return None
    with heavy.workers.lock:
        live = [(p, t) for p, t in heavy.workers.waiting if p.poll() is None]
        if len(live) >= 2:
            pair = [live.pop()[0], live.pop()[0]]
            heavy.workers.waiting = [(p, t) for p, t in heavy.workers.waiting if p not in pair]
            return pair[0], pair[1]
    heavy.slots.release()
    return None


def ask_worker(proc: subprocess.Popen, job, kind: str, args: dict, on_part) -> tuple[dict | None, str]:
    """Send one request to ``proc``, hand each (progress, part) to ``on_part``; its end line (None:
    the worker ended without one, or could not be written to) and the last line that was not JSON."""
    try:
        proc.stdin.write(json.dumps({"kind": kind, "args": args, "id": job.id}, ensure_ascii=False) + "\n")
        proc.stdin.flush()
    except (OSError, ValueError) as err:
        return None, str(err)
    lines = JsonLines(proc.stdout)
    for item in lines:
        if "end" in item:
            return item, lines.last_other
        on_part(float(item.get("progress", 0.0)), item.get("part") or {})
    return None, lines.last_other


def execute_split(heavy, job, proc: subprocess.Popen, helper: subprocess.Popen) -> None:
    """``job`` in two workers at once: everything but flow in ``proc``, flow in ``helper``; then joined."""
    job.proc, job.helper, job.split = proc, helper, True
    ends: dict[str, tuple] = {}
    last: dict[str, dict] = {}
    shares = dict.fromkeys(HALVES, 0.0)

    def on_part(name: str, share: float, part: dict) -> None:
        with heavy.lock:
            shares[name] = share
            job.progress = 0.95 * (0.5 * shares["references"] + 0.5 * shares["attention"])
            if share >= 1.0:
                last[name] = part  # held back until the other half's last part is here
            elif part:
                job.result = {**job.result, **part}
                job.parts += 1

    def follow(name: str, worker: subprocess.Popen) -> None:
        args = {**job.args, "part": name}
        ends[name] = ask_worker(worker, job, "explain", args, lambda p, part: on_part(name, p, part))

    other = threading.Thread(target=follow, args=("attention", helper), name="heavy-attention", daemon=True)
    other.start()
    follow("references", proc)
    other.join()
    if all(ends[k][0] == {"end": "ok"} for k in shares) and len(last) == 2 and job.state == "running":
        args = {"sentence": job.args["sentence"], "refs": last["references"], "att": last["attention"]}
        if "model" in job.args:  # a model other than the bundled one: the join reads its tokens too
            args["model"] = job.args["model"]
        args["references"] = job.result.get("references", {})
        ends["references"] = ask_worker(proc, job, "explain_join", args, lambda p, part: last.update(joined=part))
    _end(heavy, job, ends, last)
    _release(heavy, {"references": proc, "attention": helper}, ends)


def _end(heavy, job, ends: dict[str, tuple], last: dict[str, dict]) -> None:
    """The job done with the joined last part, else failed with the first half's reason that did not end well."""
    with heavy.lock:
        job.proc, job.helper, job.ended = None, None, time.time()
        if ends["references"][0] == {"end": "ok"} and "joined" in last and job.state == "running":
            job.result = {**job.result, **last["joined"]}
            job.parts += 1
            job.state, job.progress = "done", 1.0
        elif job.state == "running":
            job.fail(*next((e for e in ends.values() if e[0] != {"end": "ok"}), (None, "")))
        job.size = size_of(job.result) + size_of(job.args)


def _release(heavy, workers: dict[str, subprocess.Popen], ends: dict[str, tuple]) -> None:
    """Each worker that answered back to wait for the next request; one that did not, ended."""
    for name, worker in workers.items():
        if ends[name][0] is not None and worker.poll() is None:
            heavy.workers.give(worker)
        else:
            if worker.poll() is None:
                worker.terminate()
            threading.Thread(target=worker.wait, daemon=True).start()
