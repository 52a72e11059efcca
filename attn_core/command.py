"""What every subcommand of ``python -m attn_core`` (``attn_core.cli``; ``attn_core.bench`` on its own) shares: a
parser whose errors are one line, and running a command so that a bad argument, a missing file or an allocator's
refusal exits with status 2 and one line on stderr, never a traceback."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from .errors import AttentionConfigError

PROG, DESCRIPTION = "python -m attn_core", "Attention, every step traced."
TEXT_ARGS = ("sentence", "source", "model")  # the arguments that carry text from the command line


class Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, no usage dump
        self.exit(2, f"{self.prog}: error: {message}\n")


def model_text_args(p: argparse.ArgumentParser, text: str, models: str) -> None:
    """The positional text (``text``: its name), ``--model`` (``models``: which ones, and the default) and ``--json``
    that the model commands share."""
    p.add_argument(text)
    p.add_argument("--model", default="", help=f"{models} name or a directory")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def check_text(args: argparse.Namespace) -> None:
    """Text from the command line must be UTF-8: bytes that are not arrive as lone surrogates
    and would break the JSON and the terminal output later."""
    for name in TEXT_ARGS:
        value = getattr(args, name, None)
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise AttentionConfigError(name, "not_utf8") from None


def _fail(text: str) -> int:
    print(f"error: {text}", file=sys.stderr)
    return 2


def run(command: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """``command(args)``'s exit status; the errors a user can cause become one line and status 2."""
    try:
        check_text(args)
        return command(args)
    except AttentionConfigError as err:
        return _fail(str(err))
    except MemoryError:
        return _fail("out of memory. Use smaller settings: shorter lengths, a smaller batch, fewer heads.")
    except RuntimeError as err:  # torch's allocator refusing a tensor: one line, not its traceback
        if "alloc" not in str(err).lower() and "out of memory" not in str(err).lower():
            raise
        first = str(err).split("DefaultCPUAllocator:")[-1].splitlines()[0].strip()[:160]
        return _fail(f"out of memory ({first}). Use shorter lengths, a smaller batch or fewer heads.")
    except BrokenPipeError:  # e.g. piped into `head`
        sys.stderr.close()
        return 0
    except OSError as err:  # a file that cannot be written, a directory that is missing
        where = f" '{err.filename}'" if getattr(err, "filename", None) else ""
        return _fail(f"cannot use{where}: {err.strerror or err}")


def die_with_parent() -> None:
    """End this process when the one that started it ends, whatever this one is doing: Linux's parent-death signal
    (SIGKILL), and wherever that is missing, a thread that looks every second for a new parent. Called at the start
    of every background child (the Lab's and the heavy jobs' workers, a sweep's child, the fork server and each
    child it forks). The parent is ``ATTN_PARENT_PID`` (set by the server's ``explorer.jobs.children.spawn``) or
    else whichever started this process."""
    import ctypes
    import os
    import signal
    import sys
    import threading
    import time

    try:
        parent = int(os.environ.get("ATTN_PARENT_PID", ""))
    except ValueError:
        parent = os.getppid()
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # it ended before the signal was asked for
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()
