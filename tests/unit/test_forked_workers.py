"""Workers forked from the fork server (``explorer.jobs.forked``, ``explorer.jobs.forkserver``) behave as
workers started afresh: the same answers, their own session at the lowest weight, fresh random draws, their
arguments, input, output and exit status; they end with the fork server; a command the fork server cannot
serve (another environment, not ``python -m``) is started afresh."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import psutil
import pytest
from procs import wait_gone
from tolerance import assert_close

from explorer.jobs import children, forked, heavy

PROBE = [sys.executable, "-m", "tests.forkprobe"]


@pytest.fixture(scope="module")
def module_forks():
    """A fork server for this module's tests alone: what other tests in this process left alive (idle workers of
    another environment) cannot decide whether a start here is forked."""
    forks = forked.Forks(children._launch_fork_server)
    yield forks
    if forks.server is not None:
        forks.server.close()


@pytest.fixture(autouse=True)
def own_forks(module_forks, monkeypatch):
    monkeypatch.setattr(children, "_FORKS", module_forks)
    return module_forks


def probe(code: int = 0, own_group: bool = True):
    proc = children.spawn([*PROBE, str(code)], stdin=True, fork=True, own_group=own_group)
    said = json.loads(proc.stdout.readline())
    return proc, said


def finish(proc, line: str = "") -> list[str]:
    proc.stdin.write(line + "\n")
    proc.stdin.flush()
    rest = proc.stdout.read().splitlines()
    proc.wait(60)
    return rest


def test_a_forked_child_runs_its_module_with_its_arguments_input_output_and_exit_status():
    proc, said = probe(3)
    assert isinstance(proc, forked.Forked)
    server = psutil.Process(psutil.Process(proc.pid).ppid())
    assert server.ppid() == os.getpid() and "explorer.jobs.forkserver" in " ".join(server.cmdline())
    assert said["argv"] == ["3"] and said["name"] == "__main__" and said["pid"] == proc.pid
    assert psutil.Process(proc.pid).name() == "tests.forkprobe"  # as ps shows it (15 bytes of what it runs)
    assert said["parent"] == str(server.pid) and said["unbuffered"] == "1"  # it dies with its parent: the fork server
    assert said["test"] == os.environ["PYTEST_CURRENT_TEST"] and said["probe"] is None  # this moment's environment
    rest = finish(proc, "生命短暂 ✓")
    assert rest == [json.dumps({"echo": "生命短暂 ✓"}, ensure_ascii=False), "a line on stderr"]  # stderr joins stdout
    assert proc.returncode == 3 and proc.poll() == 3


def test_a_forked_child_without_input_reads_an_empty_one():
    """A child asked for without ``stdin`` (a sweep's) reads nothing, as one started afresh does: its input is
    /dev/null, and there is no pipe to write to."""
    proc = children.spawn([*PROBE, "0"], own_group=True, fork=True)
    assert isinstance(proc, forked.Forked) and proc.stdin is None
    said = json.loads(proc.stdout.readline())
    assert said["sid"] == proc.pid
    assert proc.stdout.read().splitlines() == [json.dumps({"echo": ""}), "a line on stderr"]
    assert proc.wait(60) == 0


def test_forked_children_draw_fresh_random_numbers():
    """Each fork starts from the fork server's state: without fresh seeds, every worker would draw the same numbers."""
    draws = []
    for _ in range(2):
        proc, said = probe()
        finish(proc)
        draws.append((said["torch"], said["random"]))
    assert draws[0][0] != draws[1][0] and draws[0][1] != draws[1][1]


def test_a_forked_worker_of_its_own_group_is_at_the_lowest_weight_and_ends_when_told():
    proc, said = probe()
    assert said["sid"] == proc.pid != os.getsid(0)
    assert os.getpriority(os.PRIO_PROCESS, proc.pid) == min(19, os.getpriority(os.PRIO_PROCESS, 0) + 19)
    proc.terminate()
    waiting, _ = probe()
    with pytest.raises(subprocess.TimeoutExpired):  # a wait that times out says so, as Popen's
        waiting.wait(0.001)
    finish(waiting)
    assert proc.wait(60) == -signal.SIGTERM
    proc.kill()  # an ended child is not signalled again (its pid may belong to another process by now)


def test_a_forked_heavy_worker_answers_as_one_started_afresh():
    request = {"kind": "why_weight", "args": {"sentence": "the cat sat on the mat", "layer": 1, "head": 2}, "id": 1}
    request["args"].update(query=2, key=5)
    answers = []
    for fork in (True, False):
        proc = children.spawn(heavy.WORKER, stdin=True, own_group=True, fork=fork)
        assert isinstance(proc, forked.Forked) is fork
        proc.stdin.write(json.dumps(request) + "\n")
        proc.stdin.flush()
        lines = [json.loads(proc.stdout.readline()) for _ in range(2)]
        assert lines[1] == {"end": "ok"}
        answers.append(lines[0]["part"])
        proc.stdin.close()
        assert proc.wait(60) == 0
    same(answers[0], answers[1])


def same(a, b, where: str = "") -> None:
    """Two JSON answers alike: the same keys, lists and words; numbers within the suite's tolerance."""
    assert type(a) is type(b) or {type(a), type(b)} <= {int, float}, where
    if isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for key in a:
            same(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, list) and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in a + b):
        assert_close(a, b, msg=where)
    elif isinstance(a, list):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{where}[{i}]")
    elif isinstance(a, float):
        assert_close([a], [b], msg=where)
    else:
        assert a == b, where


