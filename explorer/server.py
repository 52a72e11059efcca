"""What one server process does once for every session it serves: a class shares it.

- The garbage collector. Streamlit runs ``gc.collect(2)`` after every script run; a full pass
  walks every tracked object, and with torch, plotly, pandas and transformers imported that is
  millions of objects and hundreds of ms of held GIL per rerun: 30 students queue behind it.
  Once the long-lived modules are imported we move what is alive into the permanent generation
  (``gc.freeze()``), so a pass only walks what the runs themselves made. The memory cost is the
  garbage that happened to be alive at the freeze, which is never collected: measured in
  ``benchmarks/results/class_load_cpu.txt``.
- Every offered model (the bundled encoder first, then the shipped decoder and any others) loads and
  is warmed in a background thread from the server's first script run, one after another, so nobody
  waits for one on its page and no script run computes a model's probe-set passes; the compiled kernels
  (``attn_core.kernels.native``) are built (or read from the disk cache) in another, so no
  learner's request pays for the compiler. The warm-up costs about 3.7 s of CPU; ``ATTN_EXPLORER_WARM=0`` skips
  it (a server for one person, the test suite's short-lived servers): the bundled model then loads cold, and
  each page computes what it asks for when it asks.
- Then what the tour's lessons and the Lab's presets ask for is computed ahead and kept (``explorer.classroom.ahead``);
  ``ATTN_EXPLORER_WARM=models`` warms the models and skips that (the test suite's shared servers).
- One torch thread per operation (``ATTN_SERVER_THREADS``, default 1). The server's tensors are a
  sentence's (tens of tokens): splitting one operation across the machine's cores gains nothing,
  and when the cores are busy (another student's rerun, a Lab training, the teacher's sweep) each
  operation waits at a barrier for a thread the scheduler has not run: on this 2-core machine, with
  the cores loaded, a Variants error curve took 0.6-2.8 s with two threads against 50 ms with one
  (``benchmarks/results/rerun_cost_cpu.txt``). The heavy jobs run in worker processes with settings
  of their own.
- One wake-up of Streamlit's event loop per burst of a script run's messages instead of one per element
  (``explorer/base/relay.py``): 12-15 % less CPU per rerun (``benchmarks/results/rerun_cost_cpu.txt``).
"""

from __future__ import annotations

import os
import threading

from explorer.base.heap import freeze_heap
from explorer.base.runtime import serving

THREADS_ENV = "ATTN_SERVER_THREADS"
WARM_ENV = "ATTN_EXPLORER_WARM"

_lock = threading.Lock()
_prepared = False


def prepare() -> None:
    """Import the heavy modules every page uses and freeze the heap: once per process."""
    global _prepared
    with _lock:
        if _prepared:
            return
        _prepared = True
    import pandas  # noqa: F401
    import plotly.graph_objects  # noqa: F401
    import torch

    if serving():  # a server's process, not a test's (AppTest runs the app inside pytest, which has its own needs)
        torch.set_num_threads(server_threads())
        from explorer.base import relay

        relay.install()
    import attn_core.bench
    import attn_core.export  # noqa: F401
    from attn_core.kernels import native
    from explorer import figures  # noqa: F401

    freeze_heap()
    start_models()
    native.build_in_background()


def start_models() -> None:
    """A server: every offered model loaded and warmed in the background, then the tour's lessons and the Lab's
    presets computed ahead (``explorer.classroom.ahead``). ``ATTN_EXPLORER_WARM=models``: the models only; ``0``:
    neither, and
    no model is loaded before a page asks for one (a server that lives a few seconds and opens no model page pays no
    import of transformers). A test's process: the bundled model, cold (each page asks only what it shows)."""
    from explorer.model import real

    warm = os.environ.get(WARM_ENV, "1")
    if serving() and warm == "0":
        return  # real.model() starts a model's load on its first request
    if not serving():
        real.start_loading()
        return
    loading = real.load_every_offered()
    if warm != "models":
        from explorer.classroom import ahead

        ahead.start(loading)


def server_threads() -> int:
    """Torch threads per operation in the server process: ``ATTN_SERVER_THREADS`` (1 to the CPU count),
    else 1."""
    try:
        n = int(os.environ.get(THREADS_ENV, "1"))
    except ValueError:
        return 1
    return min(max(1, n), os.cpu_count() or 1)
