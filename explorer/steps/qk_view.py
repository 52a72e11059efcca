"""Queries and keys as a map: one head's queries and keys on one map (attn_core.why.qkmap), drawn only while its
expander is open; on Step by step (the explorer's trace), Real model (a trained model's head) and the Lab (a run's
snapshot)."""

from __future__ import annotations

import streamlit as st
import torch

from attn_core.why import qk_map
from explorer import charts
from explorer.base import widgets
from explorer.base.i18n import label, t
from explorer.charts.views import chart, focus_select
from explorer.controls import draw
from explorer.controls.page import COLOURS
from explorer.model import real
from explorer.steps import qk_parts

OPEN_KEY = "qk_map_open"
MODEL_OPEN_KEY = "rm_qk_map_open"
BAR = {"position": "qk_bar_position", "token": "qk_bar_token", "norm": "qk_bar_norm"}  # the colour bar's title
NOTE = {"position": "qk_colour_note_position", "token": "qk_colour_note_token", "norm": "qk_colour_note_norm"}


def _expander(key: str):
    """The section's expander; a link that sets its colouring or the probe set's points opens it."""
    return widgets.expander(
        st, t("qk_open"), key=key, icon=":material/scatter_plot:", opened_by=("qk_colour", "rm_qk_probes")
    )


def section(trace, head: int, focus: int, q_labels: list[str], k_labels: list[str], colour_control) -> None:
    """Step by step: head ``head`` of the explorer's trace, the attention row of query ``focus``;
    ``colour_control``: the page's ``qk_colour`` control, drawn in the section."""
    box = _expander(OPEN_KEY)
    if not box.open:
        return
    with box:
        Q, K = trace.Q[head], trace.K[head]
        if trace.settings.score == "additive" or Q.shape[-1] != K.shape[-1]:
            st.info(t("qk_not_dot"), icon=":material/info:")
            return
        by = draw(colour_control, st, horizontal=True)
        scaled = trace.scaled_scores
        scores = scaled[head] if scaled is not None else (Q @ K.T) * trace.scale
        title = t("qk_title", h=head)
        sides = qk_parts.points(q_labels, Q.norm(dim=-1)), qk_parts.points(k_labels, K.norm(dim=-1))
        look = {"by": by, "sides": sides, "focus_key": "focus", "allowed": _row(trace.mask, focus)}
        _draw(Q, K, scores, trace.mask, trace.attn[head, focus], focus, (q_labels, k_labels), title, "", look)


def model_section(
    ht, name: str, layer: int, head: int, labels: list[str], n: int, controls: tuple, focus: int | None = None
) -> None:
    """Real model: head ``head`` of ``layer`` of model ``name`` (its ``models.HeadTrace`` ``ht``) over its ``n``
    real tokens (padding left out); the query is the page's focus, chosen here when the page has not drawn one;
    ``controls``: the page's ``qk_colour`` and ``rm_qk_probes`` controls (the probe set's points added or not)."""
    box = _expander(MODEL_OPEN_KEY)
    if not box.open:
        return
    with box:
        c1, c2, c3 = st.columns([2, 3, 2])
        if focus is None:
            focus = focus_select(c1, labels[:n])
        by, probes = draw(controls[0], c2, horizontal=True), draw(controls[1], c3)
        scores, allowed = ht.scaled_scores[0, :n, :n], None if ht.mask is None else ht.mask[:n, :n]
        title = t("qk_title_model", l=layer, h=head)
        Q, K, row = ht.Q[0, :n], ht.K[0, :n], ht.attn[0, focus, :n]
        sides = qk_parts.points(labels[:n], Q.norm(dim=-1)), qk_parts.points(labels[:n], K.norm(dim=-1))
        look = {"by": by, "sides": sides, "focus_key": "focus", "allowed": _row(allowed, focus)}
        if not probes:
            _draw(Q, K, scores, allowed, row, focus, (labels[:n], labels[:n]), title, "rm_", look)
            return
        with st.spinner(t("qk_probes_wait")):
            p = real.probe_points(name, layer, head)
        m = qk_map(Q, K, scores, allowed, more=(p.Q, p.K))
        made = {"method": m.method, "explained": m.explained, "correlation": m.correlation, "d": Q.shape[-1]}
        look["sides"] = tuple(
            qk_parts.joined(side, qk_parts.points(p.token, v.norm(dim=-1), p.position))
            for side, v in zip(sides, (p.Q, p.K), strict=True)
        )
        look["more"] = {"points": (m.more_queries, m.more_keys), "sentences": len(set(p.sentence))}
        _drawn((m.queries, m.keys), made, row, focus, (labels[:n], labels[:n]), title, "rm_", look)


