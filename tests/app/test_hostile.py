"""Hostile links under AppTest: a generated corpus of URL values for every URL-bound control.

Each page must run without an exception; a value that cannot be used is removed from the URL and
named in a notice (the value itself is never echoed); a value that can be used reaches its control.
The corpus is generated from the control table (explorer/controls.py SIDEBAR and PAGE), so a new
control is covered by itself; the ranges of the first ones are also written out here, as an oracle
the table must keep.
"""

import itertools
import json
import math
import random
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from explorer.controls import PAGE, SIDEBAR

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
TIMEOUT = 120

# The ranges of the first URL numbers, written out as an oracle: the control table must keep them.
WRITTEN = {
    "heads": (1, 32, True),
    "d_model": (1, 1024, True),
    "d_q": (1, 1024, True),
    "d_k": (1, 1024, True),
    "d_v": (1, 1024, True),
    "window": (1, 4096, True),
    "dilation": (1, 512, True),
    "global_tokens": (0, 512, True),
    "block": (1, 4096, True),
    "seed": (0, 2**31 - 1, True),
    "temperature": (0.01, 100.0, False),
    "dropout": (0.05, 0.9, False),
    "rm_pad": (0, 512, True),
}
# What a page narrows a control to in this test's links (the bundled model has 6 layers of 12 heads;
# head_steps and cross_head are drawn when there is more than one head: below the number of heads).
NARROWED = {
    "head_steps": ({"heads": "4"}, 3),
    "cross_head": ({"heads": "2"}, 1),
    "rm_layer": ({}, 5),
    "rm_head": ({}, 11),
}


def _lab_narrowed() -> dict:
    from attn_core.lab import LAB_LIMITS, TASKS

    task = TASKS["reverse"]  # the Lab's default task: the length is the task's own range
    return {"lab_length": ({}, min(getattr(task, "high", LAB_LIMITS["length"][1]), LAB_LIMITS["length"][1]))}


def _drawn_on() -> dict[str, str]:
    """Each page control's page: the page file that draws ``PAGE["name"]``."""
    found = {}
    for path in sorted((ROOT / "pages").glob("*.py")):
        for name in re.findall(r"""PAGE\[["'](\w+)["']\]""", path.read_text()):
            found.setdefault(name, f"pages/{path.name}")
    return found


def _showing(c) -> dict | None:
    """URL values of other settings under which the sidebar draws ``c``: none when it is always
    drawn, else one changed choice or switch (found by trying each), None when nothing shows it."""
    values = {d.name: d.default for d in SIDEBAR}
    if c.shown is None or c.shown(values):
        return {}
    for d in SIDEBAR:
        options = (True, False) if d.kind == "switch" else d.options
        for option in options:
            if c.shown({**values, d.name: option}):
                return {d.name: d.to_url(option)}
    return None


def generated_controls() -> dict:
    """URL name -> (page, lowest, highest, whole number?, other parameters the control needs to be
    drawn), for every numeric control in the table (the sidebar's and the pages' own)."""
    out = {}
    for c in SIDEBAR:
        if c.kind in NUMERIC:
            out[c.name] = ("pages/1_steps.py", c.low, c.high, c.kind == "int", _showing(c))
    drawn, narrowed = _drawn_on(), NARROWED | _lab_narrowed()
    for c in PAGE.values():
        if c.kind in NUMERIC and c.name in drawn:
            extra, high = narrowed.get(c.name, ({}, c.high))
            out[c.name] = (drawn[c.name], c.low, high, c.kind == "int", extra)
    return out


NUMERIC = ("int", "float", "slider")
CONTROLS = generated_controls()
CONTROL_ROWS = (*SIDEBAR, *PAGE.values())


def _draw_defaults() -> dict:
    from attn_core.lab import TASKS

    return {"lab_length": TASKS["reverse"].length, "lab_steps": TASKS["reverse"].steps}


def test_every_numeric_control_in_the_table_is_in_the_corpus():
    numeric = {c.name for c in SIDEBAR if c.kind in NUMERIC}
    assert numeric <= set(CONTROLS)
    assert all(CONTROLS[n][4] is not None for n in numeric), "a sidebar control no single setting shows"
    assert {"features", "proj_k", "lab_length", "lab_lr", "lab_batch", "lab_steps"} <= set(CONTROLS)
    for name, (low, high, whole) in WRITTEN.items():
        assert CONTROLS[name][1:4] == (low, high, whole), name


def number_corpus(seed: int = 0, n_random: int = 4) -> list[str]:
    """Overflowing, non-finite, malformed and borderline numbers, plus seeded random strings."""
    fixed = [
        "1e400",
        "-1e400",
        "inf",
        "-inf",
        "nan",
        "NaN",
        "9" * 400,
        "-" + "9" * 400,
        "1e-400",
        "-1",
        "0",
        "1.5",
        "2.0",
        "0x10",
        "1_000",
        "",
        " ",
        "+3",
        "３",
        "٣",
        "1e3",
        "1,5",
        "true",
        "[1]",
        "%00",
        "2\x00",
    ]
    rng = random.Random(seed)
    alphabet = "0123456789.eE+-_ xin\u200b"
    fixed += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) for _ in range(n_random)]
    return fixed


