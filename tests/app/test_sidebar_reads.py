"""Each page draws only the sidebar settings it reads (the page table's ``reads``); the others keep their values,
undrawn, for the pages that read them: a learner who sets the heads on Step by step, opens Next token and comes
back finds them as they were, and a link copied on any page carries them."""

from __future__ import annotations

import ast
import os
import re

import pytest

from explorer.controls import BY_NAME, SIDEBAR
from explorer.pages import PAGES, reads

NAMES = {c.name for c in SIDEBAR}


def drawn(at) -> set[str]:
    """The sidebar controls drawn in this run (their widgets' keys)."""
    keys = set()
    for kind in ("number_input", "selectbox", "radio", "checkbox", "text_area", "text_input", "slider", "toggle"):
        keys |= {w.key for w in getattr(at.sidebar, kind)}
    return keys & NAMES


def test_the_page_table_names_only_sidebar_settings():
    for page in PAGES:
        assert page.reads is None or set(page.reads) <= NAMES, page.url_path
    assert reads("vision") == frozenset() and reads("steps") is None and reads("nowhere") is None


@pytest.mark.parametrize("page", [p for p in PAGES if p.reads is not None], ids=lambda p: p.url_path)
def test_a_page_draws_the_settings_it_reads_and_says_the_others_are_kept(app, page):
    at = app(page.file)
    assert drawn(at) == set(page.reads)
    assert any("The others" in c.value for c in at.sidebar.caption)


def test_step_by_step_draws_every_setting_and_no_kept_note(app):
    at = app()
    assert {"sentence", "heads", "d_model", "kernel", "seed"} <= drawn(at)
    assert not any("The others" in c.value for c in at.sidebar.caption)


def test_a_setting_survives_a_page_that_does_not_draw_it_and_stays_in_the_link(app):
    at = app()
    at.sidebar.number_input(key="heads").set_value(4).run()
    at.sidebar.number_input(key="seed").set_value(7).run()
    for page in ("pages/11_next_token.py", "pages/12_vision.py", "pages/4_tutorial.py", "pages/1_steps.py"):
        at.switch_page(page).run()
        assert not at.exception, [e.value for e in at.exception]
        assert at.query_params.get("heads") in ("4", ["4"]), page  # a link copied here carries it
        assert at.session_state["heads"] == 4 and at.session_state["seed"] == 7, page
    assert at.sidebar.number_input(key="heads").value == 4  # drawn again, with its value
    assert at.sidebar.number_input(key="seed").value == 7


def _other(c):
    """A valid value of ``c`` other than its default."""
    if c.kind in ("int", "float", "slider"):
        step = 1 if c.kind == "int" else (c.step or 0.1)
        up = c.default + step
        return up if c.high is None or up <= c.high else c.default - step
    if c.kind == "switch":
        return not c.default
    if c.kind in ("text", "area"):
        return "a sentence no page shows by default"
    return next(o for o in c.options if o != c.default)


FREE_MEMORY = re.compile(r"\d+(?:\.\d+)? GiB")  # Complexity's device line: a CPU's free memory, the machine's to move


def _page_text(at) -> list:
    """What the page itself shows in words and numbers (its main area, not the sidebar), the machine's free memory
    left out (it moves between two runs whatever the settings: 20.0 GiB then 19.9 GiB seen in one suite run)."""
    m = at.main
    kinds = ("title", "header", "subheader", "markdown", "caption", "text", "code", "metric", "info", "warning")
    return [(kind, FREE_MEMORY.sub("N GiB", str(getattr(e, "value", "")))) for kind in kinds for e in getattr(m, kind)]


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# pages whose words arrive from background jobs (when they arrive is not the test's to fix): read statically below
DETERMINISTIC = [p for p in PAGES if p.reads is not None and p.url_path not in ("explain", "inside", "next_token")]


def settings_read(path: str) -> set[str] | None:
    """The sidebar settings a page script reads through ``current_settings()`` (None: it may read any: it hands
    the settings on, or asks for the trace they describe)."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())

    def called(node, name: str) -> bool:
        return isinstance(node, ast.Call) and getattr(node.func, "id", "") == name

    names = {
        t.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and called(node.value, "current_settings")
        for t in node.targets
        if isinstance(t, ast.Name)
    }
    used: set[str] = set()
    for node in ast.walk(tree):
        if called(node, "current_trace") or called(node, "cross_settings"):
            return None
        if isinstance(node, ast.Attribute):
            v = node.value
            if (isinstance(v, ast.Name) and v.id in names) or called(v, "current_settings"):
                used.add(node.attr)
        elif isinstance(node, ast.Call):
            given = node.args + [k.value for k in node.keywords]
            if any(isinstance(a, ast.Name) and a.id in names for a in given):
                return None
    return used


@pytest.mark.parametrize("page", [p for p in PAGES if p.reads is not None], ids=lambda p: p.url_path)
def test_a_page_script_reads_no_setting_beyond_its_reads(page):
    found = settings_read(os.path.join(ROOT, page.file))
    assert found is not None and found <= set(page.reads), (page.url_path, found)


def test_the_static_reading_sees_a_page_that_hands_its_settings_on():
    assert settings_read(os.path.join(ROOT, "pages/8_lab.py")) is None  # the Lab builds its config from them
    assert settings_read(os.path.join(ROOT, "pages/11_next_token.py")) == {"seed"}


@pytest.mark.parametrize("page", DETERMINISTIC, ids=lambda p: p.url_path)
def test_a_page_shows_the_same_whatever_the_settings_it_does_not_read(app, page):
    """The table's claim checked on the page itself: every setting it does not read set to another value (by the
    link) changes nothing the page shows."""
    app(page.file)  # a first visit starts what the page computes in the background; the next ones read it
    plain = _page_text(app(page.file))
    others = {c.name: str(_other(c)).lower() for c in SIDEBAR if c.name not in page.reads}
    assert _page_text(app(page.file, query=others)) == plain


def test_a_link_to_a_page_that_does_not_draw_a_setting_still_checks_it(app):
    at = app("pages/11_next_token.py", query={"heads": "many", "d_model": "24"})
    assert at.session_state["d_model"] == 24  # kept from the link for the pages that read it
    assert at.session_state["heads"] == BY_NAME["heads"].default  # a value it cannot use: the default, and said
    assert "heads" not in at.query_params
    said = " ".join(str(getattr(e, "value", "")) for e in at.sidebar)
    assert "heads" in said.lower() or "Heads" in said, said


def test_a_bad_setting_is_said_only_where_it_is_read(app):
    # 24 is not a multiple of 5 heads under the standard layout: an error for Step by step, none for Next token
    at = app("pages/11_next_token.py", query={"layout": "standard", "heads": "5", "d_model": "24"})
    assert not at.sidebar.error, [e.value for e in at.sidebar.error]
    at.switch_page("pages/1_steps.py").run()
    assert at.sidebar.error
