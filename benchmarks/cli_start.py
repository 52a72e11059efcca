"""What starting ``python -m attn_core`` costs: the CPU seconds of one process from its start to its exit, for two
checkouts alternated (every Lab worker, every sweep's child and every command-line run pays it).

    python benchmarks/cli_start.py --before ../old-checkout --after . --runs 5

The Lab worker (``train --serve``) gets an empty input, so it ends as soon as it is ready for its first run."""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys

COMMANDS = (["train", "--serve"], ["bench", "--help"])


def cpu_s(checkout: str, args: list[str]) -> float:
    """User and system seconds of one ``python -m attn_core ARGS`` run in ``checkout``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # compiled modules kept, as a server
    subprocess.run(
        [sys.executable, "-m", "attn_core", *args],
        cwd=checkout,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        env=env,
        check=True,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", default=".")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    seen: dict[tuple[str, str], list[float]] = {}
    for name, checkout in (("before", args.before), ("after", args.after)):  # each compiles its modules once
        for command in COMMANDS:
            cpu_s(checkout, command)
    for _ in range(args.runs):
        for name, checkout in (("before", args.before), ("after", args.after)):
            for command in COMMANDS:
                seen.setdefault((name, " ".join(command)), []).append(cpu_s(checkout, command))
    for (name, command), values in seen.items():
        listed = " ".join(f"{v:.2f}" for v in values)
        print(f"{name:7} {command:14} median {statistics.median(values):.2f} s  all {listed}")


if __name__ == "__main__":
    main()
