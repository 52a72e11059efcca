"""Cross-attention: queries from the second sentence attend to the first (L x S weights)."""

import streamlit as st

from explorer import charts
from explorer import figures as fig
from explorer.base import widgets
from explorer.base.i18n import kernel_label, t
from explorer.boot import run_through_app
from explorer.charts.views import chart, focus_select
from explorer.classroom import takehome
from explorer.controls import PAGE, draw
from explorer.controls.state import cross_settings, current_settings, current_trace
from explorer.poll.view import predict_then_reveal
from explorer.steps import pair_predict, pin

run_through_app()  # before anything is drawn; see explorer/boot.py

st.title(t("page.cross"))
settings = cross_settings(current_settings())
trace = current_trace(settings)
if trace is None:
    st.stop()
q_words, k_words = list(trace.tokens.words), list(trace.key_tokens.words)
q_labels, k_labels = fig.labels(q_words), fig.labels(k_words)
if trace.variant is not None:
    st.info(t("variant_other_pages", name=kernel_label(trace.settings.kernel)), icon=":material/alt_route:")
st.caption(t("cross_intro", L=len(q_words), S=len(k_words)))
st.latex(
    r"Q = X_{\text{2nd}} W_q^\top,\ K = X_{\text{1st}} W_k^\top,\ V = X_{\text{1st}} W_v^\top,\quad "
    r"\alpha = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right) \in \mathbb{R}^{L\times S}"
)
c1, c2, c3 = st.columns([1, 2, 1])
head = draw(PAGE["cross_head"], c3, high=trace.settings.heads - 1) if trace.settings.heads > 1 else 0
pinned = pin.pin()  # A from the link's a=: its sidebar settings and its second sentence, or None
a_cross = None if pinned is None else pin.cross_of(pinned)  # A's queries over A's keys, as B's are built
if draw(PAGE["predict"], c1):  # predict, then reveal: which word of the first sentence will it attend to?
    focus = focus_select(c2, q_labels)
    if a_cross is not None:  # a comparison in the link: A's row shown, B's predicted
        pair_predict.ask_then_reveal("cross", a_cross, settings, head, focus)
    else:
        question = ("cross", trace.settings.key(), head, focus)
        predict_then_reveal(trace.attn[head, focus].tolist(), question, q_words[focus], k_words)
a, b = st.columns(2)
with a:
    chart(
        charts.heatmap(
            trace.attn[head],
            k_labels,
            q_labels,
            title=f"{t('attn_weights')} {tuple(trace.attn[head].shape)}",
            x_title=t("keys"),
            y_title=t("queries"),
            weights=True,
        ),
        "cross_heatmap",
    )
with b:
    floor = widgets.slider(st, t("min_weight"), 0.0, 0.5, 0.02, 0.01, key="cross_floor")
    chart(
        charts.attention_lines(
            trace.attn[head].tolist(),
            q_labels,
            k_labels,
            min_weight=floor,
            title=t("line_view"),
            left=t("queries"),
            right=t("keys"),
        ),
        "cross_lines",
    )
pin.pin_ui(st, pinned is not None)
if a_cross is not None:  # the weights of A and B on one colour scale, B − A (or what still compares), in words
    pin.compare_section(a_cross, settings, "st_softmax", head)
takehome.offer("cross", settings, head=head)  # the view as a notebook, built when clicked
