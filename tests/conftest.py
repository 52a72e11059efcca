import os
import sys
import time

import psutil
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(ROOT, "tests")  # on the path when pytest finds this file itself; not when it is a plugin (-p)
for folder in (ROOT, TESTS):
    if folder not in sys.path:
        sys.path.insert(0, folder)


def pytest_configure(config):
    """Under pytest-xdist (``bash scripts/test.sh`` runs two workers), each worker's torch gets its share of the
    cores: two workers of two threads each on two cores ran the CPU-heavy files ~15 % slower than one thread each
    (``benchmarks/results/suite_time.txt``). So do the processes the tests start (``python -m attn_core``, the
    notebooks' kernels, the servers' job workers), through ``OMP_NUM_THREADS`` in the environment they inherit,
    unless it is set already: twelve files that start them took 7 % less CPU (the same record). Every test
    process runs ``AppTest`` without the costs its harness adds to each run (``apptest_speed``)."""
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if workers:
        import torch

        share = max(1, (os.cpu_count() or 1) // int(workers))
        torch.set_num_threads(share)
        os.environ.setdefault("OMP_NUM_THREADS", str(share))
    import apptest_speed

    apptest_speed.install()  # AppTest without a harness's costs on every run (tests/apptest_speed.py)


@pytest.fixture
def one_thread():
    """torch on one thread in the test process for the test, as the job and training workers run it
    (``attn_core.heavy``, the Lab's): a result compared with a worker's is computed the same way. Some are not the
    same to the last digits on two threads (value zeroing's scores moved by 8e-4 of their size), and a file that
    pytest runs alone gives its process every core."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# How long a process that is ending may take before it counts as left behind; the check's own tests
# (tests/unit/test_no_process_left.py) run a session with a shorter grace, which their planted child outlives.
LEFT_GRACE_S = float(os.environ.get("ATTN_TEST_LEFT_GRACE_S", "20"))


def _running(p: psutil.Process) -> bool:
    try:
        return p.status() != psutil.STATUS_ZOMBIE  # a zombie has ended: only its exit status is left
    except psutil.NoSuchProcess:
        return False


def _named(p: psutil.Process) -> str:
    try:
        return f"pid {p.pid} ({p.status()}): {' '.join(p.cmdline()) or p.name()}"
    except psutil.Error:
        return f"pid {p.pid}"


def processes_left(grace: float = LEFT_GRACE_S) -> list[psutil.Process]:
    """This process's descendants still running once ``grace`` seconds have passed (polled: those
    ending meanwhile are not counted)."""
    me, deadline = psutil.Process(), time.time() + grace
    while True:
        left = [p for p in me.children(recursive=True) if _running(p)]
        if not left or time.time() >= deadline:
            return left
        time.sleep(0.2)


@pytest.fixture(scope="session", autouse=True)
def no_process_left_behind():
    """The suite ends every process it started. At the session's end the app's own children (the
    Lab's workers, a sweep's child: started in this process by AppTest) are ended as a server ends
    them at exit (``explorer.jobs.children.end_children``); any descendant still running after a grace
    period fails the session, each named, and is then killed."""
    yield
    jobs = sys.modules.get("explorer.jobs.children")
    if jobs is not None:
        jobs.end_children()
    left = processes_left()
    if left:
        names = [_named(p) for p in left]
        for p in left:
            try:
                p.resume()
                p.kill()
            except psutil.Error:
                pass
        pytest.fail("processes the tests started were left running:\n  " + "\n  ".join(names), pytrace=False)
