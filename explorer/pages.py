"""The app's pages, listed once: app.py's navigation, the start page, the tests and the
benchmarks all read this table.

Rules a page file must keep (pinned by ``tests/app/test_page_rules.py``): its name, less the
number in front, is its ``url_path`` (so that a fresh server's legacy ``pages/`` path finds it on a
deep link), and its first statement after the imports is ``run_through_app()`` (see ``boot.py``).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class PageSpec:
    file: str  # relative to the repository root
    url_path: str
    key: str  # catalogue keys: page_<key> is its title, home_<key> its line on the start page
    icon: str
    reads: tuple[str, ...] | None = None  # the sidebar's settings the page reads (None: all of them)


PAGES = (
    PageSpec("pages/1_steps.py", "steps", "steps", ":material/calculate:"),
    PageSpec("pages/2_multihead.py", "multihead", "multihead", ":material/hub:"),
    PageSpec("pages/3_cross.py", "cross", "cross", ":material/compare_arrows:"),
    PageSpec("pages/4_tutorial.py", "tutorial", "tutorial", ":material/menu_book:", ()),
    PageSpec("pages/5_variants.py", "variants", "variants", ":material/extension:"),
    PageSpec("pages/6_complexity.py", "complexity", "complexity", ":material/timer:", ()),
    PageSpec("pages/7_model.py", "model", "model", ":material/model_training:", ("sentence", "seed")),
    PageSpec("pages/8_lab.py", "lab", "lab", ":material/science:"),
    PageSpec("pages/9_inside.py", "inside", "inside", ":material/biotech:", ("sentence",)),
    PageSpec("pages/10_explain.py", "explain", "explain", ":material/psychology_alt:", ("sentence",)),
    PageSpec(
        "pages/11_next_token.py", "next_token", "next_token", ":material/keyboard_double_arrow_right:", ("seed",)
    ),
    PageSpec("pages/12_vision.py", "vision", "vision", ":material/image:", ()),
)
FILES = [p.file for p in PAGES]


def reads(url_path: str) -> frozenset[str] | None:
    """The sidebar settings the page at ``url_path`` reads (None: all; the start page shows them all). The sidebar
    draws only these: the others keep their values, unseen, for the pages that read them (each control drawn is
    part of every rerun's cost, and a setting that changes nothing on this page only confuses)."""
    spec = next((p for p in PAGES if p.url_path == url_path), None)
    return None if spec is None or spec.reads is None else frozenset(spec.reads)


_MADE: dict[tuple[str, ...], list] = {}
_MADE_LOCK = threading.Lock()


def navigation(home: Callable, titles: tuple[str, ...]) -> list:
    """The ``st.Page`` objects for ``st.navigation``: the start page (``home``), then the table's pages, titled
    ``titles`` (the start page's first). Each is made once per set of titles (a language) and copied for each run:
    making one resolves its file on the disk, a dozen system calls a page, and under a class each call gives up the
    interpreter and waits to take it back from the other sessions' reruns. Copied, because ``st.navigation`` marks
    the pages of its own run."""
    import streamlit as st

    with _MADE_LOCK:
        made = _MADE.get(titles)
        if made is None:
            made = [st.Page(home, title=titles[0], icon=":material/home:", default=True, url_path="home")]
            made += [
                st.Page(p.file, title=title, icon=p.icon, url_path=p.url_path)
                for p, title in zip(PAGES, titles[1:], strict=True)
            ]
            _MADE[titles] = made
    return [copy.copy(page) for page in made]
