"""The app works offline, as a classroom network may be: while every page loads, in both languages and in presenter
mode, no request leaves 127.0.0.1 (every request the page makes is recorded, and any to another host is refused
and fails the test), and nothing the page links to (its icon, a script, a style sheet, an image) is on another host.
The tab's icon was fetched from a font host at every page load. And the sidebar lists every page in the UI's
language: folded, its "View 3 more" was English on the Chinese page."""

from urllib.parse import urlsplit

from playwright.sync_api import expect
from test_browser import WAIT, open_app, settle

from explorer.base.i18n import t
from explorer.pages import PAGES

LOCAL_HOSTS = {"127.0.0.1"}
INLINE = ("data:", "blob:", "about:")
# every page of the app, the start page first; Chinese and presenter mode on the pages a class projects
PATHS = ["", *(p.url_path for p in PAGES), "?lang=zh", "steps?lang=zh", "steps?present=1", "model?present=1&lang=zh"]
LINKED = """() => [...document.querySelectorAll('link[href], script[src], img[src], source[src], iframe[src]')]
    .map(e => e.href || e.src)"""


def leaves(url: str) -> bool:
    """Whether a request to ``url`` goes to another machine (an inline image or script goes nowhere)."""
    if url.startswith(INLINE):
        return False
    return urlsplit(url).hostname not in LOCAL_HOSTS


def test_no_request_leaves_127_0_0_1_while_the_pages_load(server, page):
    seen: list[str] = []
    page.on("request", lambda request: seen.append(request.url))
    page.on("websocket", lambda socket: seen.append(socket.url))

    def refuse(route) -> None:  # recorded above; an outside request is refused at once instead of waiting on it
        if leaves(route.request.url):
            route.abort()
        else:
            route.continue_()

    page.route("**/*", refuse)
    linked: dict[str, list[str]] = {}
    for path in PATHS:
        open_app(page, server, path)
        settle(page)
        linked[path] = [u for u in page.evaluate(LINKED) if leaves(u)]
    icon = page.evaluate("() => document.querySelector('link[rel~=icon]')?.href || ''")
    outside = sorted({u for u in seen if leaves(u)})
    assert not outside, outside
    assert not any(linked.values()), {p: u for p, u in linked.items() if u}
    assert icon.startswith("data:image/svg+xml"), icon[:80]  # the app's own icon, inline
    assert len([u for u in seen if "/_stcore/stream" in u]) >= 1  # the recording saw the app's own socket


def test_the_check_sees_a_request_to_another_host():
    assert leaves(
        "https://fonts.gstatic.com/s/i/short-term/release/materialsymbolsrounded/visibility/default/24px.svg"
    )
    assert leaves("http://localhost:8501/")  # another name is another host to the check: the app serves 127.0.0.1
    assert not leaves("http://127.0.0.1:8501/static/js/index.js")
    assert not leaves("data:image/svg+xml;base64,PHN2Zz4=")


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
