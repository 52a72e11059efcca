"""Multi-head: one panel per head, the concatenation, W_o, residual + LayerNorm, parameter count."""

import streamlit as st

from attn_core import param_count
from explorer import charts
from explorer import figures as fig
from explorer.base import session, tables, widgets
from explorer.base.i18n import kernel_label, t
from explorer.boot import run_through_app
from explorer.charts.views import chart, focus_select
from explorer.classroom import takehome
from explorer.controls import PAGE, assign, draw
from explorer.controls.state import current_settings, current_trace
from explorer.poll.view import predict_then_reveal
from explorer.steps import pair_predict, pin

run_through_app()  # before anything is drawn; see explorer/boot.py

st.title(t("page.multihead"))
settings = current_settings()
trace = current_trace(settings)
if trace is None:
    st.stop()
s = trace.settings
q_labels, k_labels = fig.labels(trace.tokens.words), fig.labels(trace.key_tokens.words)
if trace.variant is not None:
    st.info(t("variant_other_pages", name=kernel_label(trace.settings.kernel)), icon=":material/alt_route:")
st.caption(t("mh_intro", proj=t("mh_proj") if trace.projected is not None else ""))


MAX_SHOWN = 4  # heatmaps side by side
PICKED = "_mh_heads_picked"  # the learner chose the heads shown: a new head count keeps their choice


def _four_heads() -> None:
    assign({"heads": 4})


def _picked() -> None:
    session.put(PICKED, True)


if s.heads == 1:  # the page's point is invisible with one head: one click to see several
    left, right = st.columns([3, 1])
    left.info(t("mh_one_head"), icon=":material/hub:")
    right.button(t("mh_show_four"), on_click=_four_heads, key="mh_show_four", type="primary", width="stretch")
default = list(range(min(s.heads, MAX_SHOWN)))
if not session.get(PICKED) and widgets.stored("mh_heads") not in (widgets.MISSING, default):
    session.put("mh_heads", default)  # not chosen by the learner: the heads shown follow the head count
session.translated("mh_heads")  # its labels follow the language: a switch re-pins the heads chosen (see controls)
shown = widgets.multiselect(  # a head gone, a stale label: dropped (none left: the default); see explorer/widgets
    st,
    t("heads_to_show"),
    range(s.heads),
    default=default,
    format_func=lambda h, word=t("head"): f"{word} {h}",  # noqa: B008 - the label's language, fixed when drawn
    max_selections=MAX_SHOWN,
    key="mh_heads",
    on_change=_picked,
)
c1, c2 = st.columns([1, 3])
focus = min(1, len(q_labels) - 1)  # the pages' default focus token: each head's caption speaks of it
if draw(PAGE["predict"], c1):  # predict, then reveal: which key will the focus token attend to most?
    words = list(trace.tokens.words)
    focus = focus_select(c2, q_labels)
    h = shown[0] if shown else 0
    st.caption(t("predict_head", h=h))
    pinned = pin.pinned()  # a comparison in the link: A's row shown, B's predicted
    if pinned is not None:
        pair_predict.ask_then_reveal("multihead", pinned, settings, h, focus)
    else:
        question = ("multihead", s.key(), h, focus)
        predict_then_reveal(trace.attn[h, focus].tolist(), question, words[focus], list(trace.key_tokens.words))
cols = st.columns(max(len(shown), 1))
for col, h in zip(cols, shown):
    with col:
        chart(
            charts.heatmap(
                trace.attn[h],
                k_labels,
                q_labels,
                title=f"{t('head')} {h}",
                x_title="key",
                y_title="query",
                height=360,
                weights=True,
                focus=focus,  # outlined, and the caption says where it attends most
            ),
            f"mh_head_{h}",
        )
pinned = pin.pinned()  # A's settings from the link's a=, or None
pin.pin_ui(st, pinned is not None)
if pinned is not None:  # the first head shown, in A and in B, on one colour scale, B − A and what changed most
    pin.compare_section(pinned, settings, "st_softmax", shown[0] if shown else 0)

dims = [str(i) for i in range(trace.concat.shape[1])]
st.latex(
    r"\mathrm{MultiHead}(X) = \mathrm{Concat}(z^{(1)}, \dots, z^{(h)})"
    + (r"\,W_o^\top" if trace.projected is not None else "")
    + (r"\quad\to\quad \mathrm{LayerNorm}(X + \cdot)" if s.residual_norm else "")
)
widgets.code(
    st,
    f"concat = torch.cat([context[h] for h in range({s.heads})], dim=-1)  # {tuple(trace.concat.shape)}"
    + (f"\nprojected = concat @ W_o.T + b_o  # {tuple(trace.projected.shape)}" if trace.projected is not None else "")
    + (
        f"\noutput = F.layer_norm(x + projected, ({s.d_model},))  # {tuple(trace.output.shape)}"
        if s.residual_norm
        else ""
    ),
)
chart(
    charts.heatmap(
        trace.concat,
        dims,
        q_labels,
        title=f"{t('concat')} {tuple(trace.concat.shape)}",
        x_title="dim",
        y_title="query",
        colorscale="RdBu",
        zmid=0,
    ),
    "mh_concat",
)
if trace.projected is not None or s.residual_norm:
    out_dims = [str(i) for i in range(trace.output.shape[1])]
    chart(
        charts.heatmap(
            trace.output,
            out_dims,
            q_labels,
            title=f"{t('output')} {tuple(trace.output.shape)}",
            x_title="dim",
            y_title="query",
            colorscale="RdBu",
            zmid=0,
        ),
        "mh_output",
    )

st.subheader(t("params"))
n = param_count(s)
tables.dataframe({t(f"pc.{k}"): [v] for k, v in n.items()}, hide_index=True)
if s.layout == "standard":
    st.info(t("params_formula", f=n["formula_4d2"], n=n["total"], b=n["biases"]))
else:
    st.info(t("params_tutorial", f=n["formula_4d2"], n=n["total"]))
takehome.offer("multihead", settings, head=shown[0] if shown else 0)  # the view as a notebook
