"""The concept check in a lesson: the students' check before and after, the teacher's report, the link builder's
part.

``?lesson=CODE&check=pre&items=ID,ID,…`` shows the check before the lesson's pages (each item a radio keyed
``check_<item id>``, one button ``check_submit``); ``check=post`` shows the same items at the end, as does the
teacher's button that opens the post check for the whole class (``attn_core.classroom.check``'s switch, on every
replica). A student who joins late takes the pre check first. No answer is shown before the post check is handed
in; then each student sees their own before and after. With the store unreachable the check still runs and says that
it is not being counted. The texts are the bank's (``attn_core/check/bank.toml``'s ``[messages]``, both languages).
"""

from __future__ import annotations

import csv
import functools
import io

import streamlit as st

from attn_core.check.bank import PHASES, CheckError, by_id, check_items, message, parse_ids
from attn_core.classroom import check
from attn_core.classroom.base import PollUnavailable
from attn_core.config import Settings
from attn_core.errors import AttentionConfigError
from explorer.base import session, widgets
from explorer.base.i18n import lang
from explorer.base.safe import md
from explorer.poll import link as poll

STATE = "_check"  # this session's check: its lesson, items, settings and sheets
# a ready set per lesson of the tour: the concepts of the bank it asks about (explorer.classroom.tour's keys)
TOUR_SETS = {
    "qkv": ("qkv",),
    "scores": ("scores",),
    "scale": ("scores",),
    "softmax": ("softmax",),
    "mask": ("masks",),
    "heads": ("heads",),
    "positions": ("positions",),
    "cross": ("cross",),
    "cost": ("cost",),
    "sparse": ("cost",),
    "linear": ("cost",),
    "approx": ("cost",),
    "real": ("heads", "scores"),
    "next_token": ("decoder",),
    "copying": ("induction", "decoder"),
}


def ct(key: str, **fmt) -> str:
    return message(key, lang(), **fmt)


@functools.lru_cache(maxsize=256)  # plain values: one computation per language, settings and items, per server
def shown_items(language: str, settings: Settings, ids: tuple[str, ...]) -> tuple[tuple[dict, ...], tuple[str, ...]]:
    try:
        shown, left_out = check_items(language, settings, ids=ids)
    except AttentionConfigError:  # settings a live item cannot use: the check goes on without the live items
        live = [i for i in ids if by_id()[i].live]
        shown, _ = check_items(language, None, ids=tuple(i for i in ids if i not in live))
        reason = message("reason_settings", language)
        left_out = [message("live", language, item=i, reason=reason) for i in live]
    return tuple(shown), tuple(left_out)


def read() -> tuple[str | None, tuple[str, ...] | None]:
    """``?check=`` and ``?items=`` checked: a bad one is dropped from the link and named in the sidebar's notice."""
    phase, raw = session.url("check"), session.url("items")
    if phase is not None and phase not in PHASES:
        session.drop_url("check")
        session.notice("check")
        phase = None
    ids = None
    if raw is not None:
        try:
            ids = parse_ids(raw)
        except CheckError:
            session.drop_url("items")
            session.notice("items")
    return phase, ids


def _state(code: str | None, ids: tuple[str, ...], settings: Settings) -> dict:
    state = session.get(STATE)
    if not isinstance(state, dict) or state.get("code") != code or state.get("ids") != ids:
        state = {"code": code, "ids": ids, "settings": settings, "pre": None, "post": None, "uncounted": False}
        session.put(STATE, state)
    return state


def _post_open(code: str | None) -> bool:
    if not code:
        return False
    try:
        return check.post_open(check.CHECKS, code)
    except PollUnavailable:
        return False


def gate(settings: Settings, notice_slot=None) -> None:
    """Before the page: the check this session still owes (the page waits), or its own results after it.
    ``notice_slot``: where the sidebar names the link's parameters that could not be used."""
    from explorer.base.urlcheck import show_notices

    phase, ids = read()
    if notice_slot is not None:
        show_notices(notice_slot)
    if ids is None or poll.teacher():
        return
    code = poll.lesson()
    state = _state(code, ids, settings)
    shown, left_out = shown_items(lang(), state["settings"], ids)
    for owed in ("pre", "post"):
        if state[owed] is None and (owed == "pre" or phase == "post" or _post_open(code)):
            form(owed, shown, left_out, state)
            st.stop()
    if state["post"] is not None:
        with st.expander(ct("ui_mine_title"), expanded=False, icon=":material/fact_check:"):
            mine(shown, state)
        return
    st.caption(ct("ui_pre_done"))
    if code:
        watch(code)


