"""Each Lab preset's claim, measured on seeds that were not used to build the presets.

For every preset, its A and its B run (``attn_core.lab.preset``, the page's and the CLI's
``train --preset NAME --side a|b --seed N``) on each of ``SEEDS``, two at a time (one per core, as
the page's two training slots). Printed per preset and side: held-out accuracy at the end, the
steps to 99 %, the phase change (repeat) and the head detector's scores, each as its range over
the seeds; then one ``RESULT {json}`` line per preset, which the Lab page reads to quote the
measured spread (``explorer.lab.record``). Wall times are this shared machine's, under whatever
else runs on it.

    python benchmarks/lab_presets.py > benchmarks/results/lab_presets_cpu.txt
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

SEEDS = (101, 102, 103, 104, 105)  # not the default (0), not used while choosing the presets' settings


def one(args: tuple[str, int, int]) -> dict:
    import torch

    from attn_core import lab

    torch.set_num_threads(1)
    name, side, seed = args
    cfg = replace(lab.preset(name)[side], seed=seed)
    t0 = time.perf_counter()
    result = lab.run(cfg)
    final = result["final"]
    return {
        "preset": name,
        "side": "ab"[side],
        "seed": seed,
        "val_acc": final["val_acc"],
        "steps_to_99": final["steps_to_99"],
        "phase_change": final["phase_change"],
        "scores": final["scores"],
        "steps": cfg.resolved().steps,
        "seconds": time.perf_counter() - t0,
    }


def summary(runs: list[dict]) -> dict:
    """One side of one preset over the seeds: ranges and counts (what the page quotes)."""
    acc = [r["val_acc"] for r in runs]
    reached = [r["steps_to_99"] for r in runs if r["steps_to_99"] is not None]
    out = {
        "seeds": [r["seed"] for r in runs],
        "acc": [min(acc), max(acc)],
        "reached": len(reached),
        "steps_to_99": [min(reached), max(reached)] if reached else None,
        "steps": runs[0]["steps"],
        "seconds": [min(r["seconds"] for r in runs), max(r["seconds"] for r in runs)],
    }
    phases = [r["phase_change"] for r in runs if r["phase_change"] is not None]
    out["phase_change"] = [min(phases), max(phases)] if phases else None
    out["phase_found"] = len(phases)
    last = [r["scores"][-1] for r in runs]  # the last layer's heads
    first = [r["scores"][0] for r in runs]
    out["induction_last"] = _span([max(h["induction"] for h in layer) for layer in last])
    out["prev_first"] = _span([max(h["prev"] for h in layer) for layer in first])
    apart = [h["apart"] for layer in first for h in layer if "apart" in h]
    out["apart"] = _span(apart) if apart else None
    return out


def _span(values: list[float]) -> list[float]:
    return [round(min(values), 3), round(max(values), 3)]


def fmt_range(pair, digits: int = 3) -> str:
    if pair is None:
        return "never"
    lo, hi = pair
    return f"{lo:.{digits}f}" if lo == hi else f"{lo:.{digits}f}–{hi:.{digits}f}"


def main() -> int:
    import torch

    from attn_core import lab

    ap = argparse.ArgumentParser()
    ap.add_argument("--presets", default=",".join(lab.PRESETS))
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    names = [n for n in args.presets.split(",") if n]
    print(
        f"# python benchmarks/lab_presets.py, {datetime.date.today()}, torch {torch.__version__}, "
        f"{os.cpu_count()} CPUs, {args.workers} runs at a time, one thread each"
    )
    print("# a shared, noisy 2-core VM (other work ran meanwhile): the seconds are wall times under that load;")
    print(f"# accuracies and steps do not depend on it (deterministic for a seed). Seeds {list(SEEDS)}.")
    jobs = [(n, side, seed) for n in names for side in (0, 1) for seed in SEEDS]
    with ProcessPoolExecutor(args.workers) as pool:
        results = list(pool.map(one, jobs))
    for name in names:
        record = {"preset": name}
        for side in "ab":
            runs = [r for r in results if r["preset"] == name and r["side"] == side]
            s = summary(runs)
            record[side] = s
            extra = ""
            if name == "induction":
                extra = (
                    f"  phase change {fmt_range(s['phase_change'], 0)} ({s['phase_found']}/5)"
                    f"  induction (last layer) {fmt_range(s['induction_last'], 2)}"
                    f"  previous-token (first layer) {fmt_range(s['prev_first'], 2)}"
                )
            if s["apart"] is not None:
                extra += f"  heads apart (total variation from the others) {fmt_range(s['apart'], 2)}"
            print(
                f"{name:<10} {side.upper()}  steps {s['steps']:5d}  held-out acc {fmt_range(s['acc'])}"
                f"  99 % on {s['reached']}/5 after {fmt_range(s['steps_to_99'], 0)} steps"
                f"  {fmt_range(s['seconds'], 1)} s/run{extra}"
            )
        print("RESULT " + json.dumps(record), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
