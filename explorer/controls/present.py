"""Presenter mode (``?present=1``): the sidebar collapsed, type and charts large enough for the
back of a room at 1280×720, and Step by step walked with Back / Next buttons that also answer
the arrow keys, each step with a short narration in the UI's language. The other teaching pages
(Next token, Vision, Real model) are walked the same way one section at a time (``parts``), each
section's chart on the first screen.

``present`` is a switch like every other in a link (``1``/``true``/``yes``/``on`` or
``0``/``false``/``no``/``off``, see ``explorer.base.urlcheck.switch``); any other value is dropped from
the link and named in the sidebar's notice. The parameter name is a contract (lesson plans link
to it).
"""

from __future__ import annotations

import streamlit as st

from explorer.base import session
from explorer.base.i18n import STRINGS, step_key, t
from explorer.base.safe import md
from explorer.base.urlcheck import switch, url_switch
from explorer.controls import STEPS, assign, draw

PARAM = "present"
FIRST = STEPS[0]  # every walk (a variant's too) starts with the tokens
NEXT_KEY, BACK_KEY = "ArrowRight", "ArrowLeft"  # a clicker's keys too, in its arrow mode

# Streamlit sizes its text in rem: a larger root size scales the whole page, widgets included.
CSS = """<style>
html { font-size: 21px !important; }
[data-testid="stMainBlockContainer"] { padding: 2.75rem 2rem 2rem; max-width: 100%; }
[data-testid="stHeader"] { background: transparent; }
[data-testid="stMain"] h1 { font-size: 1.6rem; padding-top: 0; }
[data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] p { font-size: 0.95rem; }
.st-key-present-narration p { font-size: 1.2rem; line-height: 1.45; margin-bottom: 0; }
.st-key-present-row h3 { padding: 0.25rem 0; }
</style>"""
# a section walked as a part: the walk's row names it, so its own heading is left out
# and so is the intro under that heading: the part's narration says it; the row's heading on one line
PART_CSS = """<style>
.st-key-present-row h3 { font-size: 1.4rem; }
.st-key-present-part [data-testid="stElementContainer"]:has(h3) { display: none; }
.st-key-present-part [data-testid="stElementContainer"]:has(h3)
  + [data-testid="stElementContainer"]:has([data-testid="stCaptionContainer"]) { display: none; }
</style>"""


def read() -> bool:
    """Whether this run presents (a bad value is dropped, with a notice)."""
    return url_switch(PARAM) is True


def on() -> bool:
    return switch(session.url(PARAM)) is True


def style() -> None:
    """The large type; call once per run in presenter mode."""
    st.html(CSS)


def _start() -> None:
    """Presenting starts at the first step, unless the link names one."""
    session.set_url(PARAM, "1")
    if session.url("step") is None:
        assign({"step": FIRST})


def _stop() -> None:
    session.drop_url(PARAM)


def toggle() -> None:
    """A button that enters presenter mode, or leaves it."""
    if on():
        st.button(t("present_exit"), key="present_exit", on_click=_stop, icon=":material/close_fullscreen:")
    else:
        st.button(t("present_start"), key="present_start", on_click=_start, icon=":material/present_to_all:")


def walk(steps: list[str], step: str, label, narration: str | None, key: str = "step"):
    """Where the walk stands, the narration, and Back / Next (buttons and arrow keys): each
    moves the page's ``key`` control (its radio shows the same step). ``narration`` None: it
    waits for the learner's prediction (it may name the answer); returns its slot, for
    ``slot.markdown(narration)`` once the answer is in; "": none drawn here (None returned)."""
    i = steps.index(step)

    def go(j: int) -> None:
        assign({key: steps[j]})

    name = label(step).split(" ", 1)[-1]  # "3 Scores" -> "Scores": the heading numbers it
    # one row (where the walk stands, Back, Next, leave), then the narration: the step's chart follows
    # on the first screen at 1280×720
    heading, back, nxt, leave = st.container(key="present-row").columns(
        [5, 1.4, 1.4, 2.6], vertical_alignment="center"
    )
    heading.subheader(t("present_at", i=i + 1, n=len(steps), step=name))
    with leave:
        toggle()
    slot = None
    if narration != "":  # "": the step draws its own narration (a section walked as a part)
        with st.container(key="present-narration"):
            slot = st.empty()
        if narration is None:
            slot.caption(t("predict_hold"))
        else:
            slot.markdown(narration)
    back.button(
        t("present_back"),
        key="present_back",
        on_click=go,
        args=(i - 1,),
        disabled=i == 0,
        shortcut=BACK_KEY,
        width="stretch",
    )
    nxt.button(
        t("present_next"),
        key="present_next",
        on_click=go,
        args=(i + 1,),
        disabled=i == len(steps) - 1,
        shortcut=NEXT_KEY,
        type="primary",
        width="stretch",
    )
    return slot


def narration(step: str, trace, head: int, focus: int) -> str:
    """The step's narration with this input's numbers (the words are data: escaped)."""
    q_words, k_words = trace.tokens.words, trace.key_tokens.words
    s = trace.settings
    row = trace.attn[head, focus]
    best = int(row.argmax())
    scores = trace.scaled_scores[head, focus].masked_fill(~trace.mask[focus], float("-inf"))
    facts = dict(
        tok=md(q_words[focus]),
        n=len(q_words),
        d=s.d_model,
        L=len(q_words),
        S=len(k_words),
        dk=s.d_k,
        best=md(k_words[best]),
        w=f"{float(row[best]):.2f}",
        top=md(k_words[int(scores.argmax())]),
        allowed=int(trace.mask.sum()),
        total=trace.mask.numel(),
    )
    key = f"present.{step}"
    return t(key, **facts) if key in STRINGS else t("present_variant_step", step=t(step_key(step)), **facts)


def parts(control, box, walk_row, titles: dict[str, str], narrations: dict[str, str] | None = None) -> str:
    """Presenter mode on a page of sections: they are walked one at a time with Step by step's row (where the walk
    stands, Back / Next and the arrow keys, the way out) drawn in ``walk_row``, its radio folded in ``box`` with the
    page's controls (a link may name a part: ``?<control>=``). ``titles``: each part's title, in order;
    ``narrations``: a part's narration under the row, where the section does not narrate itself. Returns the part
    to draw; the page draws that section alone, inside ``part_box()``."""
    names = list(titles)
    numbered = {name: f"{i + 1} {titles[name]}" for i, name in enumerate(names)}  # "3 Scores", as the steps read
    part = draw(control, box, options=names, format_func=numbered.get, horizontal=True, default=names[0])
    with walk_row:
        walk(names, part, numbered.get, (narrations or {}).get(part, ""), key=control.name)
    st.html(PART_CSS)
    return part


def part_box():
    """The container the walked section is drawn in (its heading hidden: the walk's row names it)."""
    return st.container(key="present-part")
