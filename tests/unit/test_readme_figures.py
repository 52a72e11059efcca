"""Every figure the README and docs/*.md quote comes from a record under benchmarks/results/.

A figure is a number with a unit (ms, s, MiB, GiB, %, ×) or a range of two ("242–338 ms"). It is found
in a record when a number there, rounded to the text's decimals, is the text's number, on a line
that names the same unit; a range needs both ends in one record; "~N" allows 10 %. Goals ("goal < 0.5 s")
are not measurements and are left out; settings of the code (a cache's budget) are checked against the
code instead (SETTINGS); the one figure computed from settings is computed here (the worst case).
"""

import functools
import math
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"

NUM = r"\d+(?:\.\d+)?"
FIGURE = re.compile(
    rf"(?<![\w.,/=^-])(?P<approx>~)?(?P<a>{NUM})(?:\s?[–-]\s?(?P<b>{NUM}))?\s?(?P<unit>ms|s|MiB|GiB|%|×)(?![\w\d])"
)
UNIT_ON_LINE = {  # how a record's line names the unit
    "ms": re.compile(r"ms\b|_ms\b"),
    "s": re.compile(r"\d\s?s\b|\bs/run|seconds|_s\b|\d_s_"),
    "MiB": re.compile(r"MiB|_mib\b"),
    "GiB": re.compile(r"GiB"),
    "%": re.compile(r"%"),
    "×": re.compile(r"\d\s?[x×]\b|\d\.\d+x|ratio|faster"),
}
GOAL = re.compile(r"(goal[^.;]{0,12}|<\s?|under\s|at most\s)$")
# Settings the README states, each checked against the code that sets it: figure -> (file, text in it).
SETTINGS = {
    "2-5 s": ("benchmarks/class_load.py", "rng.uniform(2, 5)"),
    "192 MiB": ("attn_core/config.py", "MAX_TRACE_BYTES = 192 * 2**20"),
    "2 s": ("scripts/replicas.py", "inter 2s"),
    "99 %": ("attn_core/lab/training.py", "0.99"),  # the threshold the Lab's steps are counted to
}


# "62.96 and 60.23 s", "116.8, 115.7 and 95.5 s": a series whose numbers share the unit written after its last
SERIES = re.compile(
    rf"(?<![\w.,/=^-])(?P<head>(?:{NUM}(?:,\s|\sand\s|\sor\s))+){NUM}\s?(?P<unit>ms|s|MiB|GiB|%|×)(?![\w\d])"
)
# "16 min 5 s": one figure, found only as written (its "5 s" alone would match any line with a 5 and an s)
MIN_S = re.compile(rf"(?<![\w.])\d+ min {NUM} s(?![\w\d])")


def figures(text: str) -> list[dict]:
    """The figures of a Markdown text (bold marks removed), each with what stands before it."""
    text = text.replace("**", "")

    def found(m: re.Match, fields: dict) -> dict:
        before = text[max(0, m.start() - 40) : m.start()]
        return {**fields, "text": m.group(0), "before": before, "line": text.count("\n", 0, m.start()) + 1}

    minutes = list(MIN_S.finditer(text))
    out = [found(m, {"approx": None, "a": m.group(0), "b": None, "unit": "min s"}) for m in minutes]
    free = [m for pattern in (FIGURE, SERIES) for m in pattern.finditer(text)]
    free = [m for m in free if not any(t.start() <= m.start() < t.end() for t in minutes)]  # not in "N min M s"
    for m in free:
        if m.re is FIGURE:
            out.append(found(m, m.groupdict()))
        else:  # "62.96 and 60.23 s": the numbers before the last take its unit (FIGURE finds the last)
            for n in RECORD_NUMBER.finditer(m.group("head")):
                fields = {"approx": None, "a": n.group(0), "b": None, "unit": m.group("unit")}
                out.append({**found(m, fields), "text": f"{n.group(0)} {m.group('unit')}"})
    return out


def _decimals(number: str) -> int:
    return len(number.split(".")[1]) if "." in number else 0