def usable(raw: str, low: float, high: float, whole: bool) -> bool:
    """The oracle: what a careful person would accept for this control."""
    try:
        value = float(raw)
    except ValueError:
        return False
    if not math.isfinite(value) or not low <= value <= high:
        return False
    return not whole or value == int(value)


def run(page: str, query: dict) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    at.switch_page(page).run()
    return at


def notice_names(at) -> set[str]:
    names = set()
    for w in at.warning:
        if "could not be used" in w.value or "cannot be used for" in w.value:
            names |= {n.strip().replace("\\_", "_") for n in w.value.split(":", 1)[1].split(".")[0].split(",")}
    return names


KNOWN = (
    set(CONTROLS)
    | {c.name for c in CONTROL_ROWS}
    | {
        "mask",
        "score",
        "layout",
        "pos",
        "init",
        "step",
        "focus",
        "rm_step",
        "model",
        "rm_model",
        "causal",
        "dropout_on",
        "residual_norm",
        "sentence",
        "source",
    }
)


def _text(x: float, whole: bool) -> str:
    return str(int(x)) if whole else repr(float(x))


def picks(name: str) -> list[str]:
    """The values a control is run with in the app: one for each way a URL number goes through ``url_value``,
    the page's own narrowing and the widget (overflow, not a number, malformed, its highest, just above it, a
    fraction for a whole number). Every value of the corpus goes through the same parser in
    ``test_every_value_of_the_corpus_reads_as_the_oracle_says``, which has no app to start."""
    _page, low, high, whole, _extra = CONTROLS[name]
    above = high + 1 if whole else high * 1.5 + 1
    return ["1e400", "nan", "0x10", _text(high, whole), _text(above, whole), _text(low, whole)] + (
        ["1.5"] if whole else []
    )


FULL = "heads"  # one control runs the whole corpus in the app, end to end
CASES = [(n, raw) for n in CONTROLS for raw in (number_corpus(seed=len(n)) if n == FULL else picks(n))]


def test_every_value_of_the_corpus_reads_as_the_oracle_says():
    """The whole corpus, for every numeric control, through the parser every link's number goes through
    (``Control.parse`` with the page's narrowed highest): usable exactly when the oracle says, as its value."""
    rows = {c.name: c for c in CONTROL_ROWS}
    checked = 0
    for name, (page, low, high, whole, extra) in CONTROLS.items():
        for raw in number_corpus(seed=len(name)) + picks(name):
            value = rows[name].parse(raw, high=high)
            if usable(raw, low, high, whole):
                assert value == pytest.approx(float(raw)), (name, raw)
                assert isinstance(value, int) == whole, (name, raw)
            else:
                assert value is None, (name, raw, value)
            checked += 1
    assert checked >= len(CONTROLS) * 30


@pytest.mark.parametrize("name,raw", CASES, ids=[f"{n}={r[:12]!r}" for n, r in CASES])
def test_a_hostile_number_in_the_link_never_crashes_and_is_named(name, raw):
    page, low, high, whole, extra = CONTROLS[name]
    at = run(page, {**extra, name: raw})
    assert not at.exception, [e.value for e in at.exception]
    if usable(raw, low, high, whole):
        value = float(raw)
        assert name not in notice_names(at)
        assert at.session_state[name] == pytest.approx(value)  # it reached its control
        url = at.query_params.get(name)  # under AppTest a single query value is a str
        if url is None:  # the default leaves the URL
            assert value == pytest.approx(
                _draw_defaults().get(name, next(c for c in CONTROL_ROWS if c.name == name).default)
            )
        else:
            assert isinstance(url, str) and float(url) == pytest.approx(value)
    else:
        assert name in notice_names(at), [w.value for w in at.warning]
        assert name not in at.query_params  # the URL was corrected
        assert notice_names(at) <= KNOWN  # names only: the value itself is never echoed


def test_many_hostile_values_at_once_are_each_named():
    query = {name: "1e400" for name in CONTROLS if name not in ("head_steps", "cross_head")}
    at = run("pages/1_steps.py", {**query, "mask": "dilated"})
    assert not at.exception
    named = notice_names(at)
    for name in ("heads", "d_model", "d_q", "d_k", "d_v", "dilation", "seed", "temperature"):
        assert name in named


@pytest.mark.parametrize(
    "name,value",
    [
        ("mask", "evil"),
        ("score", "<script>"),
        ("layout", "x" * 500),
        ("pos", ""),
        ("init", "1e400"),
        ("step", "st_nope"),
        ("focus", "-99"),
    ],
)
def test_an_unknown_choice_falls_back_to_its_default_with_a_notice(name, value):
    at = run("pages/1_steps.py", {name: value})
    assert not at.exception
    assert name in notice_names(at)
    assert at.query_params.get(name) in (None, [])