def _row(mask, focus: int) -> list[bool] | None:
    """The mask's row of the selected query (None: no mask, every key allowed): the map draws no line to a key
    the mask forbids."""
    return None if mask is None else [bool(v) for v in mask[focus]]


def _draw(Q, K, scores, allowed, row, focus: int, labels: tuple, title: str, prefix: str, look: dict) -> None:
    """The map of Q (L, d) and K (S, d) under these scaled scores, the selected query's weights on it, and how to
    read it; ``prefix``: its chart key's, and on Real model and the Lab a note without the explorer's d_q = d_k = 2;
    ``look``: its colouring (``_drawn``)."""
    m = qk_map(Q, K, scores, allowed)
    made = {"method": m.method, "explained": m.explained, "correlation": m.correlation, "d": Q.shape[-1]}
    _drawn((m.queries, m.keys), made, row, focus, labels, title, prefix, look)


def _drawn(points: tuple, m: dict, row, focus: int, labels: tuple, title: str, prefix: str, look: dict) -> None:
    """A map already made: its points (queries (L, 2), keys (S, 2)) and ``m``'s method, explained share,
    correlation and d (the head's size); ``look``: "by" (position, token or norm), "sides" (the queries' and the
    keys' ``qk_parts.points``), "focus_key" (the session key a clicked query is written to) and "allowed" (the
    selected query's mask row: no line to a masked key; absent or None: every key)."""
    st.caption(t("qk_intro"))
    r = f"{m['correlation']:.3f}" if m["correlation"] is not None else t("qk_no_r")
    d = m["d"]
    if d == 1:  # one number per query and key: a line, not a map; said instead of "PCA keeps 100%"
        note = t("qk_one_dim", r=r)
    elif m["method"] == "exact":
        note = t("qk_exact", r=r)
    else:
        key = "qk_pca_lab" if prefix.startswith("lab_") else "qk_pca_model" if prefix else "qk_pca"
        note = t(key, d=d, share=f"{m['explained']:.0%}", r=r)
    q_labels, k_labels = labels
    by, more = look["by"], look.get("more")
    colour = qk_parts.colours(by, *look["sides"], t(BAR[by]), (len(q_labels), len(k_labels)))
    figure = charts.qk_scatter(
        *points,
        q_labels,
        k_labels,
        row,
        focus=focus,
        title=title,
        colour=colour,
        more=more and more["points"],
        allowed=look.get("allowed"),
    )
    key = f"{prefix}chart_qk_map"
    click = qk_parts.on_click(key, look["focus_key"], figure.layout.meta["queries_curve"], len(q_labels))
    chart(figure, key, on_select=click)
    if more:
        total = len(q_labels) + len(k_labels) + sum(len(x) for x in more["points"])
        note += " " + t("qk_probes_note", points=total, sentences=more["sentences"])
    st.caption(note + " " + t(NOTE[by]) + " " + t("qk_click"))


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
        heads = [(layer, h) for layer in range(len(snap.qk)) for h in range(len(snap.qk[0]))]
        c1, c2, c3 = st.columns(3)
        named = {p: t("lab_head", layer=p[0], head=p[1]) for p in heads}
        layer, h = widgets.selectbox(c1, t("qk_lab_head"), heads, key=f"lab_qk_head_{name}", format_func=named.get)
        n = len(labels)
        focus = widgets.selectbox(
            c2, t("qk_lab_query"), range(n), key=f"lab_qk_query_{name}", default=n - 1, format_func=labels.__getitem__
        )
        by = widgets.selectbox(
            c3, t("qk_colour_by"), COLOURS, key=f"lab_qk_colour_{name}", format_func=label("qk_colour.")
        )
        m = snap.qk[layer][h]  # the worker's map: two points a token, computed where the run trains
        title = t("qk_title_lab", l=layer, h=h, step=snap.step)
        points = torch.tensor(m["queries"]), torch.tensor(m["keys"])
        sides = qk_parts.points(labels, m["q_norm"]), qk_parts.points(labels, m["k_norm"])
        row = snap.weights[layer][h, focus]
        # the snapshot keeps the weights, not the mask: a weight of exactly 0 after the softmax is a masked key
        look = {"by": by, "sides": sides, "focus_key": f"lab_qk_query_{name}", "allowed": [float(w) > 0 for w in row]}
        _drawn(points, m, row, focus, (labels, labels), title, f"lab_{name}_", look)