def watch(code: str) -> None:
    @st.fragment(run_every=10.0)  # the teacher's button opens the post check: this session notices it
    def waiting() -> None:
        if _post_open(code):
            st.rerun(scope="app")

    waiting()


def form(phase: str, shown: tuple, left_out: tuple, state: dict) -> None:
    st.header(ct(f"ui_title_{phase}"))
    st.caption(ct(f"ui_intro_{phase}"))
    for line in left_out:
        st.caption(line)
    picks = {}
    for k, item in enumerate(shown):
        options = [md(o) for o in item["options"]]
        picks[item["id"]] = widgets.radio(
            st,
            f"{k + 1}. {md(item['question'])}",
            range(len(options)),
            format_func=lambda j, options=options: options[j],
            default=None,
            key=f"check_{item['id']}",
        )
    if not st.button(ct("ui_submit"), type="primary", key="check_submit"):
        return
    answers = {i: int(v) for i, v in picks.items() if v is not None}
    if not answers:
        st.warning(ct("ui_none"), icon=":material/rule:")
        return
    hand_in(phase, list(shown), answers, state)


def hand_in(phase: str, shown: list, answers: dict, state: dict) -> None:
    from explorer.base.runtime import session_id

    code = state["code"]
    try:
        if code:
            check.hand_in(check.CHECKS, code, session_id(), phase, shown, answers)
        else:
            check.validate("local", phase, shown, answers)
    except CheckError as err:  # a forged answer: said, nothing counted
        st.error(err.text(lang()), icon=":material/block:")
        return
    except PollUnavailable:
        state["uncounted"] = True
    state[phase] = answers
    session.forget(*(f"check_{item['id']}" for item in shown))  # the post check starts with nothing picked
    st.rerun()


def mine(shown: tuple, state: dict) -> None:
    """This student's own answers before and after, with the right one (after the post check only)."""
    if state.get("uncounted"):
        st.warning(ct("ui_uncounted"), icon=":material/cloud_off:")
    rows = []
    for item in shown:
        options = item["options"]

        def name(k, options=options):
            return "—" if k is None else options[k]

        pre, post = state["pre"].get(item["id"]), state["post"].get(item["id"])
        rows.append(
            {
                ct("ui_col_question"): item["question"],
                ct("ui_col_before"): name(pre),
                ct("ui_col_after"): name(post),
                ct("ui_col_right"): options[item["answer"]],
            }
        )
    right = [(state["pre"].get(i["id"]) == i["answer"], state["post"].get(i["id"]) == i["answer"]) for i in shown]
    st.write(ct("ui_mine_score", pre=sum(a for a, _ in right), post=sum(b for _, b in right), n=len(shown)))
    st.table(rows)


# ---- the teacher's view -----------------------------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f} %"


def _letter(k: int) -> str:
    return chr(ord("A") + k) if k < 26 else str(k + 1)


def _spread(counts: list[int]) -> str:
    """'A 1 · B 0 · C 1': the answers per option, each option by its letter (the options column names them whole:
    options that begin alike stay apart)."""
    return " · ".join(f"{_letter(k)} {c}" for k, c in enumerate(counts))


def _options(labels: list[str]) -> str:
    return " · ".join(f"{_letter(k)}) {label}" for k, label in enumerate(labels))


def table_rows(report: dict) -> list[dict]:
    rows = []
    for row in report["items"]:
        pre, post = row["pre"], row["post"]
        rows.append(
            {
                ct("ui_col_item"): row["id"],
                ct("ui_col_n_pre"): pre["n"],
                ct("ui_col_pre"): _pct(pre["share"]),
                ct("ui_col_n_post"): post["n"],
                ct("ui_col_post"): _pct(post["share"]),
                ct("ui_col_gain"): "—" if row["gain"] is None else f"{row['gain']:.2f}",
                ct("ui_col_options"): _options(row["options"]),
                ct("ui_col_spread_pre"): _spread(pre["options"]),
                ct("ui_col_spread_post"): _spread(post["options"]),
            }
        )
    return rows


