"""The Next token page's own charts: the distribution's bars with the cut tokens greyed, and the logit lens's
grid with each cell's top token written in it. Plain values in, ``go.Figure`` out, built like every chart of the
app (``explorer.figures.base.figure``: the palette, presenter type, the text alternative). A token is named by its
label (``attn_core.models.token_labels``: whitespace seen, a split character marked), numbered from 1."""

from __future__ import annotations

import plotly.graph_objects as go

from attn_core.models import numbered
from explorer.base.safe import plot
from explorer.figures.base import CHECKED, axis_name, figure, ticks
from explorer.figures.style import Style

GREY = "#bdbdbd"


def ranked(top: list[dict]) -> list[str]:
    """'1 ␣the', '2 ↵': each candidate by its rank (1: the most probable) and label, as its bar and the predict
    option that names it both say (plain text: a chart escapes it)."""
    return [f"{c['rank']} {c['label']}" for c in top]


def distribution(top: list[dict], *, value: str, chosen: int, style: Style, title: str, y_title: str) -> go.Figure:
    """One bar per token (most probable first): ``value`` 'prob' (after the temperature) or 'logit'; the tokens
    top-k/top-p cut are grey, the chosen one outlined in the accent colour."""
    from explorer.base.i18n import t

    names = [plot(x) for x in ranked(top)]
    ys = [float(c[value]) for c in top]
    colours = [style.colour("accent") if c["id"] == chosen else style.colour("base") for c in top]
    colours = [col if c["kept"] else GREY for col, c in zip(colours, top)]
    outline = [3 if c["id"] == chosen else 0 for c in top]
    cut = [t("nt_bar_cut") if not c["kept"] else "" for c in top]
    trace = go.Bar(
        **CHECKED,
        x=names,
        y=ys,
        marker=dict(color=colours, line=dict(width=outline, color="#000000")),
        text=[f"{v:.3f}" if value == "prob" else f"{v:.2f}" for v in ys],
        textposition="outside",
        customdata=cut,
        hovertemplate="%{x}<br>%{y:.6g} %{customdata}<extra></extra>",
    )
    kept = sum(1 for c in top if c["kept"])
    alt = t("nt_alt_bars", first=top[0]["label"], n=len(top), kept=kept) if top else ""
    yaxis = dict(title=dict(text=axis_name(y_title)))
    return figure([trace], style=style, title=title, height=340, alt=alt, yaxis=yaxis, xaxis=ticks())


def lens_grid(cells: list[list[dict]], labels: list[str], decided_at: list[int], *, style: Style, title: str):
    """Rows: the embeddings, then each layer (the last one is the model's own output); columns: positions, from 1,
    by the prompt's token labels. Colour: the top token's probability; text: its label; a ring marks where each
    position is decided."""
    from explorer.base.i18n import t

    rows = [t("nt_lens_embed")] + [t("nt_lens_layer", l=i) for i in range(1, len(cells))]
    cols = [plot(x) for x in numbered(labels)]
    z = [[c["prob"] for c in row] for row in cells]
    text = [[plot(c["label"]) for c in row] for row in cells]
    heat = go.Heatmap(
        **CHECKED,
        z=z,
        x=cols,
        y=rows,
        text=text,
        texttemplate="%{text}",
        colorscale=style.scale("Blues"),
        zmin=0.0,
        zmax=1.0,
        colorbar=dict(thickness=12, title=dict(text=t("nt_prob"))),
        hovertemplate="%{y}<br>%{x}<br>→ %{text} (%{z:.3f})<extra></extra>",
    )
    ring = go.Scatter(
        **CHECKED,
        x=cols,
        y=[rows[r] for r in decided_at],
        mode="markers",
        marker=dict(symbol="circle-open", size=22, line=dict(width=3, color=style.colour("accent"))),
        name=t("nt_decided"),
        hoverinfo="skip",
    )
    alt = t("nt_alt_lens", n=sum(1 for r in decided_at if r < len(cells) - 1), L=len(labels))
    height = min(140 + 34 * len(rows), 520)
    return figure(
        [heat, ring],
        style=style,
        title=title,
        height=height,
        alt=alt,
        showlegend=False,
        xaxis=dict(title=dict(text=axis_name("token")), **ticks()),
        yaxis=dict(title=dict(text=axis_name("layer")), autorange="reversed", type="category"),
    )
