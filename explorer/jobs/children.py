"""The background jobs' child processes: started at the lowest CPU priority (``spawn``), their output
read as JSON lines (``JsonLines``), the idle ones kept for reuse (``Idle``), and none outliving this process.

Every child is started from one thread that lives as long as the process (a child may ask for
Linux's parent-death signal, which follows the *thread* that started it; the job threads come and
go) and learns its parent's pid (``ATTN_PARENT_PID``); at exit, and on SIGTERM where nothing else
handles it, every child still alive is asked to end and killed after a grace period (``end_children``).
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable

from explorer.jobs.forked import Forks

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the project's folder


class JsonLines:
    """The JSON objects a child process prints, one a line, as they come; any other line (a
    warning, a traceback's last line) is kept as ``last_other``: the reason, if the child fails."""

    def __init__(self, stream) -> None:
        self.stream, self.last_other = stream, ""

    def __iter__(self):
        for line in self.stream:
            try:
                item = json.loads(line)
            except ValueError:
                item = None
            if isinstance(item, dict):
                yield item
            else:
                self.last_other = line.strip() or self.last_other


def lowest_priority(cmd: list[str]) -> list[str]:
    """The command under ``nice -n 19`` where there is one: the server's reruns come first."""
    nice = shutil.which("nice")
    return [nice, "-n", "19", *cmd] if nice else cmd


class _Starter:
    """Runs each ``Popen`` on one thread that lives as long as the process (the main thread's calls
    run where they are): a child's parent-death signal fires when the thread that started it ends."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests: queue.Queue = queue.Queue()
        self.thread: threading.Thread | None = None

    def __call__(self, make: Callable[[], subprocess.Popen]) -> subprocess.Popen:
        if threading.current_thread() is threading.main_thread():
            return make()
        with self.lock:
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._serve, name="child-starter", daemon=True)
                self.thread.start()
        box: list = []
        done = threading.Event()
        self.requests.put((make, box, done))
        done.wait()
        if isinstance(box[0], Exception):
            raise box[0]
        return box[0]

    def _serve(self) -> None:
        while True:
            make, box, done = self.requests.get()
            try:
                box.append(make())
            except Exception as err:  # noqa: BLE001 (handed to the caller, raised there)
                box.append(err)
            done.set()


_START = _Starter()
_CHILDREN: list[subprocess.Popen] = []  # every child started here (the ended ones dropped as more start)
_CHILDREN_LOCK = threading.Lock()
_CLOSED = threading.Event()  # set by end_children: this process is ending, no child starts any more


def lowest_group(pid: int) -> bool:
    """Put ``pid``'s session, a scheduling group of Linux's autogroup, at the lowest weight (nice 19).

    Where autogroup is on (most desktop and server kernels), each session is a group and the groups
    share the CPU equally; a process's own nice value only orders it within its group. A worker at
    nice 19 in its server's session still took that session's share against the other replica and
    everything else on the machine: a class of 100 through 2 replicas had p95 666.6 ms with the job
    workers there and 311.1 ms with them in groups of their own at nice 19
    (``benchmarks/results/class_capacity_cpu.txt``). False where the kernel has no autogroup, or the
    group cannot be weighted."""
    try:
        with open(f"/proc/{pid}/autogroup", "w") as f:
            f.write("19")
    except OSError:
        return False
    return True


def _launch_fork_server(cmd: list[str], fd: int) -> subprocess.Popen:
    """The fork server (``explorer.jobs.forkserver``), a child like the others: ended with this process."""
    proc = _START(lambda: subprocess.Popen(lowest_priority(cmd), cwd=ROOT, pass_fds=(fd,), start_new_session=True))
    lowest_group(proc.pid)
    _keep(proc)
    return proc


_FORKS = Forks(_launch_fork_server)


def spawn(cmd: list[str], *, stdin: bool = False, own_group: bool = False, fork: bool = False) -> subprocess.Popen:
    """A child at the lowest priority in the project's folder, unbuffered; its stderr joins its
    stdout (one pipe, read to the end: a chatty child can never block on a full one). It is ended
    with this process (``end_children``). ``own_group``: a session of its own at the lowest weight
    (``lowest_group``), for a worker that ends itself with this process (``attn_core.command.die_with_parent``):
    outside this process group, a signal to the group no longer reaches it. ``fork``: such a child
    (``python -m module ...`` in a group of its own: a forked child cannot join this process's session) forked from
    the fork server where it can be (``explorer.jobs.forked``), without the seconds of its imports; else started
    afresh."""
    if _CLOSED.is_set():
        raise OSError("this process is ending its background jobs")
    env = dict(os.environ, PYTHONUNBUFFERED="1", ATTN_PARENT_PID=str(os.getpid()))
    proc = _FORKS.start(cmd, env, own_group, stdin) if fork and own_group else None
    if proc is None:
        proc = _START(
            lambda: subprocess.Popen(
                lowest_priority(cmd),
                cwd=ROOT,
                env=env,
                stdin=subprocess.PIPE if stdin else None,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                start_new_session=own_group,
            )
        )
        if own_group:
            lowest_group(proc.pid)
    _keep(proc)
    return proc


def _keep(proc) -> None:
    """Count ``proc`` among the children ended with this process; if that end has begun, end it now."""
    with _CHILDREN_LOCK:
        closed = _CLOSED.is_set()
        if not closed:
            _CHILDREN[:] = [p for p in _CHILDREN if p.poll() is None]
            _CHILDREN.append(proc)
    if closed:  # started while the process was ending its children: it would outlive them
        proc.kill()
        proc.wait()
        raise OSError("this process is ending its background jobs")


def end_children(grace: float = 2.0) -> None:
    """End every child still alive: woken (should one be paused) and asked to end, then killed
    after ``grace`` seconds. No child starts after this (``spawn`` raises OSError): a job's thread that
    was about to start one would leave it running past the end."""
    with _CHILDREN_LOCK:
        _CLOSED.set()
        procs = [p for p in _CHILDREN if p.poll() is None]
    for proc in procs:
        try:
            proc.send_signal(signal.SIGCONT)
            proc.terminate()
        except OSError:
            pass
    deadline = time.time() + grace
    for proc in procs:
        try:
            proc.wait(max(0.0, deadline - time.time()))
        except subprocess.TimeoutExpired:
            proc.kill()
            try:
                proc.wait(5.0)
            except subprocess.TimeoutExpired:
                pass


def _on_sigterm(signum, frame) -> None:
    end_children()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


atexit.register(end_children)
if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
    signal.signal(signal.SIGTERM, _on_sigterm)  # under Streamlit, its own handler ends the server: atexit runs


class Idle:
    """Children waiting to be reused; one that has waited longer than ``idle_s()`` seconds is ended
    (its memory returned). A reaper thread runs while any waits."""

    def __init__(self, idle_s: Callable[[], float], name: str) -> None:
        self.idle_s, self.name = idle_s, name
        self.lock = threading.Lock()
        self.waiting: list[tuple[subprocess.Popen, float]] = []  # each child and since when it waits
        self.reaper: threading.Thread | None = None

    def take(self) -> subprocess.Popen | None:
        """A live waiting child, or None."""
        with self.lock:
            while self.waiting:
                proc, _ = self.waiting.pop()
                if proc.poll() is None:
                    return proc
        return None

    def give(self, proc: subprocess.Popen) -> None:
        with self.lock:
            self.waiting.append((proc, time.time()))
            if self.reaper is None:
                self.reaper = threading.Thread(target=self._reap, name=self.name, daemon=True)
                self.reaper.start()

    def _reap(self) -> None:
        while True:
            time.sleep(min(self.idle_s() / 4, 10.0))
            with self.lock:
                old = [(p, t) for p, t in self.waiting if time.time() - t > self.idle_s()]
                self.waiting = [(p, t) for p, t in self.waiting if (p, t) not in old]
                if not self.waiting:
                    self.reaper = None
            for proc, _ in old:
                proc.terminate()
            if self.reaper is None:
                return
