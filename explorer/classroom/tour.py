"""The guided tour: short lessons from the source documents, each a lesson link into the right page
with one question, in order. ``?tour=<key>`` on any page shows that lesson's question above the
page, with the way to the next one; the start page lists them all."""

from __future__ import annotations

from dataclasses import dataclass, field

import streamlit as st

from explorer.base import session
from explorer.base.i18n import lang, t
from explorer.base.safe import md
from explorer.controls import forget_all
from explorer.pages import PAGES

FILES = {p.url_path: p.file for p in PAGES}


@dataclass(frozen=True)
class Lesson:
    key: str  # catalogue: tour_<key> (its title), tour_<key>_q (its question)
    page: str  # url_path
    params: dict = field(default_factory=dict)  # the settings it opens with (a lesson link: hide/lock too)
    # the button its question asks to press (a server presses it at its start: explorer.classroom.ahead)
    press: str = ""


def _lessons() -> tuple[Lesson, ...]:
    long = "the quick brown fox jumps over the lazy dog while the cat sleeps in the warm sun"
    return (
        Lesson("qkv", "steps", {"step": "st_qkv"}),
        Lesson("scores", "steps", {"step": "st_scores"}),
        Lesson("scale", "steps", {"step": "st_scores", "d_q": "512", "d_k": "512", "lock": "d_q,d_k"}),
        Lesson("softmax", "steps", {"step": "st_softmax"}),
        Lesson("mask", "steps", {"step": "st_mask", "mask": "causal", "lock": "mask"}),
        Lesson("heads", "multihead", {"heads": "4"}),
        Lesson("positions", "lab", {"lab_task": "reverse", "pos": "none", "lab_b": "positions"}, press="lab_play"),
        Lesson("cross", "cross", {}),
        Lesson("cost", "complexity", {}, press="cx_run"),
        Lesson("sparse", "steps", {"kernel": "sliding_window", "step": "vs_pattern", "sentence": long}),
        Lesson("linear", "steps", {"kernel": "linear_elu", "step": "vs_state", "sentence": long}),
        Lesson("approx", "variants", {}),
        Lesson("real", "model", {"rm_layer": "4", "rm_head": "9"}),
        Lesson("next_token", "next_token", {"seed": "7"}),
        Lesson("copying", "next_token", {"copy": "random", "seed": "3"}),
        Lesson(
            "vision", "vision", {"vi_model": "swin", "vi_patch": "1", "vi_window": "4", "vi_query": "9"}, "vi_play"
        ),
    )


TOUR = _lessons()
BY_KEY = {lesson.key: lesson for lesson in TOUR}


def params(lesson: Lesson) -> dict:
    return {**lesson.params, "tour": lesson.key}


def query(lesson: Lesson) -> dict:
    """The lesson's URL parameters in the UI's language (``lang`` only when not English)."""
    return params(lesson) | ({"lang": lang()} if lang() != "en" else {})


# A page link to the page already open is drawn as the current page (a tinted background): the lesson before or after
# on the same page is a way on, not where the reader is.
LINKS_CSS = "<style>.st-key-tour_banner a[data-testid='stPageLink-NavLink'] { background-color: transparent; }</style>"


def page_link(lesson: Lesson, *, label: str, container=st) -> None:
    """A link to the lesson that opens it inside the app: no new page load (the browser keeps the page, its scripts
    and its session), the address shows the lesson's parameters (a copied link opens the same lesson), and
    ``arrive`` starts every setting from them. Opened in a new tab, it is the plain link it shows."""
    container.page_link(FILES[lesson.page], label=md(label), query_params=query(lesson))


def arrive() -> None:
    """A lesson just opened (a link followed inside a session): every setting starts from the
    lesson's link, as on a fresh visit, not from what this session had before. Before any control
    is drawn."""
    key = session.url("tour")
    if key is None or key == session.get("_tour_at"):
        return
    session.put("_tour_at", key)
    if key in BY_KEY:
        forget_all()
        session.show_url()  # a link inside the app to the page already open left the old address showing


def banner() -> None:
    """The current lesson's question above the page, with the next lesson (nothing without ?tour=)."""
    key = session.url("tour")
    if key is None:
        return
    lesson = BY_KEY.get(key)
    if lesson is None:  # an unknown lesson: dropped with a notice
        session.drop_url("tour")
        session.notice("tour")
        return
    n = TOUR.index(lesson)
    st.html(LINKS_CSS)
    with st.container(border=True, key="tour_banner"):
        st.markdown(f"**{t('tour_lesson', n=n + 1, total=len(TOUR))} · {t(f'tour.{key}.title')}**")
        st.markdown(t(f"tour.{key}.q"))
        cols = st.columns(2)
        if n > 0:
            page_link(TOUR[n - 1], label=t("tour_back", title=t(f"tour.{TOUR[n - 1].key}.title")), container=cols[0])
        if n + 1 < len(TOUR):
            page_link(TOUR[n + 1], label=t("tour_next", title=t(f"tour.{TOUR[n + 1].key}.title")), container=cols[1])


def overview() -> None:
    """The tour on the start page: every lesson, in order, one click each."""
    st.caption(t("tour_intro", n=len(TOUR)))
    for n, lesson in enumerate(TOUR):
        page_link(lesson, label=f"{n + 1}. {t(f'tour.{lesson.key}.title')}")
