"""The command line run from a test, either way it is run: ``in_process`` calls ``main`` in the test's own process
(fast; an exception escaping it fails the test with its traceback), ``interpreter`` starts ``python -m attn_core`` (the
entry as a user types it, where the shell's bytes become ``sys.argv``). Both give (exit status, stdout, stderr)."""

from __future__ import annotations

import os
import subprocess
import sys

from attn_core.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def in_process(capsys, argv) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exited:  # argparse's own refusals exit; the commands' checks return
        code = exited.code
    out = capsys.readouterr()
    return code, out.out, out.err


def interpreter(argv) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "attn_core", *argv], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False
    )
    return done.returncode, done.stdout, done.stderr
