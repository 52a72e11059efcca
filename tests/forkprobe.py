"""``python -m tests.forkprobe CODE``: a child for the fork server's tests (tests/unit/test_forked_workers.py).
It says what it is (its argv, name, parent, environment, random draws, stream encodings), echoes one
line of its input, and exits with status ``CODE``."""

import json
import os
import random
import sys

import torch

print(
    json.dumps(
        {
            "argv": sys.argv[1:],
            "name": __name__,
            "pid": os.getpid(),
            "parent": os.environ.get("ATTN_PARENT_PID"),
            "unbuffered": os.environ.get("PYTHONUNBUFFERED"),
            "test": os.environ.get("PYTEST_CURRENT_TEST"),
            "probe": os.environ.get("ATTN_FORK_PROBE"),
            "models": os.environ.get("ATTN_EXPLORER_MODELS"),
            "torch": torch.rand(4).tolist(),
            "random": random.random(),
            "sid": os.getsid(0),
        }
    ),
    flush=True,
)
line = sys.stdin.readline()
print(json.dumps({"echo": line.rstrip("\n")}, ensure_ascii=False), flush=True)
print("a line on stderr", file=sys.stderr, flush=True)
sys.exit(int(sys.argv[1]))
