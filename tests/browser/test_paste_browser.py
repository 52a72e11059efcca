"""A paste longer than the sentence box takes, in Chromium: the first 1,000 characters are taken and
the page says the rest was cut (the box used to refuse the whole paste and say nothing)."""

from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import expect
from test_browser import WAIT, open_app, settle

WORDS = "The quick brown fox, jumps over the lazy dog; 春眠不觉晓 and then it sleeps again. "
LONG = (WORDS * 60)[:3268]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_long_paste_takes_the_first_1000_characters_and_says_so(server, page, lang):
    open_app(page, server, f"steps?lang={lang}")
    box = page.locator("[data-testid='stSidebar'] textarea").first
    box.click()
    box.press("Control+a")
    page.keyboard.insert_text(LONG)  # what a paste does: one input of the whole text
    box.press("Control+Enter")
    settle(page)
    cut = {"en": "Only the first 1,000 characters were taken", "zh": "只取了前 1,000 个字符"}[lang]
    expect(page.locator("[data-testid='stSidebar'] [data-testid='stAlert']", has_text=cut)).to_be_visible(timeout=WAIT)
    expect(page.locator("[data-testid='stSidebar']")).to_contain_text("3,268")
    assert box.input_value() == LONG[:1000]
    page.wait_for_timeout(1000)  # the URL follows the run
    assert parse_qs(urlparse(page.url).query)["sentence"] == [LONG[:1000]]
    expect(page.locator("svg text", has_text="1 The").first).to_be_visible(timeout=WAIT)