def fork_server_of(proc) -> int:
    return psutil.Process(proc.pid).ppid()


def test_another_environment_gets_a_fork_server_of_its_own_once_the_old_ones_workers_have_ended(monkeypatch):
    first, _ = probe()
    monkeypatch.setenv("ATTN_EXPLORER_MODELS", "tiny=/a/folder")  # read when a model is looked up: the same server
    same, said = probe()
    assert isinstance(same, forked.Forked) and fork_server_of(same) == fork_server_of(first)
    assert said["models"] == "tiny=/a/folder"
    finish(same)
    monkeypatch.setenv("ATTN_FORK_PROBE", "another")  # any other variable may have been read by the imports
    afresh, said = probe()
    assert isinstance(afresh, subprocess.Popen) and psutil.Process(afresh.pid).ppid() == os.getpid()  # first lives
    assert said["probe"] == "another"
    finish(afresh)
    old = fork_server_of(first)
    finish(first)
    new, said = probe()  # the old server's workers have ended: a new one for this environment
    assert isinstance(new, forked.Forked) and fork_server_of(new) != old and said["probe"] == "another"
    assert wait_gone(old), "the old fork server was left running"
    finish(new)


def test_a_command_that_is_not_a_module_or_stays_in_this_session_is_started_afresh():
    plain = children.spawn([sys.executable, "-c", "print('plain')"], stdin=True, own_group=True, fork=True)
    assert isinstance(plain, subprocess.Popen) and plain.stdout.read() == "plain\n"
    plain.wait(60)
    proc, said = probe(own_group=False)  # a fork server's child cannot join this process's session
    assert isinstance(proc, subprocess.Popen) and said["sid"] == os.getsid(0)
    finish(proc)


def test_the_forked_workers_end_with_the_fork_server():
    """A fork server of the test's own (this process's is kept for the other tests), killed."""
    forks = forked.Forks(children._launch_fork_server)  # not the module's: this one is killed
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = forks.start([*PROBE, "0"], env, own_group=True)
    assert json.loads(proc.stdout.readline())["sid"] == proc.pid
    server = psutil.Process(psutil.Process(proc.pid).ppid())
    server.kill()
    assert proc.wait(60) == -signal.SIGKILL  # told by the socket's end
    assert wait_gone(proc.pid), "a forked child outlived its fork server"
    again = forks.start([*PROBE, "0"], env, own_group=True)  # the next start has a new fork server
    try:
        assert json.loads(again.stdout.readline())["parent"] == str(fork_server_of(again)) != str(server.pid)
    finally:
        forks.server.close()
    assert again.wait(60) == -signal.SIGKILL and wait_gone(again.pid)
