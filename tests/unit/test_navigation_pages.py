"""app.py's navigation pages: made once per language (making one resolves its file on the disk), a fresh copy for
each run (``st.navigation`` marks the pages of its own run, and a class's runs go on at the same time)."""

from __future__ import annotations

import streamlit as st

from explorer import pages


class FakePage:
    made = 0

    def __init__(self, page, *, title, icon, url_path, default=False) -> None:
        FakePage.made += 1
        self.page, self.title, self.url_path, self._can_be_called = page, title, url_path, False


def test_pages_are_made_once_per_language_and_each_run_gets_its_own(monkeypatch):
    monkeypatch.setattr(st, "Page", FakePage)
    monkeypatch.setattr(pages, "_MADE", {})
    home = object()
    en = ("Home", *(p.key for p in pages.PAGES))
    zh = ("首页", *(p.key + "·" for p in pages.PAGES))
    first = pages.navigation(home, en)
    assert FakePage.made == len(pages.PAGES) + 1
    assert [p.url_path for p in first] == ["home", *(p.url_path for p in pages.PAGES)]
    assert [p.title for p in first] == list(en) and first[0].page is home
    first[3]._can_be_called = True  # this run's st.navigation chose it
    second = pages.navigation(home, en)
    assert FakePage.made == len(pages.PAGES) + 1  # not made again
    assert not second[3]._can_be_called and second[3] is not first[3]
    assert [p.title for p in pages.navigation(home, zh)] == list(zh)  # another language: its own titles
    assert FakePage.made == 2 * (len(pages.PAGES) + 1)
