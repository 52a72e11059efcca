"""Each answer's round trip to the class poll's store outside the app: RedisStore.answer (one Lua
script) against a fresh local redis-server, from one plain process, beside the in-memory store.
Interleaved rounds; percentiles over all calls. The class benchmark reports the same call timed
inside the loaded app servers (``class_load.py --lesson``: poll_answer_ms).

    python benchmarks/poll_store_bench.py --rounds 5 --calls 400
"""

from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import replicas
from class_load import summary

from attn_core.classroom.redis_store import RedisStore
from attn_core.classroom.store import Polls

QUESTION = ("steps", (("heads", 1), ("sentence", "Life is short, eat dessert first")), 0, 1)
META = {"label": "steps · Life is short, eat dessert first · 'is'", "tokens": [f"{i} w{i}" for i in range(6)]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=400)
    args = ap.parse_args()
    server = replicas.RedisServer().start()
    try:
        stores = {"redis": RedisStore(server.url), "memory": Polls()}
        times: dict[str, list[float]] = {k: [] for k in stores}
        for r in range(args.rounds):
            for name, store in stores.items():  # interleaved: the same machine state for both
                for i in range(args.calls):
                    t0 = time.perf_counter()
                    store.answer("bench", QUESTION, f"s{r}-{i % 100}", i % 6, META)
                    times[name].append(time.perf_counter() - t0)
        for name, values in times.items():
            us = {k: round(v * 1e6) if isinstance(v, float) else v for k, v in summary(values).items()}
            print(f"{name:>7} answer round trip (µs): {us}")
        print(f"load average: {os.getloadavg()} on {os.cpu_count()} CPUs")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
