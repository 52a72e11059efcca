"""README.md is the front door and docs/*.md the rest: the README stays short and starts with the two commands,
every relative link and image in either resolves (a link's #anchor to a heading of its target), and the README
names every page by its path. Each check is also pointed once at a broken input to show it can fail."""

import re
from pathlib import Path

import pytest

from explorer.pages import PAGES

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOC_FILES = [README, *sorted((ROOT / "docs").glob("*.md"))]
MAX_README_LINES = 130
COMMANDS = ("pip install -r requirements.txt && streamlit run app.py", "bash scripts/test.sh")

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.DOTALL | re.MULTILINE)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//)", re.IGNORECASE)  # http:, https:, mailto:, //host


def too_long(text: str, limit: int = MAX_README_LINES) -> bool:
    return len(text.splitlines()) > limit


def commands_first(text: str) -> bool:
    """Whether the first fenced block, near the top, starts with the two commands."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines[:8]) if line.startswith("```")]
    if not starts:
        return False
    first = lines[starts[0] + 1 : starts[0] + 1 + len(COMMANDS)]
    return len(first) == len(COMMANDS) and all(
        line.strip().startswith(cmd) for line, cmd in zip(first, COMMANDS, strict=True)
    )


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lowercase, punctuation other than '-' and '_' dropped, spaces to '-'
    (letters and digits of any script, CJK included, kept)."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading's anchor in a Markdown text (outside fenced code; a repeated slug gets -1, -2, ...)."""
    seen: dict[str, int] = {}
    out = set()
    for line in FENCE.sub("", text).splitlines():
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        base = slug(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(text: str) -> list[str]:
    """The targets of the Markdown links and images of a text, code blocks and code spans left out."""
    return LINK.findall(INLINE_CODE.sub("", FENCE.sub("", text)))


def broken_links(text: str, base: Path) -> list[str]:
    """The relative links and images of ``text`` (a file in ``base``) whose file is missing, or whose #anchor
    names no heading of the Markdown file it points at."""
    bad = []
    for target in links(text):
        if EXTERNAL.match(target):
            continue
        path, _, anchor = target.partition("#")
        file = (base / path).resolve() if path else None
        if file is not None and not file.exists():
            bad.append(target)
            continue
        if anchor:
            heads = anchors(file.read_text(encoding="utf-8") if file is not None else text)
            if (file is None or file.suffix == ".md") and anchor not in heads:
                bad.append(target)
    return bad


def unnamed_pages(text: str, url_paths: list[str]) -> list[str]:
    """The page paths that ``text`` never names as `/url_path`."""
    return [p for p in url_paths if not re.search(rf"(?<![\w/])/{re.escape(p)}(?![\w/])", text)]


URL_PATHS = [p.url_path for p in PAGES]


def test_the_readme_is_short():
    text = README.read_text(encoding="utf-8")
    assert not too_long(text), f"README.md has {len(text.splitlines())} lines, at most {MAX_README_LINES}"


def test_the_readme_starts_with_the_two_commands():
    assert commands_first(README.read_text(encoding="utf-8")), COMMANDS


@pytest.mark.parametrize("doc", DOC_FILES, ids=[p.relative_to(ROOT).as_posix() for p in DOC_FILES])
def test_every_relative_link_and_image_resolves(doc):
    bad = broken_links(doc.read_text(encoding="utf-8"), doc.parent)
    assert not bad, f"{doc.relative_to(ROOT)}: links to nothing: {bad}"


def test_the_readme_links_to_every_docs_page():
    linked = {(README.parent / t.partition("#")[0]).resolve() for t in links(README.read_text(encoding="utf-8"))}
    assert not [p for p in DOC_FILES[1:] if p.resolve() not in linked], "docs pages the README does not link"


def test_every_docs_page_has_a_title_and_a_way_back():
    for doc in DOC_FILES[1:]:
        lines = doc.read_text(encoding="utf-8").splitlines()
        assert lines and lines[0].startswith("# "), doc
        assert any("../README.md" in line for line in lines[:4]), doc


def test_the_readme_names_every_page_by_its_path():
    assert len(URL_PATHS) >= 11
    missing = unnamed_pages(README.read_text(encoding="utf-8"), URL_PATHS)
    assert not missing, f"README.md never names /{', /'.join(missing)}"


NUMBERS = re.findall(  # "one" .. "twenty-five": a count written in words
    r"\S+",
    "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen "
    "eighteen nineteen twenty twenty-one twenty-two twenty-three twenty-four twenty-five",
)
LESSONS = re.compile(r"\b([A-Za-z-]+|\d+)\s+(?:short\s+)?lessons\b", re.IGNORECASE)


def tour_counts(text: str) -> list[int]:
    """The number of lessons each line that speaks of the tour gives ("a guided tour of sixteen lessons"), in
    digits or in words ("the lessons" gives none)."""
    found: list[int] = []
    for line in FENCE.sub("", text).splitlines():
        if "tour" not in line.lower():
            continue
        for word in LESSONS.findall(line):
            w = word.lower()
            if w.isdigit() or w in NUMBERS:
                found.append(int(w) if w.isdigit() else NUMBERS.index(w) + 1)
    return found


def test_the_docs_count_the_tours_lessons_as_the_code_does():
    from explorer.classroom.tour import TOUR

    counted = {doc.relative_to(ROOT).as_posix(): tour_counts(doc.read_text(encoding="utf-8")) for doc in DOC_FILES}
    assert any(counted.values()), "no document says how many lessons the tour has"
    wrong = {doc: n for doc, n in counted.items() if any(c != len(TOUR) for c in n)}
    assert not wrong, f"the tour has {len(TOUR)} lessons; the docs say {wrong}"


def test_the_lesson_count_is_read_from_the_words():
    assert tour_counts("- **A guided tour.** Fourteen lessons on the start page") == [14]
    assert tour_counts("a guided tour of 15 short lessons, and 64 lessons of 32 questions") == [15, 64]
    assert tour_counts("keeps at most 64 lessons of 32 questions") == []  # no tour on the line: the poll's limit
    assert tour_counts("the tour: the lessons ask for it") == []


def test_slugs_follow_githubs_rules():
    assert slug("Is attention an explanation?") == "is-attention-an-explanation"
    engine = "The engine: `attn_core` (pure PyTorch, no Streamlit)"
    assert slug(engine) == "the-engine-attn_core-pure-pytorch-no-streamlit"
    assert slug("Multi-head") == "multi-head"
    assert slug("逐步 注意力") == "逐步-注意力"
    assert anchors("# A\n## A\n```\n# B\n```\n") == {"a", "a-1"}


def _write(tmp: Path) -> Path:
    (tmp / "docs").mkdir()
    (tmp / "docs" / "pages.md").write_text("# Pages\n\n## Step by step\n", encoding="utf-8")
    (tmp / "docs" / "images").mkdir()
    (tmp / "docs" / "images" / "a.png").write_bytes(b"")
    return tmp


@pytest.mark.parametrize(
    ("check", "good", "broken"),
    [
        ("too_long", "# t\n" * 130, "# t\n" * 131),
        ("commands_first", "# T\n\n```bash\n" + "\n".join(COMMANDS) + "\n```\n", "# T\n\n```bash\n" + COMMANDS[1]),
        ("missing_file", "[p](docs/pages.md)", "[p](docs/nowhere.md)"),
        ("missing_image", "![a](docs/images/a.png)", "![b](docs/images/b.png)"),
        ("missing_anchor", "[s](docs/pages.md#step-by-step)", "[s](docs/pages.md#step-by-steps)"),
        ("missing_own_anchor", "# Top\n[t](#top)", "# Top\n[t](#bottom)"),
        ("unnamed_page", "`/steps`, `/next_token`", "`/steps`, `/next_tokens`"),
    ],
)
def test_each_check_fails_on_a_broken_input(tmp_path, check, good, broken):
    base = _write(tmp_path)

    def fails(text: str) -> bool:
        if check == "too_long":
            return too_long(text)
        if check == "commands_first":
            return not commands_first(text)
        if check == "unnamed_page":
            return bool(unnamed_pages(text, ["steps", "next_token"]))
        return bool(broken_links(text, base))

    assert not fails(good), good
    assert fails(broken), broken
    if check.startswith("missing"):
        assert broken_links(broken, base) == [re.search(r"\(([^)]*)\)", broken).group(1)]
