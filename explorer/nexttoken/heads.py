"""What a head writes, on the Next token page: a chosen head's output at the last position read through the final
norm and the unembedding (the tokens it promotes and suppresses, its direct effect on the chosen token's logit),
and every head's direct effect as a layers × heads map that sums, with the other components, to the logit.

The final norm is not linear; its scale is frozen at the value it takes on the whole residual stream at that
position (the page says so, with the number), which makes the sum exact."""

from __future__ import annotations

import streamlit as st

from explorer import charts
from explorer.base import tables
from explorer.base.i18n import t
from explorer.charts.views import chart
from explorer.controls import draw, present
from explorer.nexttoken import runs
from explorer.nexttoken.settings import HEAD, LAYER, Choice
from explorer.nexttoken.views import narrate, shown


def parts(e: dict) -> list[tuple[str, float]]:
    """Every component's total direct effect, in the order the residual stream adds them, and their sum."""
    rows = [(t("nt_eff_embed"), e["embeddings"])]
    rows += [(t("nt_eff_heads"), sum(map(sum, e["heads"])))]
    rows += [(t("nt_eff_attn_bias"), sum(e["attn_bias"])), (t("nt_eff_mlp"), sum(e["mlp"]))]
    rows += [(t("nt_eff_norm_bias"), e["norm_bias"]), (t("nt_eff_unembed_bias"), e["unembed_bias"])]
    return rows


def sum_ui(e: dict, tok: str) -> None:
    """The table of components, their sum and the model's own logit."""
    rows = parts(e)
    tables.dataframe(
        {t("nt_eff_part"): [name for name, _ in rows], t("nt_eff_value"): [round(v, 5) for _, v in rows]},
        hide_index=True,
    )
    facts = dict(
        tok=tok, total=f"{e['total']:.5f}", logit=f"{e['logit']:.5f}", d=f"{abs(e['total'] - e['logit']):.1g}"
    )
    st.markdown(t("nt_eff_sum", **facts))
    st.caption(t("nt_eff_frozen", s=f"{e['scale']:.4g}", kind=t("nt_norm_layer" if e["centred"] else "nt_norm_rms")))


def map_ui(e: dict, label: str, layer: int, head: int) -> None:
    """Every head's direct effect on the logit of the token ``label`` names (its label, ``models.token_labels``)."""
    heads = e["heads"]
    figure = charts.head_grid(
        heads,
        title=t("nt_eff_map", tok=label),
        colorscale="RdBu",
        zmid=0.0,
    )
    chart(figure, "nt_eff_map")
    st.caption(t("nt_eff_this", l=layer, h=head, v=f"{heads[layer][head]:.4f}"))


def vocab_ui(v: dict) -> None:
    """The tokens the head's output promotes and suppresses most."""
    a, b = st.columns(2)
    for col, key, title in ((a, "promoted", t("nt_promoted")), (b, "suppressed", t("nt_suppressed"))):
        col.markdown(f"**{title}**")
        tables.dataframe(
            {t("token"): [x["label"] for x in v[key]], t("nt_eff_value"): [round(x["effect"], 4) for x in v[key]]},
            container=col,
            hide_index=True,
        )


def heads_ui(choice: Choice, layers: int, heads: int, token: int, label: str) -> None:
    """The section (a fragment of the page: a new layer or head reruns only it). ``token``: the chosen token's id,
    ``label`` its label (``models.token_labels``)."""
    st.subheader(t("nt_heads"))
    st.caption(t("nt_heads_intro"))
    c1, c2 = st.columns(2)
    layer = int(draw(LAYER, c1, high=layers - 1))
    head = int(draw(HEAD, c2, high=heads - 1))
    e = runs.effects(choice.model, choice.prompt, token)
    v = runs.head_vocab(choice.model, choice.prompt, layer, head, token)
    tok = shown(label)
    narrate("heads", tok=tok, l=layer, h=head, v=f"{v['effect']:.3f}", logit=f"{e['logit']:.3f}")
    if present.on():  # presenting: the map of every head first, on the first screen (the narration says the rest)
        map_ui(e, label, layer, head)
    st.markdown(t("nt_head_effect", l=layer, h=head, tok=tok, v=f"{v['effect']:.4f}", norm=f"{v['norm']:.3f}"))
    vocab_ui(v)
    if not present.on():
        map_ui(e, label, layer, head)
    sum_ui(e, tok)
