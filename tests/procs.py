"""What the tests of background processes look at: whether a process is gone, and its scheduling group's weight."""

from __future__ import annotations

import time

import psutil


def gone(pid: int) -> bool:
    """No such process, or only its exit status is left (a zombie no one has reaped yet)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def wait_gone(pid: int, timeout: float = 60.0) -> bool:
    """Whether ``pid`` is gone within ``timeout`` seconds."""
    deadline = time.time() + timeout
    while not gone(pid) and time.time() < deadline:
        time.sleep(0.1)
    return gone(pid)


def nice_of(text: str) -> int | None:
    """The nice value in a ``/proc/<pid>/autogroup`` file ("/autogroup-42 nice 19"); None for an empty one: a
    session the kernel gave no group (the first session of a container, whose init never started one, as on CI's
    machines)."""
    words = text.split()
    return int(words[-1]) if words else None


def group_nice(pid: int) -> int | None:
    """The nice value of ``pid``'s autogroup; None where it is in none (no file: a kernel without autogroup)."""
    try:
        with open(f"/proc/{pid}/autogroup") as f:
            return nice_of(f.read())
    except OSError:
        return None
