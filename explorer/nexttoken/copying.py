"""Copying what came before, on the Next token page: a prompt that repeats (random tokens twice, the prompt twice,
or the prompt as it is), each copied token's loss the first time and in the copy, the induction head's map with
its stripe (each query on the key after the earlier occurrence of its token) marked, and the causal check: every
head ablated in turn, the copy's loss with it gone (``attn_core.interpret.copying``).

One batched forward of the small decoder (1 + layers × heads rows), computed by the shared background jobs
(``explorer.jobs.heavy``): a class opening the same link computes it once, out of the server's script threads."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from attn_core import models
from attn_core.interpret import copying as cp
from explorer import charts
from explorer import figures as fig
from explorer.base import tables
from explorer.base.i18n import label, t
from explorer.base.safe import plot
from explorer.charts.views import chart
from explorer.controls import Control, draw, present
from explorer.figures.base import CHECKED
from explorer.jobs import waiting
from explorer.nexttoken.settings import Choice
from explorer.nexttoken.views import narrate
from explorer.poll.view import predict_then_reveal

KIND = Control("copy", "radio", "random", options=cp.KINDS, title="nt_copy_kind")
PREDICT_TEXTS = {"ask": "nt_copy_ask", "right": "nt_copy_right", "wrong": "nt_copy_wrong", "truth": "nt_copy_truth"}


def request(model: str, kind: str, prompt: str, seed: int) -> tuple[str, dict]:
    """The background job that computes the view (``attn_core.heavy``'s ``next_token_copying``): one per model,
    kind, prompt and seed, shared by every session that asks for the same."""
    args = {"model": model, "kind": kind, "prompt": prompt if kind != "random" else ""}
    return "next_token_copying", args | {"seed": int(seed)}


def names(labels: list[str]) -> list[str]:
    """'3 ␣cat': the position first, from 1 as everywhere on the page (a token may repeat: that is the point
    here), then the token's label (whitespace seen, a split character marked)."""
    return models.numbered(labels)


def losses_chart(f: dict, labels: list[str]):
    """The copied tokens' loss the first time and in the copy, side by side."""
    copied = [labels[t + 1] for t, _ in f["copies"]]
    series = {t("nt_copy_first"): f["first"], t("nt_copy_second"): f["second"]}
    return charts.grouped_bars(series, copied, title=t("nt_copy_losses"))


def map_chart(f: dict, labels: list[str]):
    """The induction head's weights, its stripe's keys ringed."""
    layer, head = f["head"]
    figure = charts.heatmap(
        f["weights"],
        labels,
        labels,
        title=t("nt_copy_map", l=layer, h=head),
        x_title=t("nt_copy_key"),
        y_title=t("nt_copy_query"),
        colorscale="Blues",
        weights=True,
        zrange=(0.0, 1.0),
    )
    if len(labels) <= fig.MAX_SIDE:
        qs = [q for q, _ in f["copies"]]
        ring = go.Scatter(
            **CHECKED,
            x=[labels[f["sources"][q]] for q in qs],
            y=[labels[q] for q in qs],
            mode="markers",
            marker=dict(symbol="circle-open", size=12, line=dict(width=2, color=fig.run_style().colour("accent"))),
            name=t("nt_copy_stripe"),
            hoverinfo="skip",
        )
        figure.add_trace(ring)
    return figure


def ablation_rows(f: dict) -> dict:
    """Every head: its stripe weight, the copy's loss with it ablated and the change, the induction head first."""
    cells = [(lay, h) for lay in range(len(f["stripe"])) for h in range(len(f["stripe"][0]))]
    cells.sort(key=lambda c: -f["stripe"][c[0]][c[1]])
    base = f["second_mean"]
    return {
        t("nt_copy_head"): [f"L{lay} H{h}" for lay, h in cells],
        t("nt_copy_stripe_w"): [round(f["stripe"][lay][h], 3) for lay, h in cells],
        t("nt_copy_ablated"): [round(f["ablated"][lay][h], 3) for lay, h in cells],
        t("nt_copy_rise"): [round(f["ablated"][lay][h] - base, 3) for lay, h in cells],
    }


def ask(f: dict, labels: list[str], choice: Choice, kind: str) -> None:
    """Predict, then reveal: which earlier token will the induction head look at from the last copying query?"""
    q = f["copies"][-1][0]
    question = ("next_token_copy", choice.model, kind, choice.prompt if kind != "random" else "", choice.seed, q)
    row = f["weights"][q][: q + 1]
    words = f["labels"][: q + 1]
    options = [plot(x) for x in labels[: q + 1]]  # named as the map's keys are, escaped as a chart's names
    predict_then_reveal(row, question, f["labels"][q], words, texts=PREDICT_TEXTS, slot="_copy", labels=options)


def copying_ui(choice: Choice, predicting: bool) -> None:
    """The section (a fragment of the page: a new kind of prompt reruns only it)."""
    st.subheader(t("nt_copy"))
    st.caption(t("nt_copy_intro"))
    presenting = present.on()  # the narration says the loss sentence; the chart on the first screen
    shown_label = "collapsed" if presenting else "visible"
    kind = draw(KIND, st, format_func=label("nt_copy_kinds."), horizontal=True, label_visibility=shown_label)
    job = waiting.ask("nt_copy", {"copy": request(choice.model, kind, choice.prompt, choice.seed)})["copy"]
    if not waiting.status(job):
        return
    f = job.result
    labels = names(f["labels"])
    if not f["copies"]:
        st.info(t("nt_copy_none"), icon=":material/info:")
        return
    layer, head = f["head"]
    first, second = f["first_mean"], f["second_mean"]
    facts = dict(n=len(f["copies"]), first=f"{first:.2f}", second=f"{second:.2f}", ratio=f"{second / first:.2f}")
    narrate("copy", **facts)
    if not presenting:
        st.markdown(t("nt_copy_loss_sentence", **facts))
    chart(losses_chart(f, labels), "nt_copy_losses")
    if predicting:
        ask(f, labels, choice, kind)
    stripe = f["stripe"][layer][head]
    st.markdown(t("nt_copy_head_sentence", l=layer, h=head, w=f"{stripe:.2f}"))
    chart(map_chart(f, labels), "nt_copy_map")
    ablated = f["ablated"][layer][head]
    low = f["unrelated"]
    other = f["ablated"][low[0]][low[1]]
    check = dict(l=layer, h=head, before=f"{second:.2f}", after=f"{ablated:.2f}", first=f"{first:.2f}")
    check |= dict(ol=low[0], oh=low[1], other=f"{other:.2f}")
    st.markdown(t("nt_copy_ablate_sentence", **check))
    tables.dataframe(ablation_rows(f), hide_index=True)
