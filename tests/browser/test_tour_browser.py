"""The guided tour in Chromium: Next and Back open a lesson inside the app (the same document: no new page load),
the lesson's settings in the sidebar and in the address, and the browser's Back returns to the lesson before."""

from urllib.parse import parse_qs, urlsplit

from playwright.sync_api import expect
from test_browser import WAIT, open_app, settle

from explorer.base.i18n import t
from explorer.classroom.tour import TOUR, params

MARKER = "window.__tourMarker"


def lesson_text(n: int) -> str:
    return t("tour_lesson", n=n + 1, total=len(TOUR), language="en")


def query(page) -> dict[str, str]:
    return {k: v[-1] for k, v in parse_qs(urlsplit(page.url).query).items()}


def follow(page, n: int) -> None:
    """Press lesson ``n``'s Next and wait for lesson ``n + 1`` to be drawn in full."""
    title = t(f"tour.{TOUR[n + 1].key}.title", language="en")
    page.get_by_role("link", name=t("tour_next", title=title, language="en"), exact=True).click()
    expect(page.get_by_text(lesson_text(n + 1)).first).to_be_visible(timeout=WAIT)
    settle(page)


def lands_on(page, n: int) -> None:
    """The page and the address are lesson ``n``'s: its path, and its parameters (a default value may be left out
    of the address, as the app does on a fresh visit) with nothing else."""
    lesson = TOUR[n]
    assert urlsplit(page.url).path.rstrip("/").endswith(lesson.page), (page.url, lesson.page)
    shown = query(page)
    assert shown["tour"] == lesson.key and set(shown) <= set(params(lesson)), (shown, lesson)
    assert page.evaluate(MARKER) == "kept", "the link loaded a new document"


def sidebar_input(page, label: str):
    return page.get_by_test_id("stSidebar").locator(f"input[aria-label='{label}']")


def test_the_tours_next_keeps_the_page_and_opens_the_next_lesson_with_its_settings(server, page):
    n = TOUR.index(next(x for x in TOUR if x.key == "scores"))  # scores -> scale -> softmax (one page) -> mask
    assert [x.page for x in TOUR[n : n + 4]] == ["steps"] * 4 and TOUR[n + 4].page == "multihead"
    open_app(page, server, f"steps?step=st_scores&tour={TOUR[n].key}")
    expect(page.get_by_text(lesson_text(n)).first).to_be_visible(timeout=WAIT)
    settle(page)
    d_k = sidebar_input(page, "d_k")
    default_d_k = d_k.input_value()
    assert default_d_k != "512"
    page.evaluate(f"{MARKER} = 'kept'")  # a new page load would lose it

    follow(page, n)  # the same page: the lesson's d_q and d_k, locked
    lands_on(page, n + 1)
    assert query(page)["d_k"] == "512" and query(page)["lock"] == "d_q,d_k"
    expect(d_k).to_have_value("512", timeout=WAIT)
    expect(d_k).to_be_disabled()
    expect(sidebar_input(page, "d_q")).to_have_value("512")

    follow(page, n + 1)  # the same page again: the settings start from this lesson's link, not the last one's
    lands_on(page, n + 2)
    expect(d_k).to_have_value(default_d_k, timeout=WAIT)
    expect(d_k).to_be_enabled()
    expect(page.get_by_role("radio", name=t("st_softmax", language="en"), exact=True)).to_be_checked()

    follow(page, n + 2)
    follow(page, n + 3)  # another page: Multi-head with four heads
    lands_on(page, n + 4)
    expect(page.locator("h1", has_text=t("page.multihead", language="en"))).to_be_visible(timeout=WAIT)
    expect(sidebar_input(page, "Heads")).to_have_value("4", timeout=WAIT)

    page.go_back()  # the lesson before, on its own page, with its own settings
    expect(page.get_by_text(lesson_text(n + 3)).first).to_be_visible(timeout=WAIT)
    settle(page)
    lands_on(page, n + 3)
    assert query(page)["mask"] == "causal"
    expect(page.locator("h1", has_text=t("page.steps", language="en"))).to_be_visible(timeout=WAIT)
