"""Take it home under AppTest: the two download buttons exist on Step by step, Multi-head, Cross-attention and
Real model, in the UI's language, and what they would download is a valid notebook (or script) of the view on
screen, whose cells recompute the app's numbers.

AppTest has no media manager, so a deferred download's callable is not registered there: the test wraps the
helper's one button function to keep the callable the page passed, and calls it as a click would.
"""

from __future__ import annotations

import contextlib
import io

import nbformat
import pytest

from explorer.classroom import takehome

PAGES = {
    "pages/1_steps.py": ("dl_notebook", "dl_script", "attention_steps"),
    "pages/2_multihead.py": ("dl_notebook", "dl_script", "attention_multihead"),
    "pages/3_cross.py": ("dl_notebook", "dl_script", "attention_cross"),
    "pages/7_model.py": ("rm_dl_notebook", "rm_dl_script", "head_L"),
}


@pytest.fixture
def clicks(monkeypatch):
    """Every download the take-home helper drew in this test: key -> (label, file name, the callable)."""
    seen: dict[str, tuple] = {}
    draw = takehome._button

    def spy(label, data, file_name, mime, key, container):
        seen[key] = (label, file_name, data)
        draw(label, data, file_name, mime, key, container)

    monkeypatch.setattr(takehome, "_button", spy)
    takehome.FILES.clear()
    return seen


def _run_cells(source: str) -> dict:
    ns: dict = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(source, "<notebook>", "exec"), ns)  # noqa: S102 - the notebook this app wrote
    return ns


@pytest.mark.parametrize("page", list(PAGES))
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_buttons_and_their_notebook(app, clicks, page, lang):
    nb_key, py_key, name = PAGES[page]
    at = app(page, {"heads": "2", "lang": lang, "focus": "2"})
    labels = [b.proto.label for b in at.get("download_button")]
    want = {
        "en": ("Download as notebook (.ipynb)", "Download as Python script (.py)"),
        "zh": ("下载为笔记本（.ipynb）", "下载为 Python 脚本（.py）"),
    }
    assert want[lang][0] in labels and want[lang][1] in labels
    assert {nb_key, py_key} <= set(clicks)
    label, file_name, data = clicks[nb_key]
    assert file_name.startswith(name) and file_name.endswith(".ipynb") and label == want[lang][0]
    nb = nbformat.reads(data().decode("utf-8"), as_version=4)
    nbformat.validate(nb)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert any("\u4e00" <= ch <= "\u9fff" for ch in text) == (lang == "zh")
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    ns = _run_cells(code)  # (isolation from the project is the unit tests'; here: it is this view, and it runs)
    assert max(ns["differences"].values()) <= 1e-5
    assert ns["FOCUS"] == 2
    if page != "pages/7_model.py":
        assert ns["HEADS"] == 2
    script = clicks[py_key][2]().decode("utf-8")
    compile(script, clicks[py_key][1], "exec")
    assert clicks[py_key][1].endswith(".py")


def test_cross_page_exports_the_cross_view(app, clicks):
    at = app("pages/3_cross.py", {"sentence": "The cat sat", "source": "Le chat dort bien"})
    assert not at.exception
    ns = _run_cells(
        "\n".join(
            c.source for c in nbformat.reads(clicks["dl_notebook"][2]().decode(), 4).cells if c.cell_type == "code"
        )
    )
    assert ns["SENTENCE"] == "Le chat dort bien" and ns["SOURCE"] == "The cat sat"  # queries from the second sentence
    assert tuple(ns["weights"].shape) == (1, 4, 3)


def test_too_big_a_view_says_why(app, clicks):
    words = " ".join(f"w{i}" for i in range(120))
    at = app("pages/2_multihead.py", {"heads": "32", "sentence": words})
    assert not at.exception
    assert "dl_notebook" not in clicks
    assert any("No notebook for this view" in c.value and "shorter sentence" in c.value for c in at.caption)


def test_a_file_is_built_once_and_the_cache_keeps_its_budget(monkeypatch):
    from attn_core import Settings
    from attn_core import notebook as nbk

    builds = []
    real_build = nbk.trace_notebook
    monkeypatch.setattr(nbk, "trace_notebook", lambda *a, **k: builds.append(1) or real_build(*a, **k))
    takehome.FILES.clear()
    items = Settings().key()
    first = takehome.trace_file("steps", items, "en", 1, 0, "ipynb")
    assert takehome.trace_file("steps", items, "en", 1, 0, "ipynb") == first and len(builds) == 1  # a class: once
    takehome.trace_file("steps", items, "zh", 1, 0, "ipynb")
    assert len(builds) == 2  # another language is another file

    files = takehome._Files(max_bytes=25, max_entries=10)
    for n in range(4):
        files.get(("k", n), lambda n=n: bytes(10))
    assert list(files.entries) == [("k", 2), ("k", 3)] and files.total == 20  # the oldest dropped to fit 25 bytes
    files.get(("k", 2), lambda: b"rebuilt")  # a hit: kept, not rebuilt, now the most recent
    assert files.entries[("k", 2)] == bytes(10) and list(files.entries)[-1] == ("k", 2)
    assert files.get(("big",), lambda: bytes(40)) == bytes(40) and ("big",) not in files.entries  # over budget
