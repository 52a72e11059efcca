"""``python -m tests.gated_heavy GATE``: the real heavy worker (``python -m attn_core.heavy``) held back until the
file GATE exists, before it reads its first request (tests/app/test_heavy_page.py): a page is then seen while its
job is certainly still computing, without timing. A module, so that the fork server can start it as any worker."""

import os
import runpy
import sys
import time

while not os.path.exists(sys.argv[1]):
    time.sleep(0.05)
sys.argv = ["attn_core.heavy"]
runpy.run_module("attn_core.heavy", run_name="__main__")
