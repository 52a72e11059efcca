"""Predict what changes: a link with ``a=`` and ``predict=1`` shows A's row for the focus token and asks, before B
is shown, which key that token will attend to most in B; then B and the comparison are revealed.

It is the pages' predict-then-reveal (``explorer.poll.view``), under a slot of its own: in a lesson
(``?lesson=CODE``) every session's answer to the same question (the page, B's settings, A's settings, the head and
the focus) is one tally, shown after the reveal and live on the teacher's link, as any other prediction's.
"""

from __future__ import annotations

import streamlit as st

from attn_core import Settings
from explorer import charts
from explorer import figures as fig
from explorer.base.i18n import t
from explorer.charts.views import chart
from explorer.poll.view import predict_then_reveal

SLOT = "_pair"  # its answer and widgets beside the page's own question's
TEXTS = {
    "ask": "pair.predict_ask",
    "right": "pair.predict_right",
    "wrong": "pair.predict_wrong",
    "truth": "pair.predict_truth",
}


def question(page: str, a: Settings, b: Settings, head: int, focus: int) -> tuple:
    """The question's plain name: the page, B's settings first (the lesson's table names its sentence), A's."""
    return (page, b.key(), "pin", a.key(), head, focus)


def ask_then_reveal(page: str, a: Settings, b: Settings, head: int, focus: int) -> None:
    """A's weights of the focus token drawn, then the question about B; stops the page until it is answered."""
    from explorer.controls.state import trace_for

    ta, tb = trace_for(a), trace_for(b)
    ha, hb = min(head, ta.attn.shape[0] - 1), min(head, tb.attn.shape[0] - 1)
    fa = min(focus, ta.attn.shape[1] - 1)  # A's sentence may be shorter
    row_a = ta.attn[ha, fa].tolist()
    tok_a = list(ta.tokens.words)[fa]
    st.subheader(t("pair.predict_title"))
    chart(
        charts.bars(
            row_a,
            fig.labels(ta.key_tokens.words),
            title=t("pair.predict_a_row", tok=tok_a),
            highlight=max(range(len(row_a)), key=row_a.__getitem__),
        ),
        "pair_predict_a",
    )
    q_words, k_words = list(tb.tokens.words), list(tb.key_tokens.words)
    predict_then_reveal(
        tb.attn[hb, focus].tolist(), question(page, a, b, head, focus), q_words[focus], k_words, texts=TEXTS, slot=SLOT
    )
