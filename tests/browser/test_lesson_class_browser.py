"""A class in Chromium: three students join a lesson on the start page and click into Step by step
(the sidebar, a start-page card, a detour through Multi-head), each answers, and the teacher's link
(on the start page, then on Step by step) counts three answers. And the browser's Back: one entry
per page visited."""

from urllib.parse import parse_qs, urlsplit

from playwright.sync_api import expect
from test_browser import settle

WAIT = 60_000
CODE = "walk-9"


def open_at(page, url: str) -> None:
    page.goto(url)
    expect(page.locator("h1").first).to_be_visible(timeout=WAIT)
    settle(page)


def sidebar_to(page, title: str) -> None:
    page.get_by_test_id("stSidebarNav").get_by_text(title, exact=True).click()
    expect(page.locator("h1", has_text=title).first).to_be_visible(timeout=WAIT)
    settle(page)


def card_to(page, title: str) -> None:
    page.get_by_test_id("stMain").get_by_test_id("stPageLink").filter(has_text=title).first.click()
    expect(page.locator("h1", has_text=title).first).to_be_visible(timeout=WAIT)
    settle(page)


def query(page) -> dict:
    return {k: v[0] for k, v in parse_qs(urlsplit(page.url).query).items()}


def predict(page) -> None:
    expect(page.get_by_text("attend to most?").first).to_be_visible(timeout=WAIT)
    assert page.locator(".js-plotly-plot").count() == 0  # the weights wait for the answer
    page.get_by_test_id("stRadio").filter(has_text="4 dessert").get_by_text("4 dessert").click()
    settle(page)
    page.get_by_role("button", name="Reveal").click()
    expect(page.get_by_text("Right: 'is' attends most to 4 dessert").first).to_be_visible(timeout=WAIT)


def test_three_students_walk_a_lesson_across_pages_and_the_teacher_counts_three(server, browser):
    contexts = [browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(4)]
    try:
        teacher, *students = (ctx.new_page() for ctx in contexts)
        open_at(teacher, f"{server}/?teacher=1&lesson={CODE}")  # the teacher's link on the start page
        expect(teacher.get_by_text(f"Lesson {CODE}: the class's answers, live")).to_be_visible(timeout=WAIT)
        expect(teacher.get_by_text("No answers yet").first).to_be_visible(timeout=WAIT)

        for student in students:
            open_at(student, f"{server}/?lesson={CODE}&predict=1")
        sidebar_to(students[0], "Step by step")  # the sidebar
        card_to(students[1], "Step by step")  # a start-page card
        sidebar_to(students[2], "Multi-head")  # a detour: the lesson goes along
        assert query(students[2])["lesson"] == CODE
        sidebar_to(students[2], "Step by step")
        for n, student in enumerate(students, 1):
            assert query(student)["lesson"] == CODE and query(student)["predict"] in ("1", "true")
            predict(student)
            expect(teacher.get_by_text(f"{n} answer").first).to_be_visible(timeout=WAIT)  # live, no reload

        expect(teacher.get_by_text("3 answers to 1 question").first).to_be_visible(timeout=WAIT)
        sidebar_to(teacher, "Step by step")  # the teacher's view goes along too: this question's histogram
        assert query(teacher)["teacher"] in ("1", "true") and query(teacher)["lesson"] == CODE
        expect(teacher.get_by_text("3 answers so far for 'is'").first).to_be_visible(timeout=WAIT)
        assert teacher.get_by_test_id("stException").count() == 0
    finally:
        for ctx in contexts:
            ctx.close()


def test_back_goes_to_the_page_before_not_to_the_last_setting(server, page):
    open_at(page, f"{server}/")
    start = page.evaluate("history.length")
    sidebar_to(page, "Step by step")
    sidebar_to(page, "Multi-head")
    heads = page.locator("input[aria-label='Heads']")
    heads.fill("4")
    heads.press("Enter")
    settle(page)
    assert query(page).get("heads") == "4"
    assert page.evaluate("history.length") == start + 2  # one entry per page visited, none per setting

    page.go_back()
    expect(page.locator("h1", has_text="Step by step").first).to_be_visible(timeout=WAIT)
    settle(page)
    assert urlsplit(page.url).path == "/steps"
    page.go_back()
    expect(page.get_by_test_id("stMain").get_by_test_id("stPageLink").first).to_be_visible(timeout=WAIT)
    settle(page)
    assert urlsplit(page.url).path == "/"
    assert page.get_by_test_id("stException").count() == 0


def test_a_link_opened_fresh_is_one_entry_however_it_spells_its_switches(server, browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = ctx.new_page()  # about:blank, then the link: two entries
        open_at(page, f"{server}/steps?predict=1&causal=yes&heads=2&temperature=2&lesson={CODE}")
        expect(page.get_by_text("attend to most?").first).to_be_visible(timeout=WAIT)
        assert query(page)["predict"] == "1" and query(page)["causal"] == "yes"  # read as written, not rewritten
        assert page.evaluate("history.length") == 2
    finally:
        ctx.close()
