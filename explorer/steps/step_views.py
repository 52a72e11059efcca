"""How each step of Step by step is drawn: one table, ``VIEWS``, from a step key to its drawer.

Every step is a ``Stage`` computed by the engine (``attn_core.stages.step_stages``: the base steps,
or a variant's own beside them); a drawer takes the page's ``StepContext`` and that stage and
draws its formula, its code and its tensors. A step without its own drawer (a variant's) is drawn
by the generic one, ``stage_view``: ``VIEWS.get(step, stage_view)(ctx, stage)``.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import streamlit as st

from explorer import charts
from explorer import figures as fig
from explorer.base import tables, widgets
from explorer.base.i18n import t, tex
from explorer.charts.views import mask_step, matrix_chart, output_step, scores_step, softmax_charts, variant_step


@dataclass(frozen=True)
class StepContext:
    trace: Any  # attn_core.trace.Trace
    head: int
    focus: int
    q_words: list[str]
    k_words: list[str]
    presenting: bool
    explain: Any  # where the formula and the code go: the page (st), or the presenter's fold-away

    @property
    def q_labels(self) -> list[str]:
        return fig.labels(self.q_words)

    @property
    def k_labels(self) -> list[str]:
        return fig.labels(self.k_words)


def _formula_and_code(ctx: StepContext, stage) -> None:
    ctx.explain.latex(tex(stage.formula))
    widgets.code(ctx.explain, stage.code)


def tokens_view(ctx: StepContext, stage) -> None:
    """The tokens with their ids, and the embeddings x (presenting: the table beside the chart)."""
    table, main = st.columns([1, 3]) if ctx.presenting else (st, nullcontext())
    if ctx.presenting:
        table.markdown(f"**{t('tokens_table')}**")
    else:
        table.subheader(t("tokens_table"))
    tables.dataframe(
        {t("position"): list(range(len(ctx.q_words))), t("token"): ctx.q_words, t("id"): stage.facts["ids"]},
        container=table,
        hide_index=True,
    )
    _formula_and_code(ctx, stage)
    x = stage.tensors["x"]
    dims = [str(i) for i in range(x.shape[-1])]
    with main:
        matrix_chart(
            charts.heatmap(
                x,
                dims,
                ctx.q_labels,
                title=t("embeddings"),
                x_title="dim",
                y_title=t("token"),
                colorscale="RdBu",
                zmid=0,
            ),
            "x",
            x,
            ctx.q_words,
            dims,
        )


def qkv_view(ctx: StepContext, stage) -> None:
    """One of Q, K, V and the projections W_q, W_k, W_v of this head, picked in a radio."""
    _formula_and_code(ctx, stage)
    which = widgets.radio(
        st,
        t("weights_of", name=""),
        list(stage.tensors),
        horizontal=True,
        key="qkv_which",
        label_visibility="collapsed" if ctx.presenting else "visible",  # the options name themselves
    )
    rows = {"Q": (ctx.q_labels, ctx.q_words), "K": (ctx.k_labels, ctx.k_words), "V": (ctx.k_labels, ctx.k_words)}
    m = stage.tensors[which][ctx.head]
    rl, rw = rows.get(which, (None, None))
    rl = rl or [str(i) for i in range(m.shape[0])]
    rw = rw or rl
    cols = [str(i) for i in range(m.shape[1])]
    matrix_chart(
        charts.heatmap(
            m,
            cols,
            rl,
            title=f"{which} {tuple(m.shape)}",
            x_title="dim",
            y_title="",
            colorscale="RdBu",
            zmid=0,
        ),
        which,
        m,
        rw,
        cols,
    )


def scores_view(ctx: StepContext, stage) -> None:
    """Raw Q Kᵀ beside the scaled scores, why scaling matters, and the focus row's two."""
    _formula_and_code(ctx, stage)
    scores_step(SimpleNamespace(**stage.tensors), ctx.head, ctx.q_words, ctx.k_words)
    st.info(t("why_scale", **stage.facts))
    raw, scaled = stage.tensors["scores"], stage.tensors["scaled_scores"]
    matrix_chart(
        charts.grouped_bars(
            {
                t("legend_raw"): raw[ctx.head, ctx.focus].tolist(),
                t("legend_scaled"): scaled[ctx.head, ctx.focus].tolist(),
            },
            ctx.k_labels,
            title=t("focus_scores", tok=ctx.q_words[ctx.focus]),
        ),
        "focus_scores",
    )


def mask_view(ctx: StepContext, stage) -> None:
    """The mask as a matrix and how many pairs may attend."""
    _formula_and_code(ctx, stage)
    mask_step(SimpleNamespace(mask=stage.tensors["mask"], settings=ctx.trace.settings), ctx.q_words, ctx.k_words)


def softmax_view(ctx: StepContext, stage) -> None:
    """The softmax in stages: each row's max and sum beside exp(x - max)."""
    _formula_and_code(ctx, stage)
    softmax_charts(SimpleNamespace(**stage.tensors), ctx.head, ctx.q_words, ctx.k_words)


def output_view(ctx: StepContext, stage) -> None:
    """The weights and the context vectors they make."""
    _formula_and_code(ctx, stage)
    if stage.facts["dropout"] > 0:
        st.caption(t("dropout_note"))
    output_step(SimpleNamespace(**stage.tensors), ctx.head, ctx.q_words, ctx.k_words, weights_title=t("attn_weights"))


def stage_view(ctx: StepContext, stage) -> None:
    """Any other step (a variant's own): the generic drawer of a stage's formula, code, note and tensors."""
    variant_step(
        ctx.trace, stage, ctx.head, ctx.focus, ctx.q_words, ctx.k_words, explain=ctx.explain, presenting=ctx.presenting
    )


VIEWS = {
    "st_tokens": tokens_view,
    "st_qkv": qkv_view,
    "st_scores": scores_view,
    "st_mask": mask_view,
    "st_softmax": softmax_view,
    "st_output": output_view,
}
