"""The order the suite's workers take its files in (tests/file_order.py): each file once, a browser file beside a
computing one while both kinds are left, the longest of a kind first."""

from __future__ import annotations

import file_order


def played(queue: list[str], seconds: dict[str, float], workers: int = 2) -> list[tuple[float, float, str]]:
    """The queue taken as xdist's loadfile takes it: the next file to whichever worker frees first."""
    free_at, spans = [0.0] * workers, []
    for f in queue:
        w = min(range(workers), key=free_at.__getitem__)
        spans.append((free_at[w], free_at[w] + seconds[f], f))
        free_at[w] += seconds[f]
    return spans


def browser_overlap(spans) -> float:
    """Seconds during which two browser files ran at once."""
    b = [(s, e) for s, e, f in spans if file_order.waits(f)]
    return sum(max(0.0, min(e1, e2) - max(s1, s2)) for i, (s1, e1) in enumerate(b) for s2, e2 in b[i + 1 :])


SECONDS = {
    "tests/browser/test_a.py": 100.0,
    "tests/browser/test_b.py": 80.0,
    "tests/browser/test_c.py": 20.0,
    "tests/unit/test_x.py": 90.0,
    "tests/unit/test_y.py": 60.0,
    "tests/app/test_z.py": 50.0,
}


def test_each_file_once_and_the_browser_files_beside_computing_ones():
    queue = file_order.order(list(SECONDS), SECONDS)
    assert sorted(queue) == sorted(SECONDS)
    assert browser_overlap(played(queue, SECONDS)) == 0.0
    plain = sorted(SECONDS)  # the browser files first, as sorted by name: they run side by side
    assert browser_overlap(played(plain, SECONDS)) > 0.0


def test_the_longest_of_a_kind_first_and_an_unmeasured_file_counted_at_the_default():
    queue = file_order.order([*SECONDS, "tests/unit/test_new.py"], SECONDS)
    browsers = [f for f in queue if file_order.waits(f)]
    assert browsers == ["tests/browser/test_a.py", "tests/browser/test_b.py", "tests/browser/test_c.py"]
    computing = [f for f in queue if not file_order.waits(f)]
    assert computing == ["tests/unit/test_x.py", "tests/unit/test_y.py", "tests/app/test_z.py", "tests/unit/test_new.py"]


def test_the_measured_times_are_read_and_a_missing_record_is_no_error(tmp_path, monkeypatch):
    assert file_order.measured()["tests/browser/test_readable.py"] > 0
    monkeypatch.setattr(file_order, "DURATIONS", str(tmp_path / "none.json"))
    assert file_order.measured() == {}
    (tmp_path / "bad.json").write_text("[1, 2]")
    monkeypatch.setattr(file_order, "DURATIONS", str(tmp_path / "bad.json"))
    assert file_order.measured() == {}
