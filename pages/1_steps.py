"""Step by step: tokens -> embeddings -> Q, K, V -> scores -> scaling -> mask -> softmax -> context."""

from contextlib import nullcontext

import streamlit as st

from attn_core.export import to_json
from attn_core.kernels import KERNELS
from explorer import figures as fig
from explorer import present, takehome, widgets
from explorer.boot import run_through_app
from explorer.controls import PAGE, draw
from explorer.i18n import kernel_label, step_label, t
from explorer.poll_view import predict_then_reveal
from explorer.safe import md
from explorer.state import current_settings, current_trace
from explorer.views import (
    WEIGHTED_SUM,
    chart,
    focus_select,
    mask_step,
    matrix_chart,
    output_step,
    scores_step,
    softmax_step,
    variant_step,
)

run_through_app()  # before anything is drawn; see explorer/boot.py

presenting = present.on()
if presenting:  # the walk's own row names the page's step and holds the way out
    walk_row = st.container()
else:
    title, toggle = st.columns([5, 1], vertical_alignment="bottom")
    title.title(t("page.steps"))
    with toggle:
        present.toggle()  # ?present=1: large type, Back / Next with the arrow keys, a narration per step
settings = current_settings()
if not presenting:
    st.caption(t("steps_intro"))
    st.caption(t("your_sentence"))
    st.text(settings.sentence)
trace = current_trace(settings)
if trace is None:
    st.stop()

s = trace.settings
q_words, k_words = list(trace.tokens.words), list(trace.key_tokens.words)
q_labels, k_labels = fig.labels(q_words), fig.labels(k_words)
L, S = len(q_words), len(k_words)

if presenting:  # Back / Next walk the steps; the controls, the formula and the code fold away beside each other
    left, right = st.columns(2)
    box, explain = left.expander(t("present_controls")), right.expander(t("present_formula"))
else:
    box, explain = st.container(), st  # the formula and the code where each step draws them
first = present.FIRST if presenting else None  # presenting starts at step 1 unless the link names a step
c1, c2, c3 = box.columns([2, 1, 3])
focus = focus_select(c1, q_labels)
head = draw(PAGE["head_steps"], c2, high=s.heads - 1) if s.heads > 1 else 0
variant = trace.variant
stages = {f"vs_{stage.key}": stage for stage in variant.stages} if variant is not None else {}
if variant is not None:  # the variant's own steps between Q, K, V and the output
    steps = ("st_tokens", "st_qkv", *stages, "st_output")
    step = draw(PAGE["step"], c3, options=steps, format_func=step_label(steps), horizontal=True, default=first)
    st.info(t("variant_steps", name=kernel_label(s.kernel)), icon=":material/alt_route:")
else:
    steps = PAGE["step"].options
    step = draw(PAGE["step"], c3, horizontal=True, default=first)
predicting = draw(PAGE["predict"], c1)  # predict, then reveal (with a live class poll under ?lesson=)
if presenting:  # a narration may name the answer: with predict on, it waits for the prediction
    with walk_row:
        said = present.walk(
            list(steps), step, step_label(steps), None if predicting else present.narration(step, trace, head, focus)
        )
if predicting:
    question = ("steps", s.key(), head, focus)
    predict_then_reveal(trace.attn[head, focus].tolist(), question, q_words[focus], k_words)  # stops until answered
    if presenting:
        said.markdown(present.narration(step, trace, head, focus))
W = trace.weights
tok = q_words[focus]
show = matrix_chart  # a chart and its CSV download

if step == "st_tokens":
    table, main = st.columns([1, 3]) if presenting else (st, nullcontext())  # presenting: the table beside
    table.markdown(f"**{t('tokens_table')}**") if presenting else table.subheader(t("tokens_table"))
    table.dataframe(
        {t("position"): list(range(L)), t("token"): q_words, t("id"): list(trace.tokens.ids)}, hide_index=True
    )
    explain.latex(r"x_i = E[\mathrm{id}_i] + PE_i \qquad E \in \mathbb{R}^{|V| \times d_{model}}")
    explain.code(
        f"embed = torch.nn.Embedding({len(trace.tokens.vocab)}, {s.d_model})\n"
        f"x = embed(ids)  # {tuple(trace.x.shape)}",
        language="python",
    )
    dims = [str(i) for i in range(s.d_model)]
    with main:
        show(
            fig.heatmap(
                trace.x,
                dims,
                q_labels,
                title=t("embeddings"),
                x_title="dim",
                y_title=t("token"),
                colorscale="RdBu",
                zmid=0,
            ),
            "x",
            trace.x,
            q_words,
            dims,
        )