def report_csv(report: dict) -> str:
    """The report as CSV: one row per item, then the class's mean gain and spread (no session ids)."""
    out = io.StringIO()
    w = csv.writer(out)
    head = ["item", "concept", "answer", "n_pre", "correct_pre", "share_pre", "n_post", "correct_post", "share_post"]
    w.writerow([*head, "gain", "options_pre", "options_post"])

    def num(x):
        return "" if x is None else f"{x:.4f}"

    for row in report["items"]:
        pre, post = row["pre"], row["post"]
        w.writerow(
            [row["id"], row["concept"], row["answer"], pre["n"], pre["correct"], num(pre["share"]), post["n"]]
            + [post["correct"], num(post["share"]), num(row["gain"])]
            + [" ".join(map(str, pre["options"])), " ".join(map(str, post["options"]))]
        )
    c = report["class"]
    w.writerow(["class", "", "", "", "", "", "", "", "", num(c["mean_gain"]), f"spread {num(c['spread'])}", ""])
    return out.getvalue()


def teacher_if_asked(code: str | None) -> None:
    """The teacher's report where the teacher's link names a check (``?items=``)."""
    if code and session.url("items") is not None and read()[1] is not None:
        teacher(code)


def post_caption() -> str:
    return ct("ui_link_post")


def teacher(code: str) -> None:
    """The lesson's check for the teacher: per item n, share correct before and after, gain and the answers'
    spread, the class's mean gain and spread, the CSV and the button that opens the post check."""
    st.subheader(ct("ui_report_title", code=code))

    @st.fragment(run_every=3.0)
    def live() -> None:
        try:
            report = check.report(check.CHECKS, code)
            opened = check.post_open(check.CHECKS, code)
        except PollUnavailable:
            st.warning(ct("ui_unavailable"), icon=":material/cloud_off:")
            return
        if not report["items"]:
            st.caption(ct("ui_report_empty"))
            return
        c = report["class"]
        if c["mean_gain"] is not None:
            spread = "—" if c["spread"] is None else f"{c['spread']:.2f}"
            st.write(ct("ui_class_gain", mean=f"{c['mean_gain']:.2f}", spread=spread, n=c["items_with_gain"]))
        st.table(table_rows(report))
        st.caption(ct("ui_post_open" if opened else "ui_post_closed"))

    live()
    c1, c2 = st.columns(2)
    c1.download_button(
        ct("ui_download"),
        data=lambda: _csv_now(code),
        file_name=f"check-{code}.csv",
        mime="text/csv",
        on_click="ignore",
        key="check_download",
    )
    if c2.button(ct("ui_open_post"), key="check_open_post"):
        try:
            check.open_post(check.CHECKS, code)
        except PollUnavailable:
            st.warning(ct("ui_unavailable"), icon=":material/cloud_off:")


def _csv_now(code: str) -> str:
    try:
        return report_csv(check.report(check.CHECKS, code))
    except PollUnavailable:
        return ct("ui_unavailable") + "\n"


# ---- the link builder's part --------------------------------------------------------------------------------------


def builder_ui() -> tuple[str, ...]:
    """The items a teacher picks for the lesson's check (or a tour lesson's ready set); () for no check."""
    from explorer.base.i18n import t

    sets = ["", *TOUR_SETS]
    language = lang()  # the labels' language, fixed when drawn (a widget's labels are formatted after the run too)
    ready = widgets.selectbox(
        st,
        ct("ui_ready_set"),
        sets,
        format_func=lambda k: message("ui_no_set", language) if not k else t(f"tour.{k}.title", language=language),
        key="check_set",
    )
    preset = [i.id for i in by_id().values() if ready and i.concept in TOUR_SETS[ready]]
    ids = list(by_id())
    picked = widgets.multiselect(
        st,
        ct("ui_pick_items"),
        ids,
        default=preset,
        format_func=_item_title(language),
        key=f"check_items_{ready or 'own'}",
    )
    return tuple(picked)


def _item_title(language: str):
    def title(item_id: str) -> str:
        return f"{item_id} · {by_id()[item_id].question[language][:50]}"

    return title
