"""Why a head attends, on the Real model page: one weight's score split into per-dimension terms and into a
query-source × key-source table, the largest source removed (predicted beside recomputed through the model), and
an atlas of every head's spread and first-token share. Both are background jobs (``attn_core.why`` in the
heavy worker): the page asks, shows progress, and draws the plain values when they arrive."""

from __future__ import annotations

import re

import streamlit as st

from explorer import charts
from explorer.base.i18n import t
from explorer.base.safe import md, plot
from explorer.charts.views import chart
from explorer.controls import PAGE, draw
from explorer.jobs import waiting
from explorer.model import real

SHOWN_TERMS = 16  # the largest per-dimension terms drawn (all of them are in the CLI's JSON)
ATLAS = ("entropy", "first_token", "first_token_value_weighted")


def source_name(name: str) -> str:
    """A source as the UI's language writes it: "L2 heads" -> "第 2 层的头" in 中文."""
    found = re.fullmatch(r"L(\d+) (heads|MLP)", name)
    if found:
        return t(f"why.src_{found.group(2).lower()}", l=found.group(1))
    return t(f"why.src_{name}")


def requests(name: str, sentence: str, pad_to: int, layer: int, head: int, query: int, key: int) -> dict:
    args = {"model": name, "sentence": sentence, "pad_to": pad_to}  # the worker loads it by its name
    spot = {"layer": layer, "head": head, "query": query, "key": key}
    return {"why": ("why_weight", args | spot), "atlas": ("atlas", args)}


def weight_ui(d: dict, pieces: list[str]) -> None:
    q, k = (md(f"{i} {pieces[i]}") for i in (d["query"], d["key"]))
    if d["masked"]:
        st.info(t("why.masked", q=q, k=k), icon=":material/block:")
        return
    a, b = st.columns(2)
    a.metric(t("why.score"), f"{d['score']:.4f}")
    b.metric(t("why.weight"), f"{d['weight']:.4f}")
    terms = d["terms"]
    order = sorted(range(len(terms)), key=lambda i: -abs(terms[i]))[:SHOWN_TERMS]
    qp, kp = (plot(f"{i} {pieces[i]}") for i in (d["query"], d["key"]))  # plotly's labels: escaped as such
    title = t("why.terms_title", q=qp, k=kp, n=len(order), d=len(terms))
    bars = charts.bars([terms[i] for i in order], [f"d{i}" for i in order], title=title)
    chart(bars, "why_terms")
    st.caption(t("why.terms_note", total=f"{sum(terms):.4f}"))
    names = [source_name(n) for n in d["sources"]["query"]]
    table = charts.heatmap(
        d["sources"]["values"],
        names,
        names,
        title=t("why.sources_title"),
        x_title=t("why.key_side"),
        y_title=t("why.query_side"),
        colorscale="RdBu",
        zmid=0,
    )
    chart(table, "why_sources")
    st.caption(t("why.sources_note"))
    r = d["removed"]
    st.markdown(
        t("why.removed", source=source_name(r["source"]), share=f"{r['share']:+.3f}", was=f"{d['weight']:.4f}")
        + " "
        + t("why.removed_numbers", predicted=f"{r['predicted']:.4f}", recomputed=f"{r['recomputed']:.4f}")
    )
    st.caption(t("why.removed_note"))


def atlas_ui(heads: list[dict], layers: int, n_heads: int) -> None:
    st.subheader(t("why.atlas_title"))
    st.caption(t("why.atlas_intro"))
    columns = st.columns(len(ATLAS))
    for col, measure in zip(columns, ATLAS):
        z = [[0.0] * n_heads for _ in range(layers)]
        for h in heads:
            z[h["layer"]][h["head"]] = h[measure]
        with col:
            chart(
                charts.head_grid(z, title=t(f"why.{measure}")),
                f"why_atlas_{measure}",
            )
    uniform = [(h["layer"], h["head"]) for h in heads if h["uniform_rows"]]
    if uniform:
        st.caption(t("why.uniform", heads=", ".join(f"{a}:{b}" for a, b in uniform)))


def why_ui(name: str, sentence: str, pad_to: int, layers: int, n_heads: int, layer: int, head: int, n: int) -> None:
    """The section: the query and key chosen here (in the link as rm_query and rm_key), then the jobs' results."""
    st.subheader(t("why.title"))
    st.caption(t("why.intro"))
    if not draw(PAGE["rm_why"], st):  # off by default (rm_why=1 in a link): nothing computed or drawn for it
        return
    pieces = list(real.run(name, sentence, pad_to).encoding.pieces)
    labels = [f"{i} {p}" for i, p in enumerate(pieces)]  # widget labels: shown as text
    c1, c2 = st.columns(2)
    query = draw(PAGE["rm_query"], c1, options=range(n), default=min(1, n - 1), format_func=labels.__getitem__)
    key = draw(PAGE["rm_key"], c2, options=range(len(labels)), default=0, format_func=labels.__getitem__)
    jobs = waiting.ask("model_why", requests(name, sentence, pad_to, layer, head, query, key))
    if waiting.status(jobs["why"]):
        weight_ui(jobs["why"].result, pieces)
    if waiting.status(jobs["atlas"]):
        atlas_ui(jobs["atlas"].result["heads"], layers, n_heads)