def _records() -> dict[str, list[str]]:
    files = sorted(p for p in RESULTS.rglob("*") if p.is_file() and p.suffix in (".txt", ".csv", ".json"))
    return {str(p.relative_to(ROOT)): p.read_text(errors="replace").splitlines() for p in files}


RECORDS = _records()
RECORD_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?")
PAIR = r"(\d+(?:\.\d+)?)(?:\s*[a-zA-Z]*\s*/\s*(\d+(?:\.\d+)?))?"  # "168 ms / 212 ms": two runs side by side
LABEL = re.compile(r".*\b(p50|p95|p99|median)\b[^;,(]{0,20}$", re.DOTALL)  # the last label before a figure


def _hit(number: str, unit: str, approx: bool, lines: list[str], label: str | None = None) -> bool:
    """Whether a line of the record names ``unit`` and holds ``number`` (with ``label``, right after it)."""
    want, places = float(number), _decimals(number)
    for line in lines:
        if not UNIT_ON_LINE[unit].search(line):
            continue
        if label:
            tokens = [t for pair in re.findall(rf"\b{label}\W{{0,8}}{PAIR}", line) for t in pair if t]
        else:
            tokens = RECORD_NUMBER.findall(line)
        for token in tokens:
            got = float(token)
            if approx and math.isclose(got, want, rel_tol=0.10):
                return True
            if not approx and round(got, places) == want and _decimals(token) >= places:
                return True
    return False


@functools.cache
def _rounded(name: str, unit: str, places: int) -> frozenset[float]:
    """The numbers on the lines of ``RECORDS[name]`` that name ``unit``, each written with at least ``places``
    decimals, rounded to ``places``: what ``_hit`` finds for an exact figure without a label, read once per record
    and unit (``_hit`` read every line again for each of a document's hundreds of figures, 9 s a document)."""
    return frozenset(
        round(float(token), places)
        for line in RECORDS[name]
        if UNIT_ON_LINE[unit].search(line)
        for token in RECORD_NUMBER.findall(line)
        if _decimals(token) >= places
    )


def where(fig: dict, records: dict[str, list[str]] | None = None) -> str | None:
    """The record that holds the figure (both ends of a range in the same one), or None."""
    indexed = records is None  # the records under benchmarks/results/: an exact figure is looked up in _rounded
    records = RECORDS if records is None else records
    for name, lines in records.items():
        if fig["unit"] == "min s":  # as written, minutes and seconds together
            if any(fig["text"] in " ".join(line.split()) for line in lines):
                return name
            continue
        ends = [fig["a"]] + ([fig["b"]] if fig["b"] else [])
        label = LABEL.search(fig["before"])  # "p95 427 ms": a p95 in the record, not any number
        if indexed and not fig["approx"] and not label:
            found = all(float(n) in _rounded(name, fig["unit"], _decimals(n)) for n in ends)
        else:
            found = all(_hit(n, fig["unit"], bool(fig["approx"]), lines, label and label.group(1)) for n in ends)
        if found:
            return name
    return None


DERIVED = re.compile(r"(add up to|worst case is about)\s$")  # computed from the code by the test below


def measured(fig: dict) -> bool:
    return not GOAL.search(fig["before"]) and not DERIVED.search(fig["before"]) and fig["text"] not in SETTINGS


def unrecorded(text: str, records: dict[str, list[str]] | None = None) -> list[str]:
    return [f"line {f['line']}: {f['text']}" for f in figures(text) if measured(f) and where(f, records) is None]


DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
DOCS = {p.relative_to(ROOT).as_posix(): p.read_text() for p in DOC_FILES}


@pytest.mark.parametrize("name", sorted(DOCS))
def test_every_figure_the_docs_quote_is_in_a_record(name):
    missing = unrecorded(DOCS[name])
    assert not missing, f"{name} figures found in no file under benchmarks/results/: " + "; ".join(missing)


def test_the_settings_the_docs_state_are_the_codes():
    quoted = {f["text"] for text in DOCS.values() for f in figures(text)}
    for figure, (path, text) in SETTINGS.items():
        assert figure in quoted, f"{figure} is no longer in the README or docs/: remove it from SETTINGS"
        assert text in (ROOT / path).read_text(), f"the docs say {figure}, but {path} has no {text!r}"