@pytest.mark.parametrize("switch", ["causal", "dropout_on", "residual_norm"])
@pytest.mark.parametrize("value", ["maybe", "1e400", "", "TRUE "])
def test_a_switch_takes_only_true_or_false(switch, value):
    at = run("pages/1_steps.py", {switch: value})
    assert not at.exception
    assert switch in notice_names(at)


def test_a_long_sentence_in_the_link_is_cut_with_a_notice():
    at = run("pages/1_steps.py", {"sentence": "word " * 20_000})
    assert not at.exception
    assert "sentence" in notice_names(at)
    kept = at.session_state["sentence"]
    assert 0 < len(kept) <= 1000 and ("word " * 20_000).startswith(kept)
    assert isinstance(at.query_params["sentence"], str) and at.query_params["sentence"] == kept  # the URL was cut too


HOSTILE_TEXT = [
    "![x](https://evil.example/x.png) [click](https://evil.example) <img src=x onerror=alert(1)>",
    "**bold** _it_ `code` $x^2$ :material/home: :smile: # heading",
    "<a href='javascript:alert(1)'>a</a> <b>b</b> <br> &amp; &lt;",
    "\u202egnp.exe \u2066bidi\u2069 \u200b zero-width",
    "👨‍👩‍👧‍👦 🏳️‍🌈 e\u0301 ﷽",
    "tab\there ctrl\x01\x07 bell",
]
MARKDOWN_LINK = re.compile(r"(?<!\\)!?(?<!\\)\[[^\]]*(?<!\\)\]\((?!\\)")


def markdown_sinks(at) -> list[str]:
    """Every text Streamlit renders as Markdown on the page."""
    texts = [e.value for kind in ("markdown", "caption", "info", "warning", "error", "success") for e in at.get(kind)]
    texts += [e.label for e in at.get("expander")]
    return texts


@pytest.mark.parametrize("text", HOSTILE_TEXT)
@pytest.mark.parametrize("page", ["pages/1_steps.py", "pages/2_multihead.py", "pages/3_cross.py", "pages/7_model.py"])
def test_typed_text_is_data_never_markup(page, text):
    at = run(page, {"sentence": text, "source": text, "focus": "0"})
    assert not at.exception
    for sink in markdown_sinks(at):
        assert not MARKDOWN_LINK.search(sink), sink  # no live link or image from the input
        assert "<img" not in sink and "<a " not in sink
    for c in at.get("plotly_chart"):
        spec = json.loads(c.proto.spec)
        blob = json.dumps(
            [
                spec["layout"].get("title"),
                [t.get("x") for t in spec["data"]],
                [t.get("y") for t in spec["data"]],
                [t.get("text") for t in spec["data"]],
            ]
        )
        assert "<img" not in blob and "<a " not in blob and "<b>" not in blob


def test_the_markdown_check_can_fail():
    """The detector above flags an unescaped link (so a passing test means something)."""
    assert MARKDOWN_LINK.search("see ![x](https://evil.example/x.png)")
    assert MARKDOWN_LINK.search("[click](https://evil.example)")
    from explorer.base.safe import md

    assert not MARKDOWN_LINK.search(md("see ![x](https://evil.example/x.png) [click](https://evil.example)"))


def test_the_crash_this_guards_against_is_real():
    """A bare URL-bound number_input given 1e400 raises inside Streamlit: the checks above are needed.
    Run in a fresh interpreter: the app guards Streamlit's number deserializer process-wide once it ran
    (explorer/base/widgets.py), so in this process the bare widget would be guarded too."""
    import subprocess
    import sys

    script = (
        "from streamlit.testing.v1 import AppTest\n"
        "src = \"import streamlit as st\\nst.number_input('n', 0, 10, 1, key='n', bind='query-params')\\n\"\n"
        "at = AppTest.from_string(src, default_timeout=30)\n"
        "at.query_params['n'] = '1e400'\n"
        "at.run()\n"
        "print('EXCEPTION' if at.exception else 'NO EXCEPTION')\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert out.stdout.strip().endswith("EXCEPTION") and "NO EXCEPTION" not in out.stdout, out.stdout + out.stderr


def test_too_large_settings_are_refused_before_they_take_memory():
    at = run(
        "pages/2_multihead.py",
        {
            "heads": "32",
            "d_model": "1024",
            "d_q": "1024",
            "d_k": "1024",
            "d_v": "1024",
            "sentence": " ".join(f"w{i}" for i in range(150)),
        },
    )
    assert not at.exception
    assert any("MiB" in w.value for w in itertools.chain(at.warning, at.error))


def test_the_notice_shows_also_when_the_settings_cannot_be_computed():
    """The page stops early on an invalid combination; the link's notice is still there."""
    at = run(
        "pages/1_steps.py", {"mask": "evil", "seed": "1e400", "layout": "standard", "d_model": "16", "heads": "3"}
    )
    assert not at.exception
    assert {"mask", "seed"} <= notice_names(at)
    assert any("does not divide evenly" in e.value for e in at.sidebar.error)
