"""Queries and keys as a map: one head's queries and keys on one map (attn_core.why.qkmap), drawn only while its
expander is open; on Step by step (the explorer's trace), Real model (a trained model's head) and the Lab (a run's
snapshot)."""

from __future__ import annotations

import streamlit as st
import torch

from attn_core.why import qk_map

from . import figures as fig
from . import widgets
from .i18n import t
from .views import chart, focus_select

OPEN_KEY = "qk_map_open"
MODEL_OPEN_KEY = "rm_qk_map_open"


def section(trace, head: int, focus: int, q_labels: list[str], k_labels: list[str]) -> None:
    """Step by step: head ``head`` of the explorer's trace, the attention row of query ``focus``."""
    box = widgets.expander(st, t("qk_open"), key=OPEN_KEY, icon=":material/scatter_plot:")
    if not box.open:
        return
    with box:
        Q, K = trace.Q[head], trace.K[head]
        if trace.settings.score == "additive" or Q.shape[-1] != K.shape[-1]:
            st.info(t("qk_not_dot"), icon=":material/info:")
            return
        scaled = trace.scaled_scores
        scores = scaled[head] if scaled is not None else (Q @ K.T) * trace.scale
        title = t("qk_title", h=head)
        _draw(Q, K, scores, trace.mask, trace.attn[head, focus], focus, (q_labels, k_labels), title, "")


def model_section(ht, layer: int, head: int, labels: list[str], n: int, focus: int | None = None) -> None:
    """Real model: one trained head (``pretrained.HeadTrace``) over its ``n`` real tokens (padding left out); the
    query is the page's focus, chosen here when the page has not drawn one."""
    box = widgets.expander(st, t("qk_open"), key=MODEL_OPEN_KEY, icon=":material/scatter_plot:")
    if not box.open:
        return
    with box:
        if focus is None:
            focus = focus_select(st.columns([1, 2])[0], labels[:n])
        scores, allowed = ht.scaled_scores[0, :n, :n], None if ht.mask is None else ht.mask[:n, :n]
        title = t("qk_title_model", l=layer, h=head)
        Q, K, row = ht.Q[0, :n], ht.K[0, :n], ht.attn[0, focus, :n]
        _draw(Q, K, scores, allowed, row, focus, (labels[:n], labels[:n]), title, "rm_")


def _draw(Q, K, scores, allowed, row, focus: int, labels: tuple, title: str, prefix: str) -> None:
    """The map, the selected query's weights on it, and how to read it; ``prefix``: its chart key's, and on Real
    model and the Lab a note without the explorer's d_q = d_k = 2."""
    st.caption(t("qk_intro"))
    m = qk_map(Q, K, scores, allowed)
    r = f"{m.correlation:.3f}" if m.correlation is not None else t("qk_no_r")
    if Q.shape[-1] == 1:  # one number per query and key: a line, not a map; said instead of "PCA keeps 100%"
        note = t("qk_one_dim", r=r)
    elif m.method == "exact":
        note = t("qk_exact", r=r)
    else:
        note = t("qk_pca_model" if prefix else "qk_pca", d=Q.shape[-1], share=f"{m.explained:.0%}", r=r)
    q_labels, k_labels = labels
    style = fig.run_style()
    chart(
        fig.qk_scatter(m.queries, m.keys, q_labels, k_labels, row, focus=focus, title=title, style=style),
        f"{prefix}chart_qk_map",
    )
    st.caption(note)


def lab_section(name: str, snap, labels: list[str]) -> None:
    """The Lab: run ``name``'s queries and keys on the probe example at the snapshot the page shows (the last one
    while it trains, the replay's step after), for one layer and head: watch the keys line up as it learns."""
    box = widgets.expander(st, t("qk_open"), key=f"lab_qk_open_{name}", icon=":material/scatter_plot:")
    if not box.open:
        return
    with box:
        if not snap.qk:
            st.info(t("qk_lab_none"), icon=":material/info:")
            return
        heads = [(layer, h) for layer in range(len(snap.qk)) for h in range(snap.qk[0]["Q"].shape[0])]
        c1, c2 = st.columns(2)
        named = {p: t("lab_head", layer=p[0], head=p[1]) for p in heads}
        layer, h = widgets.selectbox(c1, t("qk_lab_head"), heads, key=f"lab_qk_head_{name}", format_func=named.get)
        n = len(labels)
        focus = widgets.selectbox(
            c2, t("qk_lab_query"), range(n), key=f"lab_qk_query_{name}", default=n - 1, format_func=labels.__getitem__
        )
        d = snap.qk[layer]
        scores, mask = d["scaled"][h], d["mask"]
        masked = scores if mask is None else scores.masked_fill(~mask, float("-inf"))
        row = torch.softmax(masked[focus], -1).nan_to_num(0.0)
        title = t("qk_title_lab", l=layer, h=h, step=snap.step)
        _draw(d["Q"][h], d["K"][h], scores, mask, row, focus, (labels, labels), title, f"lab_{name}_")
