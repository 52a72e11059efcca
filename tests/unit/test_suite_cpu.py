"""benchmarks/suite_cpu.py: the suite's CPU by test and by kind of process."""

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from benchmarks import suite_cpu


@pytest.mark.parametrize(
    ("name", "cmdline", "expected"),
    [
        ("chromium-headless-shell", ["/usr/bin/chromium-headless-shell", "--type=renderer"], "chromium"),
        ("python3", [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", "8501"], "streamlit server"),
        ("python3", [sys.executable, "-m", "attn_core", "train", "--serve"], "python -m attn_core"),
        ("python3", [sys.executable, "-c", "pass"], "python, other"),
        ("node", ["/opt/driver/node", "cli.js", "run-driver"], "playwright driver"),
        ("cc1plus", ["/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus", "-O3"], "compiler"),
        ("redis-server", ["redis-server", "*:6379"], "redis-server"),
    ],
)
def test_a_process_is_told_by_its_name_and_command_line(name, cmdline, expected):
    assert suite_cpu.kind(name, cmdline) == expected


def test_what_a_test_spent_is_each_process_after_less_before():
    before = {(1, 0.0): ("chromium", 1.0), (2, 0.0): ("streamlit server", 5.0), (4, 0.0): ("chromium", 2.0)}
    after = {
        (1, 0.0): ("chromium", 3.5),  # 2.5 s while the test ran
        (2, 0.0): ("streamlit server", 5.0),  # idle
        (3, 9.0): ("chromium", 0.5),  # started during the test
        (4, 0.0): ("chromium", 2.25),  # ended during it, its last reading kept
        (1, 7.0): ("compiler", 1.0),  # pid 1 again, another process: counted from 0
    }
    assert suite_cpu.spent(before, after) == {"chromium": 3.25, "compiler": 1.0}


def test_what_ended_between_readings_is_what_was_waited_for_less_what_was_read():
    me = 100
    before = {(1, 0.0): ("python, other", 2.0, me), (5, 0.0): ("chromium", 4.0, 3)}
    after = {
        (1, 0.0): ("python, other", 2.5, me),  # alive before, ended during the test: its last reading 2.5 s
        (2, 1.0): ("compiler", 0.25, 1),  # started and ended, waited for by 1
        (3, 0.0): ("playwright driver", 1.0, me),  # still alive: not in what was waited for
        (5, 0.0): ("chromium", 4.5, 3),  # ended, but its parent (3) is alive: not waited for by this process
    }
    alive_before, alive_after = frozenset({(1, 0.0), (3, 0.0), (5, 0.0)}), frozenset({(3, 0.0)})
    # this process's ended children took 3.0 s in all (1's, with 2's): 0.25 s of it after their last readings
    assert suite_cpu.between_readings(3.0, me, before, alive_before, after, alive_after) == 0.25
    assert suite_cpu.between_readings(2.0, me, before, alive_before, after, alive_after) == 0.0  # never below 0
    assert suite_cpu.between_readings(0.75, me, {}, frozenset(), {}, frozenset()) == 0.75  # nothing read at all


def test_the_summary_adds_up_by_kind_by_file_and_by_test():
    rows = [
        {"id": "tests/a.py::t1", "wall": 2.0, "cpu": {"chromium": 3.0, "test process": 1.0}},
        {"id": "tests/a.py::t2[x]", "wall": 1.0, "cpu": {"test process": 0.5}},
        {"id": "tests/b.py::t3", "wall": 4.0, "cpu": {"chromium": 1.0, "compiler": 2.0}},
    ]
    s = suite_cpu.summarize(rows)
    assert s["kinds"] == {"chromium": 4.0, "test process": 1.5, "compiler": 2.0}
    assert s["files"]["tests/a.py"] == (4.5, 3.0, {"chromium": 3.0, "test process": 1.5})
    assert s["files"]["tests/b.py"][:2] == (3.0, 4.0)
    assert [t[2] for t in s["tests"]] == ["tests/a.py::t1", "tests/b.py::t3", "tests/a.py::t2[x]"]
    lines = suite_cpu.report(s, top=2)
    assert lines[0].endswith("7.5 s over 3 tests") and "tests/a.py::t2[x]" not in "\n".join(lines)


def test_the_plugin_counts_a_child_process_of_a_test(tmp_path):
    """A test that starts a Python child burning about 0.6 s of CPU: its line says so (the child starts and ends
    within a second: read as "python, other", or not read and counted as ended between readings)."""
    (tmp_path / "test_busy.py").write_text(
        textwrap.dedent(
            """
            import subprocess, sys

            def test_busy():
                burn = "import time\\nt = time.process_time()\\nwhile time.process_time() - t < 0.6: pass"
                subprocess.run([sys.executable, "-c", burn], check=True)

            def test_idle():
                pass
            """
        )
    )
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = tmp_path / "cpu"
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}  # not an xdist worker's name
    started = time.time()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "benchmarks.suite_cpu", "test_busy.py"],
        cwd=tmp_path,
        env={**clean, "PYTHONPATH": root, "SUITE_CPU_DIR": str(out)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {r["id"]: r for r in map(json.loads, (out / "cpu-main.jsonl").read_text().splitlines())}
    busy, idle = rows["test_busy.py::test_busy"]["cpu"], rows["test_busy.py::test_idle"]["cpu"]
    child = busy.get("python, other", 0.0) + busy.get("ended between readings", 0.0)
    assert 0.5 <= child <= 2.0, busy
    assert set(idle) == {"test process"}, idle
    starts = [rows[t]["start"] for t in ("test_busy.py::test_busy", "test_busy.py::test_idle")]
    assert started <= starts[0] + 1e-3 and starts[0] + 0.5 <= starts[1] <= time.time()  # after the busy one's burn
    assert suite_cpu.main([str(out), "--top", "1"]) == 0


def test_the_report_of_an_empty_folder_says_what_to_run(tmp_path, capsys):
    assert suite_cpu.main([str(tmp_path)]) == 2
    assert "-p benchmarks.suite_cpu" in capsys.readouterr().err


def test_a_line_cut_short_is_left_out_and_said(tmp_path, capsys):
    """A worker killed while writing leaves half a line: the report reads the rest and says how many it left out."""
    good = {"id": "tests/a.py::t", "wall": 1.0, "cpu": {"chromium": 2.0}}
    (tmp_path / "cpu-gw0.jsonl").write_text(json.dumps(good) + "\n" + '{"id": "tests/a.py::u", "wa')
    (tmp_path / "cpu-gw1.jsonl").write_text('{"id": 3}\n')
    rows, unreadable = suite_cpu.load(str(tmp_path))
    assert rows == [{**good, "worker": "gw0", "start": None}] and unreadable == 2
    assert suite_cpu.main([str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert "2 line(s)" in captured.err and "2.0 s over 1 tests" in captured.out


def test_the_reader_keeps_a_live_child_and_lets_go_of_an_ended_one():
    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\ntime.sleep(30)"
    child = subprocess.Popen([sys.executable, "-c", burn])
    reader = suite_cpu._Reader()
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # until the child has burnt its 0.3 s (read once a second by the thread)
            seen, alive = reader.snapshot()
            mine = [v for k, v in seen.items() if k[0] == child.pid]
            if mine and mine[0][1] >= 0.3:
                break
            time.sleep(0.1)
        assert mine and mine[0][0] == "python, other" and mine[0][1] >= 0.3, mine
        reader.forget(alive)  # alive: its last reading kept (looked at without reading again)
        assert any(k[0] == child.pid for k in reader.seen)

        def the_childs() -> dict:  # the worker of a whole run has children of its own (a fork server): not counted
            return {k: v for k, v in reader.snapshot()[0].items() if k[0] == child.pid}

        time.sleep(0.2)  # past its burn (read a tick of the clock before it ended, at most)
        reader.read()
        seen = the_childs()
        time.sleep(0.2)
        reader.read()
        assert seen and suite_cpu.spent(seen, the_childs()) == {}  # asleep: nothing between two readings
        child.kill()
        child.wait()
        seen, alive = reader.snapshot()
        assert not any(k[0] == child.pid for k in alive)
        reader.forget(alive)
        assert not any(k[0] == child.pid for k in reader.seen)
    finally:
        reader.stop()
        child.kill()
        child.wait()


def test_the_machines_reading_is_its_busy_and_idle_ticks(tmp_path):
    stat = tmp_path / "stat"
    stat.write_text("cpu  100 2 30 400 5 1 1 3 0 0\ncpu0 50 1 15 200 2 0 0 1 0 0\n")
    reading = suite_cpu.machine_reading(str(stat))
    assert reading["busy"] == 100 + 2 + 30 + 1 + 1 + 3 and reading["idle"] == 400 + 5 and reading["hz"] > 0
    stat.write_text("intr 1 2 3\n")
    assert suite_cpu.machine_reading(str(stat)) is None
    assert suite_cpu.machine_reading(str(tmp_path / "none")) is None


def _lines(path, rows) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_idle_core_seconds_go_to_the_files_the_workers_ran_then(tmp_path):
    """Two workers: gw0 runs a.py from 100 to 110 s; gw1 runs b.py from 100 to 105 and c.py from 106.5 to 110. The
    machine (2 cores, 100 ticks a second) is busy but for 1 core-second in 102-103, 2 in 107-108 and one in 105.5-106.5
    (gw1 between two tests), and idle before the tests, which is not counted."""
    _lines(
        tmp_path / "cpu-gw0.jsonl",
        [{"id": "a.py::x", "wall": 10.0, "cpu": {"test process": 5.0}, "start": 100.0}],
    )
    _lines(
        tmp_path / "cpu-gw1.jsonl",
        [
            {"id": "b.py::y", "wall": 5.0, "cpu": {"test process": 4.0}, "start": 100.0},
            {"id": "c.py::z", "wall": 3.5, "cpu": {"test process": 3.0}, "start": 106.5},
        ],
    )
    idle_at = {99: 200, 102: 100, 105.5: 100, 107: 200}  # idle ticks in the interval that starts there
    times = [98, 99, 100, 101, 102, 103, 104, 105, 105.5, 106.5, 107, 108, 109, 110]
    busy = idle = 0
    machine = []
    for a, b in zip(times, times[1:] + [111]):
        machine.append({"t": a, "busy": busy, "idle": idle, "hz": 100})
        spare = idle_at.get(a, 0)
        busy, idle = busy + round(200 * (b - a)) - spare, idle + spare
    _lines(tmp_path / "machine.jsonl", [*machine[::-1], "cut"])  # out of order, a line cut short
    rows, _ = suite_cpu.load(str(tmp_path))
    got = suite_cpu.idle_by_files(rows, suite_cpu.load_machine(str(tmp_path)))
    assert got["seconds"] == 10.0 and got["read"] == 10.0 and got["idle"] == pytest.approx(4.0)
    assert got["pairs"] == {
        ("a.py", "b.py"): pytest.approx(1.0),
        ("-", "a.py"): pytest.approx(1.0),
        ("a.py", "c.py"): pytest.approx(2.0),
        **{
            k: pytest.approx(0.0) for k in got["pairs"] if k not in {("a.py", "b.py"), ("-", "a.py"), ("a.py", "c.py")}
        },
    }
    assert got["busy_share"] == pytest.approx(16 / 20)
    summary = suite_cpu.summarize(rows)
    summary["idle"] = got
    lines = suite_cpu.report(summary, top=2)
    assert "80.0 % busy, 4.0 core-seconds idle" in lines[-3] and lines[-2].split() == ["2.0", "s", "a.py", "+", "c.py"]


def test_without_the_machines_readings_or_the_tests_starts_there_is_no_idle_section(tmp_path):
    _lines(tmp_path / "cpu-main.jsonl", [{"id": "a.py::x", "wall": 1.0, "cpu": {"test process": 1.0}}])
    rows, _ = suite_cpu.load(str(tmp_path))
    assert rows[0]["start"] is None and rows[0]["worker"] == "main"
    assert suite_cpu.idle_by_files(rows, [{"t": 0, "busy": 0, "idle": 0, "hz": 100}] * 2) == {}
    assert suite_cpu.load_machine(str(tmp_path)) == []
