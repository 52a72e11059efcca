"""The app works offline, as a classroom network may be: while a page loads by its address, in both languages and in
presenter mode, no request leaves 127.0.0.1 (every request the page makes is recorded, and any to another host is
refused and fails the test), and nothing the page links to (its icon, a script, a style sheet, an image) is on
another host. The tab's icon was fetched from a font host at every page load. Every page of the table, in both
languages, is checked so in test_axe.py's walk (the start page loaded by its address, each page opened from the
navigation). And the sidebar lists every page in the UI's language: folded, its "View 3 more" was English on the
Chinese page."""

from offline import ICON, Requests, leaves
from playwright.sync_api import expect
from test_browser import WAIT, open_app, settle

from explorer.base.i18n import t
from explorer.pages import PAGES

# pages loaded by their address (a link a teacher hands out) in each language and in presenter mode, which the walk
# through every page does not open so
PATHS = ["", "steps", "steps?lang=zh", "steps?present=1", "model?present=1&lang=zh", "next_token?lang=zh"]


def test_no_request_leaves_127_0_0_1_while_pages_load_by_their_address(server, page):
    requests = Requests(page)
    for path in PATHS:
        open_app(page, server, path)
        settle(page)
        requests.look(page, path)
    icon = page.evaluate(ICON)
    assert not requests.outside(), requests.outside()
    assert not requests.linked_outside(), requests.linked_outside()
    assert icon.startswith("data:image/svg+xml"), icon[:80]  # the app's own icon, inline
    assert requests.sockets() >= 1


def test_the_check_sees_a_request_to_another_host(page):
    assert leaves(
        "https://fonts.gstatic.com/s/i/short-term/release/materialsymbolsrounded/visibility/default/24px.svg"
    )
    assert leaves("http://localhost:8501/")  # another name is another host to the check: the app serves 127.0.0.1
    assert not leaves("http://127.0.0.1:8501/static/js/index.js")
    assert not leaves("data:image/svg+xml;base64,PHN2Zz4=")
    requests = Requests(page)  # a page that asks another host: recorded, refused, and its link read
    page.set_content("<link rel='stylesheet' href='https://fonts.example/a.css'><p>x</p>")
    requests.look(page, "planted")
    assert requests.outside() == ["https://fonts.example/a.css"]
    assert requests.linked_outside() == {"planted": ["https://fonts.example/a.css"]}


def test_the_chinese_sidebar_lists_every_page_in_chinese(server, page):
    open_app(page, server, "?lang=zh")
    nav = page.get_by_test_id("stSidebarNav")
    expect(nav).to_be_visible(timeout=WAIT)
    titles = [t("page_home", language="zh"), *(t(f"page.{p.key}", language="zh") for p in PAGES)]
    links = nav.get_by_test_id("stSidebarNavLink")
    expect(links).to_have_count(len(titles), timeout=WAIT)
    shown = links.all_inner_texts()  # each with its icon's name before it (a ligature of the icon font)
    assert all(title in text for title, text in zip(titles, shown, strict=True)), (titles, shown)
    words = nav.inner_text()
    assert "View" not in words and "more" not in words and "less" not in words, words
