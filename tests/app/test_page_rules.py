"""The rules a page file must keep so that deep links work on a fresh server (explorer/boot.py):
pinned here so that a new page cannot break them silently."""

import ast
import os
from pathlib import Path

from streamlit.source_util import page_icon_and_name

from explorer.pages import FILES, PAGES

ROOT = Path(__file__).resolve().parents[2]


def test_every_page_file_is_in_the_table_and_every_entry_exists():
    on_disk = sorted(f"pages/{name}" for name in os.listdir(ROOT / "pages") if name.endswith(".py"))
    assert sorted(FILES) == on_disk
    assert len({p.url_path for p in PAGES}) == len(PAGES)


def test_the_legacy_pages_path_finds_each_page_under_its_url_path():
    """Streamlit's own rule for a pages/ file's name (the number in front dropped) gives the url_path."""
    problems = [name_problem(page.file, page.url_path) for page in PAGES]
    assert not [p for p in problems if p], problems


def first_statement_problem(source: str) -> str | None:
    """Why a page's source breaks the rule (its first statement after the imports and the
    docstring must be ``run_through_app()``), or None when it keeps it."""
    tree = ast.parse(source)
    body = [n for n in tree.body if not isinstance(n, (ast.Import, ast.ImportFrom))]
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    if not body:
        return "no statement after the imports"
    first = body[0]
    if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Call)):
        return f"the first statement is a {type(first).__name__}, not a call"
    if getattr(first.value.func, "id", None) != "run_through_app":
        return f"the first call is {ast.unparse(first.value.func)}(), not run_through_app()"
    return None


def name_problem(file: str, url_path: str) -> str | None:
    """Why Streamlit's legacy pages/ path would not find ``file`` under ``url_path`` (None: it would)."""
    found = page_icon_and_name(ROOT / file)[1]
    return None if found == url_path else f"{file} is found under /{found}, not /{url_path}"


def test_the_first_statement_of_every_page_is_run_through_app():
    problems = {page.file: first_statement_problem((ROOT / page.file).read_text()) for page in PAGES}
    assert not {f: p for f, p in problems.items() if p}, problems


def test_the_rules_can_fail():
    """The checks the tests above use, on pages that break them: drawing before run_through_app(),
    another statement first, nothing after the imports, and a file whose name is not its path."""
    good = '"""A page."""\nimport streamlit as st\nfrom explorer.boot import run_through_app\n\nrun_through_app()\n'
    assert first_statement_problem(good + "st.title('x')\n") is None
    assert "st.title" in first_statement_problem("import streamlit as st\nst.title('x')\nrun_through_app()\n")
    assert first_statement_problem("import streamlit as st\nx = 1\nrun_through_app()\n")
    assert first_statement_problem("import streamlit as st\n")
    assert name_problem("pages/1_step_by_step.py", "steps")
    assert name_problem("pages/1_steps.py", "steps") is None


def test_test_files_have_unique_names():
    """pytest imports test files by their base name (the folders are not packages): two with the
    same name stop the whole run at collection."""
    from collections import Counter
    from pathlib import Path

    names = Counter(p.name for p in (Path(__file__).resolve().parents[1]).rglob("test_*.py"))
    assert not [n for n, c in names.items() if c > 1]
