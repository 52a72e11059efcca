"""A burst on Explain: a whole class types sentences of its own at the same moment.

``--learners`` simulated learners (Streamlit's own websocket protocol, as in ``class_load.py``) sit on
the Explain page; at one instant each sets the sidebar's sentence to one nobody else typed, so every
one of them asks the server for a new explanation (the references and the methods read from
attention: seconds of model passes each). Meanwhile ``--others`` students go on over the other pages
as the class benchmark's students do. Each learner's browser then polls its job as the page's own
fragment asks (on its timer), until the page has drawn the whole result. Measured:

- the burst's own reruns: from the sentence sent to the page drawn (the cheap part at once, the rest
  "computing, N ahead of you"): p50/p95/max, and the queue positions the pages showed;
- each learner's wait for the whole result (the burst's start to the last part drawn);
- the other students' reruns meanwhile, all and per page, against the class's budget;
- the server's memory (RSS of the server and its children) and the most background-job workers alive
  at once, sampled every 0.5 s;
- with ``--kill-after S``: S seconds into the first burst one computing worker is killed; the learners whose
  job it was must see the failure said on their page with a retry button, press it and get their result.

    python benchmarks/explain_burst.py                       # 30 learners, 10 students elsewhere
    python benchmarks/explain_burst.py --kill-after 5 --json out.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import sys
import time
from dataclasses import dataclass, field

import psutil
from streamlit.proto.WidgetStates_pb2 import WidgetState

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "browser"))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from class_load import BUDGET_MS, Result, Session, default_pages, ms, server_rss, settle, student

SUBJECTS = ["The tired student", "A small dog", "My old teacher", "The quiet river", "Every new model", "Her brother"]
VERBS = ["reads", "remembers", "follows", "ignores", "explains", "paints"]
OBJECTS = ["the long letter", "a red kite", "the hidden door", "every question", "the morning news", "a simple proof"]
PLACES = ["in the library", "after the rain", "near the station", "before dinner", "on the bridge", "at school"]
CHINESE = ["学生在图书馆里读一封长信", "小狗在雨后追着红色的风筝", "老师在车站附近解释每个问题"]


def sentences(n: int, seed: int) -> list[str]:
    """``n`` different sentences of 7-11 words (every tenth in Chinese), the same for the same seed."""
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < n:
        if len(out) % 10 == 9:
            s = rng.choice(CHINESE) + rng.choice(["。", "吗？", "，真好。"]) + str(len(out))
        else:
            s = " ".join(rng.choice(x) for x in (SUBJECTS, VERBS, OBJECTS, PLACES))
        if s not in out:
            out.append(s)
    return out


@dataclass
class Learner(Session):
    """A session that also notes what a run showed of its jobs: the progress lines and the alerts."""

    progress: list[str] = field(default_factory=list)
    alerts: list[str] = field(default_factory=list)

    def _handle(self, fm, seen):
        kind = fm.WhichOneof("type")
        if kind == "new_session" and not fm.metadata.run.fragment_ids:  # a whole run draws everything anew (a
            self.auto, self.progress, self.alerts = {}, [], []  # run cut short by st.rerun left its widgets in seen)
            seen.clear()
        elif kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
            el = fm.delta.new_element
            what = el.WhichOneof("type")
            if what == "progress":
                self.progress.append(el.progress.text)
            elif what == "alert":
                self.alerts.append(el.alert.body)
        return super()._handle(fm, seen)

    @property
    def waiting(self) -> bool:
        """The page still polls a job (its progress drawn, its timer set)."""
        return bool(self.auto) or bool(self.progress)


def ahead_of(texts: list[str]) -> int | None:
    """The queue position a progress line says ("Computing… 5 ahead of you.", "前面还有 5 个"); 0 when computing."""
    if not texts:
        return None
    found = re.search(r"\d+", texts[-1])
    return int(found.group()) if found else 0


async def learner(s: Learner, sentence: str, go: asyncio.Event, rec: dict, limit_s: float) -> None:
    box = s.widgets.get("sentence")
    if box is None:
        rec["error"] = "no sentence box"
        return
    await go.wait()
    s.states[box.id] = WidgetState(id=box.id, string_value=sentence)
    t0 = time.perf_counter()
    rec["first_s"], rec["error"] = await s.run(fragment_id=box.fragment_id, timeout=limit_s)
    rec["ahead"] = [ahead_of(s.progress)]
    rec["retries"] = 0
    while rec["error"] is None and time.perf_counter() - t0 < limit_s:
        retry = next((w for w in s.widgets.values() if w.key.startswith("heavy_retry_")), None)
        if retry is not None and not s.waiting:  # the page said its job failed: press "try again"
            rec.setdefault("failure_said", []).extend(s.alerts)
            rec["retries"] += 1
            _, rec["error"] = await s.run(trigger=retry.id, timeout=limit_s)
            continue
        if not s.waiting:
            rec["done_s"] = time.perf_counter() - t0
            rec["alerts"] = list(s.alerts)
            return
        fragment, every = next(iter(s.auto.items())) if s.auto else ("", 0.25)
        await asyncio.sleep(every)
        s.progress = []
        rec["polls"] = rec.get("polls", 0) + 1
        _, rec["error"] = await s.run(fragment_id=fragment, timeout=limit_s)
        rec["ahead"].append(ahead_of(s.progress))
    rec["error"] = rec["error"] or "no result within the limit"


def heavy_workers(pid: int) -> list[psutil.Process]:
    out = []
    for c in psutil.Process(pid).children(recursive=True):
        try:
            if "attn_core.heavy" in " ".join(c.cmdline()):
                out.append(c)
        except psutil.Error:
            pass
    return out


async def watch(pid: int, stop: asyncio.Event, memory: list, workers: list) -> None:
    while not stop.is_set():
        memory.append(server_rss([pid]))
        workers.append(len(heavy_workers(pid)))
        try:
            await asyncio.wait_for(stop.wait(), timeout=0.5)
        except TimeoutError:
            pass


async def kill_one(pid: int, after_s: float, killed: dict) -> None:
    """The busiest heavy worker, ``after_s`` into the burst."""
    await asyncio.sleep(after_s)
    procs = heavy_workers(pid)
    for p in procs:
        p.cpu_percent(None)
    await asyncio.sleep(0.5)

    def used(p: psutil.Process) -> float:
        try:
            return p.cpu_percent(None)
        except psutil.Error:
            return -1.0

    busy = max(procs, key=used, default=None)
    if busy is not None:
        killed["pid"] = busy.pid
        try:
            busy.kill()
        except psutil.Error as err:
            killed["error"] = type(err).__name__


async def burst(args, pid: int) -> dict:
    pages = [p for p in default_pages().split(",") if p != "explain"]
    warm = Session(args.url, "warm")  # a first visitor: every page, then the server's start-up work done
    await warm.connect()
    for p in ["explain", *pages]:
        await warm.run(page=p, timeout=300)
    await warm.close()
    settle(psutil.Process(pid))
    learners = [Learner(args.url, f"learner{i}") for i in range(args.learners)]
    for s in learners:  # each on Explain with the sentence everybody starts with (shared, already computed)
        await s.connect()
        await s.run(page="explain", timeout=300)
    memory: list[int] = []
    workers: list[int] = []
    stop, others_stop = asyncio.Event(), asyncio.Event()
    results: list[Result] = []
    ns = argparse.Namespace(url=args.url, seed=args.seed, lesson="")
    others = [asyncio.create_task(student(i, ns, pages, results, others_stop, lambda: "")) for i in range(args.others)]
    watcher = asyncio.create_task(watch(pid, stop, memory, workers))
    await asyncio.sleep(10)  # the other students settled in
    before = len(results)
    recs: list[dict] = []
    killed: dict = {}
    t0 = time.perf_counter()
    for k in range(args.bursts):  # each burst: everybody types a new sentence of their own at once
        if k:
            await asyncio.sleep(args.pause)
        go = asyncio.Event()
        texts = sentences(args.learners, args.seed * 100 + k)
        wave = [{"burst": k, "sentence": x} for x in texts]
        tasks = [asyncio.create_task(learner(s, x, go, r, args.limit)) for s, x, r in zip(learners, texts, wave)]
        go.set()
        kill = args.kill_after >= 0 and k == 0
        killer = asyncio.create_task(kill_one(pid, args.kill_after, killed)) if kill else None
        await asyncio.gather(*tasks)
        if killer is not None:
            await killer
        recs += wave
    burst_s = time.perf_counter() - t0
    others_stop.set()
    await asyncio.gather(*others)
    stop.set()
    await watcher
    for s in learners:
        await s.close()
    during = [r for r in results[before:] if r.error is None]
    return report(args, recs, during, results[before:], memory, workers, burst_s, killed)


def report(args, recs, during, all_during, memory, workers, burst_s, killed) -> dict:
    errors: dict[str, int] = {}
    for r in all_during:
        if r.error:
            errors[r.error] = errors.get(r.error, 0) + 1
    for r in recs:
        if r.get("error"):
            errors["burst: " + r["error"]] = errors.get("burst: " + r["error"], 0) + 1
    first = [
        [r["ahead"][0] for r in recs if r["burst"] == k and r.get("ahead") and r["ahead"][0] is not None]
        for k in range(args.bursts)
    ]
    out = {
        "learners": args.learners,
        "others": args.others,
        "bursts": args.bursts,
        "bursts_s": round(burst_s, 1),
        "burst_first_draw_ms": ms([r["first_s"] for r in recs if "first_s" in r]),
        "whole_result_s": {
            k: (round(v / 1000, 2) if isinstance(v, float) else v)
            for k, v in ms([r["done_s"] for r in recs if "done_s" in r]).items()
        },
        "queue_shown_at_first": [  # per burst: the furthest back, how many different positions, on how many pages
            {"max": max(f, default=None), "distinct": len(set(f)), "pages": len(f)} for f in first
        ],
        "learners_polls_per_s": round(sum(r.get("polls", 0) for r in recs) / burst_s, 1),
        "others_during_ms": ms([r.latency for r in during]),
        "others_per_page_ms": {
            p: ms([r.latency for r in during if r.page == p]) for p in sorted({r.page for r in during})
        },
        "memory_mib": {
            "before": round(memory[0] / 2**20),
            "peak": round(max(memory) / 2**20),
            "after": round(memory[-1] / 2**20),
        },
        "heavy_workers_at_most": max(workers, default=0),
        "errors": errors,
        "killed": killed,
        "failures_said": sum(1 for r in recs if r.get("failure_said")),
        "retried_and_done": sum(1 for r in recs if r.get("retries") and "done_s" in r),
        "learners_done": sum(1 for r in recs if "done_s" in r),
    }
    lat = out["others_during_ms"]
    out["over_budget"] = [
        f"{name}: p95 {s['p95']} ms >= {limit} ms"
        for name, s, limit in [("others, all", lat, BUDGET_MS["all_p95"])]
        + [(p, s, BUDGET_MS["page_p95"]) for p, s in out["others_per_page_ms"].items()]
        if s["n"] and s["p95"] >= limit
    ]
    out["recs"] = recs
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--learners", type=int, default=30, help="learners on Explain, each typing a sentence")
    ap.add_argument("--others", type=int, default=10, help="students on the other pages meanwhile")
    ap.add_argument("--bursts", type=int, default=3, help="bursts one after another, each with new sentences")
    ap.add_argument("--pause", type=float, default=5.0, help="seconds between two bursts")
    ap.add_argument("--kill-after", type=float, default=-1, help="seconds into the burst to kill a busy worker")
    ap.add_argument("--limit", type=float, default=600, help="seconds a learner waits for the whole result")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="also write the report to this file")
    args = ap.parse_args()
    if args.learners < 1 or args.bursts < 1 or args.others < 0 or args.pause < 0 or args.limit <= 0:
        ap.error("--learners and --bursts take 1 or more, --others and --pause 0 or more, --limit more than 0")
    from serve import start_server, stop_server

    proc, args.url = start_server()
    try:
        rep = asyncio.run(burst(args, proc.pid))
    finally:
        stop_server(proc)
    short = {k: v for k, v in rep.items() if k != "recs"}
    print(json.dumps(short, indent=1, ensure_ascii=False))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rep, f, indent=1, ensure_ascii=False)


if __name__ == "__main__":
    main()
