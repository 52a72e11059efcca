"""``python -m explorer.jobs.forkserver FD``: the process the heavy and Lab workers and the sweeps are forked from.

It imports torch and the engine (``BASE``), and before the first worker of a kind what that kind imports
(``NEEDS``: transformers' model classes for the heavy worker), once; it waits on the
socket ``FD`` (a Unix socketpair with the server, one JSON message a request): ``{"op": "start",
"id", "argv", "env", "own_group"}`` with the child's stdin and stdout ends attached forks a child that
runs ``python -m argv[0] argv[1:]`` as if freshly started (its own session at the lowest weight when
``own_group``, its stderr joined to its stdout, fresh random seeds), answered by ``{"op": "started",
"id", "pid"}``; ``{"op": "signal", "pid", "sig"}`` signals a child of its own (it reaps them, so the
pid cannot have passed to another process); every child's end is told as ``{"op": "exit", "pid",
"code"}`` (a negative code: killed by that signal, as ``subprocess`` says). A worker's start costs a
fork instead of seconds of imports, and the workers share the imported code's memory.

It never computes with torch itself: a fork would copy an OpenMP thread pool's state without its
threads. It ends when the server closes the socket (its children are ended first), and dies with the
server (``attn_core.command.die_with_parent``); each child dies with it in turn.
"""

from __future__ import annotations

import importlib
import io
import json
import os
import select
import signal
import socket
import sys
import time
import traceback

from attn_core.command import die_with_parent
from explorer.jobs.children import lowest_group

BASE = ("torch", "attn_core")  # imported at the start: every worker needs them
# What a worker of each module imports, imported by the fork server before it forks the first one (then kept): a
# server that never starts a heavy worker never pays for transformers. Another module's children import their own.
NEEDS = {
    "attn_core.heavy": (
        "transformers",
        "transformers.models.auto.modeling_auto",
        "transformers.models.auto.tokenization_auto",
        "transformers.models.bert.modeling_bert",
        "transformers.models.gpt2.modeling_gpt2",
        "transformers.models.llama.modeling_llama",
        "attn_core.heavy",
        "attn_core.models",
        "attn_core.explain.staged",
        "attn_core.explain.pair",
        "attn_core.interpret.ablate",
        "attn_core.interpret.patch",
        "attn_core.interpret.decoder",
        "attn_core.why",
        "attn_core.nexttoken.plain",
    ),
    "attn_core": (
        "attn_core.cli",
        "attn_core.bench",
        "attn_core.lab.cli",
        "attn_core.lab.training",
        "attn_core.vision.model",
    ),
}
MAX_MESSAGE = 1 << 20
AHEAD = ".*found in sys.modules after import of package"  # runpy's warning for a module imported ahead, on purpose


def preload(names) -> None:
    """Import what a worker imports; a module that fails here is imported (and fails) in the worker."""
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001, S112 (the worker says why, where it is needed)
            continue


def send(sock: socket.socket, item: dict) -> None:
    try:
        sock.send(json.dumps(item).encode())
    except OSError:
        pass


def child(request: dict, fds: list[int], closing: list[int]) -> int:
    """In the forked child: become ``python -m argv...`` on the given pipes; its exit status."""
    import random
    import runpy
    import warnings

    for fd in closing:
        os.close(fd)
    signal.set_wakeup_fd(-1)
    for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if request.get("own_group"):
        os.setsid()
        lowest_group(os.getpid())
    os.dup2(fds[0], 0)
    os.dup2(fds[1], 1)
    os.dup2(fds[1], 2)
    for fd in fds:
        os.close(fd)
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", write_through=True)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", write_through=True)
    os.environ.clear()
    os.environ.update(request["env"], ATTN_PARENT_PID=str(os.getppid()))
    die_with_parent()  # whatever it runs: the fork server's end is this child's
    random.seed()
    if "numpy.random" in sys.modules:
        sys.modules["numpy.random"].seed()
    if "torch" in sys.modules:
        sys.modules["torch"].seed()
    module, *args = request["argv"]
    sys.argv = [module, *args]
    name(" ".join(request["argv"]))
    warnings.filterwarnings("ignore", message=AHEAD, category=RuntimeWarning)
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as exited:
        return exit_code(exited.code)
    return 0


def name(title: str) -> None:
    """The child's name as ``ps`` and ``top`` show it (15 bytes at most): what it runs, not its fork server's."""
    import ctypes

    try:
        ctypes.CDLL(None).prctl(15, title.encode()[:15], 0, 0, 0)  # PR_SET_NAME
    except (OSError, AttributeError):
        pass


def exit_code(code) -> int:
    if code is None or isinstance(code, int):
        return code or 0
    print(code, file=sys.stderr)
    return 1


def fork(request: dict, fds: list[int], closing: list[int]) -> int:
    """Fork one child for ``request``; its pid."""
    pid = os.fork()
    if pid == 0:
        try:
            code = child(request, fds, closing)
        except BaseException:  # noqa: BLE001 (the child's own traceback, on its output, then its end)
            traceback.print_exc()
            code = 1
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)
    for fd in fds:
        os.close(fd)
    return pid


def reap(sock: socket.socket, kids: set[int]) -> None:
    while kids:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        kids.discard(pid)
        send(sock, {"op": "exit", "pid": pid, "code": os.waitstatus_to_exitcode(status)})


def end(kids: set[int], grace: float = 2.0) -> None:
    """End every child still alive: asked, then killed after ``grace`` seconds."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in kids:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        deadline = time.time() + grace
        while kids and time.time() < deadline:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            kids.discard(pid) if pid else time.sleep(0.05)


def serve(sock: socket.socket) -> int:
    """Answer the server's requests until it closes the socket (see the module's docstring)."""
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # a child's end wakes the loop
    kids: set[int] = set()
    while True:
        ready, _, _ = select.select([sock, wake_r], [], [], 5.0)
        if wake_r in ready:
            os.read(wake_r, 4096)
        reap(sock, kids)
        if sock not in ready:
            continue
        try:
            message, fds, _, _ = socket.recv_fds(sock, MAX_MESSAGE, 2)
        except OSError:
            message, fds = b"", []
        if not message:
            break
        request = json.loads(message)
        if request.get("op") == "start":
            preload(NEEDS.get(request["argv"][0], ()))
            pid = fork(request, fds, [sock.fileno(), wake_r, wake_w])
            kids.add(pid)
            send(sock, {"op": "started", "id": request["id"], "pid": pid})
        elif request.get("op") == "signal" and request.get("pid") in kids:
            os.kill(request["pid"], int(request["sig"]))
    end(kids)
    return 0


def main(argv: list[str]) -> int:
    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is the server's to handle
    sock = socket.socket(fileno=int(argv[0]))
    preload(BASE)
    send(sock, {"op": "ready", "pid": os.getpid()})
    return serve(sock)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
