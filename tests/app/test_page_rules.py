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
    for page in PAGES:
        assert page_icon_and_name(ROOT / page.file)[1] == page.url_path, page.file


def test_the_first_statement_of_every_page_is_run_through_app():
    for page in PAGES:
        tree = ast.parse((ROOT / page.file).read_text())
        body = [n for n in tree.body if not isinstance(n, (ast.Import, ast.ImportFrom))]
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # the docstring
        first = body[0]
        assert isinstance(first, ast.Expr) and isinstance(first.value, ast.Call), page.file
        assert getattr(first.value.func, "id", None) == "run_through_app", page.file


def test_the_rules_can_fail():
    """A page that draws before run_through_app(), or whose name is not its path, is caught."""
    bad = ast.parse("import streamlit as st\nst.title('x')\nrun_through_app()\n")
    body = [n for n in bad.body if not isinstance(n, (ast.Import, ast.ImportFrom))]
    assert getattr(body[0].value.func, "id", None) != "run_through_app"
    assert page_icon_and_name(Path("pages/1_step_by_step.py"))[1] != "steps"


def test_test_files_have_unique_names():
    """pytest imports test files by their base name (the folders are not packages): two with the
    same name stop the whole run at collection."""
    from collections import Counter
    from pathlib import Path

    names = Counter(p.name for p in (Path(__file__).resolve().parents[1]).rglob("test_*.py"))
    assert not [n for n, c in names.items() if c > 1]
