"""Where a replica's time goes when a class saturates it: ``class_load.py --lesson`` runs, and
py-spy samples every replica's threads (only those holding the GIL with ``--gil``: what serialises
a Streamlit process) for a while in the middle of the class. The collapsed stacks are summed into
the frames with the largest share of samples, inclusive (anywhere on the stack) and as the leaf.

    pip install py-spy==0.4.3
    python benchmarks/class_profile.py --students 100 --replicas 1 --duration 150 --after 80 --seconds 45 \
        --out benchmarks/results/class_load/capacity/profile_100x1
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import time

import psutil

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def replicas_of(proc: psutil.Process) -> list[int]:
    return [c.pid for c in proc.children(recursive=True) if "streamlit" in " ".join(c.cmdline())]


def summarise(paths: list[str], top: int = 30) -> str:
    inclusive: collections.Counter = collections.Counter()
    leaf: collections.Counter = collections.Counter()
    total = 0
    for path in paths:
        with open(path) as f:
            for line in f:
                stack, _, count = line.rstrip("\n").rpartition(" ")
                if not stack:
                    continue
                n = int(count)
                frames = [re.sub(r":\d+\)$", ")", fr) for fr in stack.split(";")]  # per function, not per line
                frames = [fr for fr in frames if not fr.startswith(("process ", "thread "))]
                total += n
                for fr in set(frames):
                    inclusive[fr] += n
                if frames:
                    leaf[frames[-1]] += n
    out = [f"samples: {total}"]
    for name, counter in (("inclusive (anywhere on the stack)", inclusive), ("leaf (self)", leaf)):
        out.append(f"\n{name}:")
        out += [f"  {100 * c / max(1, total):5.1f} %  {fr}" for fr, c in counter.most_common(top)]
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--students", type=int, default=100)
    ap.add_argument("--replicas", type=int, default=1)
    ap.add_argument("--duration", type=float, default=150.0)
    ap.add_argument("--after", type=float, default=80.0, help="seconds after the start before sampling")
    ap.add_argument("--seconds", type=int, default=45, help="seconds of sampling")
    ap.add_argument("--gil", action="store_true", help="only the threads holding the GIL")
    ap.add_argument("--out", required=True, help="folder: the raw stacks, the summary, the class's JSON")
    args = ap.parse_args()
    spy = shutil.which("py-spy")
    if spy is None:
        raise SystemExit("py-spy is not installed: pip install py-spy==0.4.3")
    os.makedirs(args.out, exist_ok=True)
    cmd = [sys.executable, os.path.join(ROOT, "benchmarks", "class_load.py"), "--replicas", str(args.replicas)]
    cmd += ["--students", str(args.students), "--duration", str(args.duration), "--lesson", "hall"]
    cmd += ["--sweep-after", "-1", "--linger", "5", "--json", os.path.join(args.out, "class.json")]
    load = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL)
    time.sleep(args.after)
    pids = replicas_of(psutil.Process(load.pid))
    paths = [os.path.join(args.out, f"replica{i + 1}.stacks.txt") for i in range(len(pids))]
    spies = []
    for pid, path in zip(pids, paths, strict=True):
        sc = [spy, "record", "--pid", str(pid), "--duration", str(args.seconds), "--rate", "50", "--format", "raw"]
        sc += ["--output", path, "--nonblocking"] + (["--gil"] if args.gil else [])
        spies.append(subprocess.Popen(sc, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    for s in spies:
        s.wait()
    load.wait()
    text = summarise([p for p in paths if os.path.exists(p)])
    with open(os.path.join(args.out, "summary.txt"), "w") as f:
        f.write(f"{args.students} students, {args.replicas} replica(s), py-spy {args.seconds} s at 50 Hz")
        f.write(f"{' (GIL holders only)' if args.gil else ''}, from {args.after:.0f} s into the class\n{text}\n")
    print(text)


if __name__ == "__main__":
    main()
