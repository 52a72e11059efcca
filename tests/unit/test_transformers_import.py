"""transformers' top module resolves a name on first use and is not safe for threads: a fresh server's first loads
(the model loader's thread and a job's at once) saw "module 'transformers' has no attribute 'AutoConfig'". The
engine's import (``attn_core.models.locate._import_transformers``) resolves the names it uses once, one thread at a
time. Each case runs in a fresh interpreter, the only place where transformers is not imported yet."""

from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NAMES = ["AutoConfig", "AutoTokenizer", "AutoModelForCausalLM", "AutoModel"]

RACE = """
import json, sys, threading
from attn_core.models import locate
use_engine = sys.argv[1] == "engine"
names, errors, start = json.loads(sys.argv[2]) * 4, [], threading.Barrier(16)
def first_use(name):
    start.wait()  # every thread's first use at once
    try:
        if use_engine:
            getattr(locate._import_transformers(), name)
        else:
            import transformers
            getattr(transformers, name)
    except Exception as err:
        errors.append(type(err).__name__)
threads = [threading.Thread(target=first_use, args=(n,)) for n in names]
for t in threads: t.start()
for t in threads: t.join()
print(json.dumps(errors))
"""


def first_uses(how: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", RACE, how, json.dumps(NAMES)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_sixteen_threads_first_use_transformers_through_the_engine_without_an_error():
    assert first_uses("engine") == []  # the same threads importing transformers themselves: 10 or 11 of 12 failed