elif step == "st_qkv":
    explain.latex(r"Q = X W_q^\top,\quad K = X W_k^\top,\quad V = X W_v^\top")
    explain.code(
        f"W_q = torch.rand({s.d_q}, {s.d_model})   # head {head}: {tuple(W.W_q[head].shape)}\n"
        f"Q = x @ W_q.T   # {tuple(trace.Q[head].shape)}\n"
        f"K = x @ W_k.T   # {tuple(trace.K[head].shape)}\n"
        f"V = x @ W_v.T   # {tuple(trace.V[head].shape)}",
        language="python",
    )
    which = widgets.radio(
        st,
        t("weights_of", name=""),
        ["Q", "K", "V", "W_q", "W_k", "W_v"],
        horizontal=True,
        key="qkv_which",
        label_visibility="collapsed" if presenting else "visible",  # the options name themselves
    )
    mats = {
        "Q": (trace.Q[head], q_labels, q_words),
        "K": (trace.K[head], k_labels, k_words),
        "V": (trace.V[head], k_labels, k_words),
        "W_q": (W.W_q[head], None, None),
        "W_k": (W.W_k[head], None, None),
        "W_v": (W.W_v[head], None, None),
    }
    m, rl, rw = mats[which]
    rl = rl or [str(i) for i in range(m.shape[0])]
    rw = rw or rl
    cols = [str(i) for i in range(m.shape[1])]
    show(
        fig.heatmap(
            m, cols, rl, title=f"{which} {tuple(m.shape)}", x_title="dim", y_title="", colorscale="RdBu", zmid=0
        ),
        which,
        m,
        rw,
        cols,
    )
elif step in stages:
    variant_step(trace, stages[step], head, focus, q_words, k_words)
elif step == "st_scores":
    formula = {
        "dot": r"e_{ij} = q_i^\top k_j",
        "scaled_dot": r"e_{ij} = \frac{q_i^\top k_j}{\sqrt{d_k}}",
        "additive": r"e_{ij} = v^\top \tanh(W_a q_i + U_a k_j)",
    }[s.score]
    explain.latex(formula + (rf"\ /\ T,\ T = {s.temperature:g}" if s.temperature != 1 else ""))
    explain.code(
        f"scores = Q @ K.T            # {tuple(trace.scores[head].shape)}\n"
        f"scaled = scores * {trace.scale:.6g}  # 1/sqrt(d_k) = 1/sqrt({s.d_k})",
        language="python",
    )
    scores_step(trace, head, q_words, k_words)
    st.info(
        t("why_scale", unscaled=trace.peak_weight(head, focus, scaled=False), scaled=trace.peak_weight(head, focus))
    )
    show(
        fig.grouped_bars(
            {"raw": trace.scores[head, focus].tolist(), "scaled": trace.scaled_scores[head, focus].tolist()},
            k_labels,
            title=t("focus_scores", tok=tok),
        ),
        "focus_scores",
    )
elif step == "st_mask":
    explain.latex(r"\tilde e_{ij} = \begin{cases} e_{ij} & \text{mask}_{ij} \\ -\infty & \text{otherwise}\end{cases}")
    explain.code(
        f"mask = build_mask('{s.mask}', {L}, {S}{', also_causal=True' if s.causal else ''})"
        f"  # bool {tuple(trace.mask.shape)}, True = may attend\n"
        "scaled = scaled.masked_fill(~mask, float('-inf'))",
        language="python",
    )
    mask_step(trace, q_words, k_words)
elif step == "st_softmax":
    softmax_step(trace, head, q_words, k_words, explain=explain)
else:
    explain.latex(WEIGHTED_SUM if variant is None else KERNELS[s.kernel].formula)
    explain.code(
        f"context = {s.kernel}_attention(Q, K, V)   # its own efficient path: {tuple(trace.context[head].shape)}\n"
        f"weights = ...   # the L × L matrix it amounts to, for display: {tuple(trace.attn[head].shape)}"
        if variant is not None
        else f"weights = F.softmax(scaled, dim=-1)  # {tuple(trace.attn[head].shape)}\n"
        f"context = weights @ V               # {tuple(trace.context[head].shape)}",
        language="python",
    )
    if s.dropout > 0:
        st.caption(t("dropout_note"))
    output_step(trace, head, q_words, k_words, weights_title=t("attn_weights"))

if bool(trace.empty_rows.any()):
    st.warning(t("empty_rows", n=int(trace.empty_rows[head].sum())))
chart(
    fig.bars(
        trace.attn[head, focus].tolist(),
        k_labels,
        title=t("focus_row", tok=tok),
        highlight=int(trace.attn[head, focus].argmax()),
    ),
    "chart_focus",
)
with st.expander(t("focus_context", tok=md(tok))):
    st.dataframe(
        {fig.axis_name("dim"): list(range(trace.context.shape[-1])), "z": trace.context[head, focus].tolist()},
        hide_index=True,
    )
st.download_button(
    t("download_json"),
    lambda: to_json(trace),
    "attention_trace.json",
    "application/json",
    key="dl_json",
    on_click="ignore",
)  # the JSON is built only when clicked
takehome.offer("steps", settings, head=head, focus=focus)  # the view as a notebook, built when clicked