def _adds_up(fig: dict) -> bool:
    return fig["unit"] == "MiB" and fig["before"].endswith("add up to ")


def test_the_caches_budgets_and_the_worst_case_are_the_codes_sums():
    """The budgets of every @bounded cache add up to the docs' figure; the worst case is ~N MiB
    loaded, those budgets, and two views at once at MAX_TRACE_BYTES (all three in one file)."""
    from attn_core.config import MAX_TRACE_BYTES

    budgets = [
        float(x)
        for p in (ROOT / "explorer").rglob("*.py")
        for x in re.findall(r"@bounded\(max_mib=(\d+)", p.read_text())
    ]
    (holder,) = [name for name, text in DOCS.items() if any(_adds_up(f) for f in figures(text))]
    figs = figures(DOCS[holder])
    (together,) = [f for f in figs if _adds_up(f)]
    assert float(together["a"]) == sum(budgets), budgets
    loaded = next(float(f["a"]) for f in figs if f["approx"] and f["unit"] == "MiB")
    worst = (loaded + sum(budgets) + 2 * MAX_TRACE_BYTES / 2**20) / 1024
    (quoted,) = [f for f in figs if f["unit"] == "GiB" and "worst case" in f["before"]]
    assert round(worst, 1) == float(quoted["a"]), (holder, worst, budgets)


@pytest.mark.parametrize(
    ("text", "bad"),
    [
        ("The page redraws in a median 1234–5678 ms.", "1234–5678 ms"),  # a range no record holds
        ("Model load 73.21 s once per server.", "73.21 s"),
        ("It uses ~99999 MiB.", "~99999 MiB"),
        ("p95 427 ms and 4321.5 ms.", "4321.5 ms"),
        ("a median 1.2 ms", "1.2 ms"),  # 1.2 is in the records, but never as a median in ms
        ("took 98765.4 and 675.71 s", "98765.4 s"),  # the first of a series takes the unit written after the last
    ],
)
def test_a_figure_in_no_record_is_caught(text, bad):
    assert unrecorded(text) == [f"line 1: {bad}"]


def test_a_recorded_figure_passes_and_a_goal_is_not_a_figure():
    records = {"r.txt": ["  all  n=1501  p50  74.6 ms  p95  427.1 ms", "median 168 ms / 350 ms"]}
    assert not unrecorded("p95 427 ms, p50 75 ms, from 168–350 ms (goal < 0.5 s)", records)
    assert unrecorded("p95 428 ms", records) and unrecorded("p95 427 s", records)  # another number, another unit
    assert unrecorded("168–351 ms", records)  # one end only
    assert unrecorded("p50 427 ms", records)  # 427 is there, but as a p95


def test_minutes_and_seconds_are_one_figure_found_only_as_written():
    """ "16 min 6 s" is not in a record that says "16 min 5 s", though it has a 6 and an "s" on a line (the loose
    match this replaced passed it); "16 min 5 s" is."""
    records = {"suite_time.txt": ["2239 passed in 965.30 s (16 min 5 s; 16:09 wall), 6 failed"]}
    assert unrecorded("the suite takes 16 min 5 s", records) == []
    assert unrecorded("the suite takes 16 min 6 s", records) == ["line 1: 16 min 6 s"]
    assert [f["text"] for f in figures("in 16 min 5 s and 3 s")] == ["16 min 5 s", "3 s"]


def test_the_records_index_finds_what_reading_every_line_finds():
    """``where`` looks an exact figure up in ``_rounded`` for the records under benchmarks/results/; given the same
    records as a dict of its own it reads every line (``_hit``): both name the same record for every tenth exact
    figure of the docs (all of them agreed when written: 494 figures), and neither finds a number no record holds."""
    exact = [f for text in DOCS.values() for f in figures(text) if measured(f) and not f["approx"]]
    exact = [f for f in exact if f["unit"] != "min s" and not LABEL.search(f["before"])]
    assert len(exact) >= 100
    for fig in exact[::10]:
        assert where(fig) == where(fig, dict(RECORDS)), fig["text"]
    absent = figures("987654.321 ms")[0]
    assert where(absent) is None and where(absent, dict(RECORDS)) is None
