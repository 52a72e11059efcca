"""Lesson links: a teacher's link that hides some settings and locks others.

``?hide=score,mask&lock=heads`` (the sidebar settings' own URL names, comma-separated; the
names are a contract that lesson plans rely on): a hidden setting keeps the link's value (or its
default) and is not drawn; a locked one is drawn and cannot be changed. Unknown names are dropped
from the link and named in the sidebar's notice. The builder in the sidebar composes such a link
from the current view, and a class's lesson with it: a lesson code (``?lesson=``), predict, then
reveal (``?predict=1``), and the two links, the students' and the teacher's (``&teacher=1``).
"""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

from explorer.base import session, widgets
from explorer.base.i18n import t
from explorer.base.urlcheck import switch
from explorer.controls import BY_NAME, SIDEBAR
from explorer.poll import link as poll

PARAMS = ("hide", "lock")
OPEN_KEY = "lesson_open"  # the builder's expander: open, it draws (see ``builder``)
KEPT = "_lesson_kept"  # the builder's hide and lock lists, while it is closed


def _names(param: str) -> frozenset[str]:
    raw = session.url(param)
    if raw is None:
        return frozenset()
    parts = [p.strip() for p in raw.split(",") if p.strip()]
    good = [p for p in parts if p in BY_NAME]
    if not good or len(good) != len(parts):  # a name no setting has (or none): dropped, the parameter named
        session.notice(param)
        if good:
            session.set_url(param, ",".join(dict.fromkeys(good)))
        else:
            session.drop_url(param)
    return frozenset(good)


def read() -> tuple[frozenset[str], frozenset[str]]:
    """(hidden, locked) from the link; a setting both hidden and locked is hidden."""
    hidden, locked = _names("hide"), _names("lock")
    return hidden, locked - hidden


CLASS = ("lesson", "predict", "teacher")  # a class's own parameters: the builder composes them
CHECK = ("check", "items")  # the lesson's concept check (explorer.classroom.check_view): the builder composes them too


def link(
    hide: list[str],
    lock: list[str],
    *,
    code: str | None = None,
    predict: bool | None = None,
    teacher: bool = False,
    check: dict | None = None,
) -> str:
    """This view's link with these settings hidden and locked; with ``code``, the lesson's link
    (``teacher``: the teacher's, which shows the class's answers live); ``predict``: predict, then
    reveal (None: as this view has it); ``check``: the lesson's check (``{"check": "pre", "items": "ID,…"}``)."""
    mine = PARAMS + CLASS if predict is not None else PARAMS + ("lesson", "teacher")
    params = {k: v for k, v in session.url_params().items() if k not in mine + CHECK}
    if hide:
        params["hide"] = ",".join(hide)
    if lock:
        params["lock"] = ",".join(lock)
    if code:
        params["lesson"] = code
    if predict:
        params["predict"] = "1"
    if code and teacher:
        params["teacher"] = "1"
    if code and check:
        params.update(check)
    base = (getattr(st.context, "url", None) or "").split("?")[0]
    return f"{base}?{urlencode(params, safe=',')}" if params else base or "?"


def _kept(hidden: frozenset[str], locked: frozenset[str]) -> tuple[list[str], list[str]]:
    """The builder's hide and lock lists as the teacher left them, else the link's."""
    kept = session.get(KEPT)
    return kept if isinstance(kept, tuple) and len(kept) == 2 else (sorted(hidden), sorted(locked))


def builder(hidden: frozenset[str], locked: frozenset[str]) -> None:
    """The sidebar's "Lesson link" box: choose what to hide and lock, copy the link."""
    names = [c.name for c in SIDEBAR]

    def title(name: str) -> str:
        return f"{t(BY_NAME[name].title or name)} ({name})"

    # Drawn only while a teacher has it open: its two lists of every setting cost each student's every rerun
    # more than a page's chart does (benchmarks/results/rerun_cost_cpu.txt). What the teacher chose is kept
    # while it is closed.
    box = widgets.expander(st.sidebar, t("lesson_link"), key=OPEN_KEY, icon=":material/school:")
    if not box.open:
        return
    kept_hide, kept_lock = _kept(hidden, locked)
    with box:
        st.caption(t("lesson_help"))
        session.translated("lesson_hide", "lesson_lock")  # labels in the UI's language: re-pinned on a switch

        def pick(key: str, options: list[str], kept: list[str]) -> list[str]:
            default = [n for n in kept if n in options]
            return widgets.multiselect(st, t(key), options, default=default, format_func=title, key=key)

        hide = pick("lesson_hide", names, kept_hide)
        lock = pick("lesson_lock", [n for n in names if n not in hide], kept_lock)
        session.put(KEPT, (list(hide), list(lock)))
        code = widgets.text(
            st, t("lesson_code"), poll.lesson() or "", key="lesson_code", max_chars=16, help=t("lesson_code_help")
        ).strip()
        if code and not poll.valid_code(code):  # typed text is data: said, and left out of the link
            st.warning(t("lesson_code_bad"), icon=":material/edit_off:")
            code = ""
        on = switch(session.url("predict")) is True
        predict = widgets.checkbox(st, t("lesson_predict"), on, key="lesson_predict")
        if not code:
            st.code(link(hide, lock, predict=predict), language=None, wrap_lines=True)
            return
        from explorer.classroom.check_view import builder_ui, post_caption

        ids = ",".join(builder_ui())  # the lesson's check: items picked, or a tour lesson's ready set
        pre, post = ({"check": phase, "items": ids} if ids else None for phase in ("pre", "post"))
        st.caption(t("lesson_student_link"))
        st.code(link(hide, lock, code=code, predict=predict, check=pre), language=None, wrap_lines=True)
        st.caption(t("lesson_teacher_link"))
        st.code(link(hide, lock, code=code, predict=predict, teacher=True, check=pre), language=None, wrap_lines=True)
        if post:
            st.caption(post_caption())
            st.code(link(hide, lock, code=code, predict=predict, check=post), language=None, wrap_lines=True)
