"""A lesson's concept check in Chromium: the teacher opens a lesson with a check, two students hand in the pre
check, the teacher's button opens the post check for the class (the students' pages notice it by themselves), the
students hand it in, and the teacher's table and its CSV download show the numbers counted here by hand."""

import csv
import io
from pathlib import Path

import serve
from playwright.sync_api import expect
from test_browser import settle

WAIT = 60_000
CODE = "chk-b1"
ITEMS = "qkv-shape,mask-causal"  # both answered by option 1 (the bank: 'L × d_k'; scores −∞ before the softmax)
QUESTION = {"qkv-shape": "What is the shape of Q", "mask-causal": "How does a causal mask keep"}
# The class, each student's option per item before and after.
SHEETS = {
    "pre": [{"qkv-shape": 0, "mask-causal": 1}, {"qkv-shape": 2, "mask-causal": 0}],
    "post": [{"qkv-shape": 1, "mask-causal": 1}, {"qkv-shape": 0, "mask-causal": 1}],
}
# Counted by hand. qkv-shape: right before 0 of 2 (0 %), after 1 of 2 (50 %): g = (50 − 0) / (100 − 0) = 0.50;
# options before [1, 0, 1], after [1, 1, 0]. mask-causal: before 1 of 2 (50 %), after 2 of 2 (100 %):
# g = (100 − 50) / (100 − 50) = 1.00; options before [1, 1, 0], after [0, 2, 0]. The class: mean g 0.75, sample
# standard deviation sqrt(((0.5 − 0.75)² + (1 − 0.75)²) / 1) = 0.3536.
TABLE = {
    "qkv-shape": ["2", "0 %", "2", "50 %", "0.50"],
    "mask-causal": ["2", "50 %", "2", "100 %", "1.00"],
}
CSV = [
    ["item", "concept", "answer", "n_pre", "correct_pre", "share_pre", "n_post", "correct_post", "share_post"]
    + ["gain", "options_pre", "options_post"],
    ["qkv-shape", "qkv", "1", "2", "0", "0.0000", "2", "1", "50.0000", "0.5000", "1 0 1", "1 1 0"],
    ["mask-causal", "masks", "1", "2", "1", "50.0000", "2", "2", "100.0000", "1.0000", "1 1 0", "0 2 0"],
    ["class", "", "", "", "", "", "", "", "", "0.7500", "spread 0.3536", ""],
]
COLUMNS = ["Answers before", "Right before", "Answers after", "Right after", "Gain g"]


def open_at(page, url: str) -> None:
    page.goto(url)
    expect(page.locator("h1, h2").first).to_be_visible(timeout=WAIT)
    settle(page)


def hand_in(page, phase: str, sheet: dict) -> None:
    title = {"pre": "Before the lesson: a short check", "post": "After the lesson: the same check again"}[phase]
    expect(page.get_by_text(title)).to_be_visible(timeout=WAIT)
    main = page.get_by_test_id("stMain")
    for item_id, option in sheet.items():
        radio = main.get_by_test_id("stRadio").filter(has_text=QUESTION[item_id])
        radio.get_by_test_id("stRadioOption").nth(option).click()
        settle(page)
    page.get_by_role("button", name="Hand in").click()
    settle(page)
    expect(page.get_by_text(title)).to_have_count(0, timeout=WAIT)


ROWS = "t => Array.from(t.querySelectorAll('tr')).map(r => Array.from(r.children).map(c => c.innerText.trim()))"


def table(page) -> dict[str, dict[str, str]]:
    """The teacher's table: item id -> {column: cell}."""
    rows = page.get_by_test_id("stTable").last.evaluate(ROWS)
    head = rows[0]
    return {r[head.index("Item")]: dict(zip(head, r, strict=True)) for r in rows[1:]}


def test_a_class_takes_the_check_before_and_after_and_the_teacher_sees_the_hand_count(server, page, tmp_path):
    teacher = page
    students = [page.context.new_page() for _ in range(2)]
    open_at(teacher, f"{server}/?teacher=1&lesson={CODE}&items={ITEMS}")
    expect(teacher.get_by_text(f"The check of lesson {CODE}: before and after")).to_be_visible(timeout=WAIT)
    expect(teacher.get_by_text("Nobody has handed in the check yet.")).to_be_visible(timeout=WAIT)

    for student, sheet in zip(students, SHEETS["pre"], strict=True):
        open_at(student, f"{server}/?lesson={CODE}&check=pre&items={ITEMS}")
        hand_in(student, "pre", sheet)
        expect(student.get_by_text("Your check is handed in.")).to_be_visible(timeout=WAIT)
    teacher.wait_for_function(  # the teacher's table follows by itself (its fragment reruns): both pre checks in
        f"""() => {{
            const t = [...document.querySelectorAll("[data-testid='stTable']")].pop();
            if (!t) return false;
            const rows = ({ROWS})(t), col = rows[0].indexOf("Answers before");
            return rows.length === 3 && rows.slice(1).every(r => r[col] === "2");
        }}""",
        polling=serve.POLL,
        timeout=WAIT,
    )
    expect(teacher.get_by_text("The post check opens when you press the button")).to_be_visible()

    teacher.get_by_role("button", name="Open the post check for the class").click()
    settle(teacher)
    for student, sheet in zip(students, SHEETS["post"], strict=True):  # each page notices the switch by itself
        hand_in(student, "post", sheet)
        expect(student.get_by_text("Your check, before and after the lesson")).to_be_visible(timeout=WAIT)

    # the class's line changes last: 0.75 and its spread only once both post checks are in
    line = "mean normalized gain g = (post − pre) / (100 − pre) of 0.75 over 2 items (spread 0.35)"
    expect(teacher.get_by_text(line)).to_be_visible(timeout=WAIT)
    rows = table(teacher)
    assert {k: [v[c] for c in COLUMNS] for k, v in rows.items()} == TABLE
    assert rows["qkv-shape"]["Options"] == "A) d_model × d_k · B) L × d_k · C) L × L"
    assert rows["qkv-shape"]["Answers before, per option"] == "A 1 · B 0 · C 1"
    assert rows["qkv-shape"]["Answers after, per option"] == "A 1 · B 1 · C 0"
    # options that begin alike (mask-causal's) stay apart: each is named whole
    masks = rows["mask-causal"]["Options"].split(" · ")
    assert len(masks) == len(set(masks)) == 3

    with teacher.expect_download(timeout=WAIT) as info:
        teacher.get_by_role("button", name="Download the check's report (CSV)").click()
    assert info.value.suggested_filename == f"check-{CODE}.csv"
    text = Path(info.value.path()).read_text(encoding="utf-8")
    assert list(csv.reader(io.StringIO(text))) == CSV
    for p in (teacher, *students):
        assert p.get_by_test_id("stException").count() == 0
