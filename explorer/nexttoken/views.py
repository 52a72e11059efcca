"""The Next token page's views of one prediction: the distribution's bars and the sentence that says why the
sampled token is (or is not) the most probable one, every position's own prediction, and the logit lens.

Every token is named by its label (``attn_core.models.token_labels``: '␣the', '↵', 床 (1/2), a stray byte ⟨E5⟩),
the one rule of the decoder's pages, and counted from 1: a rank, a position, a predict option and its bar."""

from __future__ import annotations

import streamlit as st

from explorer import figures as fig
from explorer.base import tables, widgets
from explorer.base.i18n import label, t
from explorer.base.safe import md, md_t, plot
from explorer.charts.views import chart
from explorer.controls import present
from explorer.nexttoken import charts, runs
from explorer.nexttoken.settings import Choice
from explorer.poll.view import predict_then_reveal

PREDICT_TEXTS = {"ask": "nt_predict_ask", "right": "nt_predict_right", "wrong": "nt_predict_wrong"}
PREDICT_TEXTS["truth"] = "nt_predict_truth"
CANDIDATES = 5  # tokens offered to the learner's prediction
NONE = "—"  # a cell with nothing to say (the last position has no next token)


def shown(label: str) -> str:
    """A token's label (``attn_core.models.token_labels``) quoted in a sentence, escaped for Markdown."""
    return "'" + md(label) + "'"


def narrate(part: str, **facts) -> None:
    """Presenter mode: the part's narration, with this prompt's numbers, in large type."""
    if present.on():
        with st.container(key=f"present-narration-{part}"):
            st.markdown(t(f"present.nt_{part}", **facts))


def why_sentence(p: dict) -> str:
    """The one sentence: why the chosen token is, or is not, the most probable one."""
    w = p["why"]
    c, top = w["chosen"], w["top"]
    facts = dict(tok=shown(c["label"]), p=f"{c['prob']:.3f}", top=shown(top["label"]), top_p=f"{top['prob']:.3f}")
    if w["reason"] == "greedy":
        return t("nt_why_greedy", **facts)
    facts |= dict(u=f"{w['u']:.3f}", q=f"{c['sampled_prob']:.3f}", rank=c["rank"], kept=w["kept"])
    return t("nt_why_top" if w["reason"] == "top" else "nt_why_lower", **facts)


def ask(p: dict, choice: Choice) -> None:
    """Predict, then reveal: which of the most probable tokens comes next? Each option is named as its bar is
    (``charts.ranked``: its rank from 1 and its label). (Stops the page until answered.)"""
    top = p["top"][:CANDIDATES]
    question = ("next_token", choice.model, choice.prompt, choice.temperature)
    words = [c["label"] for c in top]
    last = p["labels"][-1] if p["labels"] else ""
    names = [plot(x) for x in charts.ranked(top)]  # escaped as the bars' names are
    predict_then_reveal([c["prob"] for c in top], question, last, words, texts=PREDICT_TEXTS, labels=names)


def distribution_ui(p: dict, choice: Choice, predicting: bool, controls=None) -> None:
    """``controls``: where the probability / logit switch goes (presenter mode folds it away with the settings)."""
    st.subheader(t("nt_dist"))
    if predicting:
        ask(p, choice)
    narrate("dist", n=len(p["labels"]), vocab=p["vocab"], tok=shown(p["top"][0]["label"]))
    value = widgets.radio(
        controls or st,
        t("nt_show"),
        ["prob", "logit"],
        format_func=label("nt_show_"),
        horizontal=True,
        key="nt_value",
    )
    title = t("nt_bars_title", n=len(p["top"]), kept=p["kept"], vocab=p["vocab"])
    y_title = t("nt_show_prob") if value == "prob" else t("nt_show_logit")
    figure = charts.distribution(
        p["top"], value=value, chosen=p["chosen"]["id"], style=fig.run_style(), title=title, y_title=y_title
    )
    chart(figure, "nt_bars")
    st.caption(t("nt_filters", kept=p["kept"], vocab=p["vocab"], mass=f"{p['kept_mass']:.3f}"))
    (st.info if p["why"]["is_top"] else st.warning)(why_sentence(p), icon=":material/casino:")
    rows = {
        t("nt_rank"): [c["rank"] for c in p["top"]],
        t("token"): [c["label"] for c in p["top"]],
        t("nt_logit"): [round(c["logit"], 4) for c in p["top"]],
        t("nt_prob"): [round(c["prob"], 5) for c in p["top"]],
        t("nt_sampled_prob"): [round(c["sampled_prob"], 5) for c in p["top"]],
    }
    with st.expander(t("nt_table")):
        tables.dataframe(rows, hide_index=True)


def positions_ui(p: dict) -> None:
    """Every position's own prediction beside the token that actually follows it."""
    st.subheader(t("nt_positions"))
    st.caption(t("nt_positions_intro"))
    cells = p["positions"]
    hits = sum(1 for c in cells if c.get("hit"))
    narrate("positions", hits=hits, n=len(cells) - 1)
    rows = {
        t("position"): [c["position"] + 1 for c in cells],  # from 1, as the lens's columns and the bars count
        t("token"): [c["label"] for c in cells],
        t("nt_pos_top"): [c["top_label"] for c in cells],
        t("nt_prob"): [round(c["top_prob"], 4) for c in cells],
        t("nt_pos_next"): [c.get("next_label", NONE) for c in cells],
        t("nt_pos_rank"): [str(c["next_rank"]) if "next" in c else NONE for c in cells],
        t("nt_pos_hit"): [("✓" if c["hit"] else "✗") if "next" in c else NONE for c in cells],
    }
    tables.dataframe(rows, hide_index=True, height=min(38 + 35 * len(cells), 420))
    st.caption(t("nt_positions_hits", hits=hits, n=max(len(cells) - 1, 0)))


def lens_ui(choice: Choice) -> None:
    """Every layer × position's top token through the final norm and unembedding; where each is decided."""
    st.subheader(t("nt_lens"))
    st.caption(t("nt_lens_intro"))
    found = runs.lens(choice.model, choice.prompt)
    last = len(found["cells"]) - 1
    early = sum(1 for r in found["decided_at"] if r < last)
    narrate("lens", early=early, n=len(found["labels"]), layers=last)
    figure = charts.lens_grid(found["cells"], found["labels"], found["decided_at"], style=fig.run_style(), title="")
    chart(figure, "nt_lens_grid")
    decided = found["decided_at"][-1]
    st.markdown(md_t("nt_lens_last", tok=found["cells"][-1][-1]["label"], row=decided))
    if found["last_diff"] <= 1e-4:
        st.success(t("nt_lens_check", d=f"{found['last_diff']:.2g}"), icon=":material/check_circle:")
    else:
        st.error(t("nt_lens_check_bad", d=f"{found['last_diff']:.2g}"), icon=":material/warning:")
