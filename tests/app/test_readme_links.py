"""Every app link the README and docs/*.md name opens its page with its settings (the tour's links: test_tour.py)."""

import os
import re
from urllib.parse import parse_qsl

import pytest

from explorer.pages import PAGES

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BY_PATH = {p.url_path: p.file for p in PAGES}


def readme_links() -> list[tuple[str, str]]:
    """(url path, query) of every `/page?...` in backquotes in README.md and docs/*.md ("..." stands for any value:
    left out)."""
    docs = os.path.join(ROOT, "docs")
    files = [os.path.join(ROOT, "README.md")]
    if os.path.isdir(docs):
        files += sorted(os.path.join(docs, n) for n in os.listdir(docs) if n.endswith(".md"))
    found = []
    for name in files:
        with open(name, encoding="utf-8") as f:
            found += re.findall(r"`/([a-z_]+)\?([^`\s]+)`", f.read())
    return sorted({(path, query) for path, query in found})


LINKS = readme_links()


def test_the_readme_names_links_to_pages():
    assert len(LINKS) >= 3 and all(path in BY_PATH for path, _ in LINKS), LINKS


@pytest.mark.parametrize("path,query", LINKS, ids=[f"{p}?{q}" for p, q in LINKS])
def test_a_readme_link_opens_its_page_with_its_settings(app, path, query):
    params = {k: v for k, v in parse_qsl(query) if v != "..."}
    at = app(BY_PATH[path], query=params)
    assert not at.exception, [e.value for e in at.exception]
    settings = at.session_state["settings"]
    for name, value in params.items():
        if name in settings:
            assert str(settings[name]) == value, name
        elif name in at.session_state:  # a page's own control
            assert str(at.session_state[name]) == value, name
    fixed = at.session_state.get("_url_notices", [])
    assert not fixed, fixed  # every parameter of the link was usable
