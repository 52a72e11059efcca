"""The source tutorial, reproduced with its exact numbers, in its order."""

import streamlit as st

from attn_core.config import TUTORIAL_SENTENCE
from attn_core.tutorial import PRINTED, walkthrough
from explorer import charts
from explorer import figures as fig
from explorer.base import tables
from explorer.base.i18n import t
from explorer.boot import run_through_app
from explorer.charts.views import chart
from explorer.controls import later

run_through_app()  # before anything is drawn; see explorer/boot.py


@st.cache_resource(show_spinner=False)
def _walk():
    return walkthrough()


def _row(v) -> str:
    return "[" + ", ".join(f"{x:.4f}" for x in v) + "]"


w = _walk()
tr = w.trace
st.title(t("page.tutorial"))
st.caption(t("tut_intro"))
st.info(t("tut_own_sentence", sentence=TUTORIAL_SENTENCE), icon=":material/info:")  # not the sidebar's: say so

st.subheader(t("tut_s1"))
st.code(
    'sentence = "Life is short, eat dessert first"\n'
    "dc = {s: i for i, s in enumerate(sorted(sentence.replace(',', '').split()))}\n"
    f"print(dc)            # {tr.tokens.vocab}\n"
    f"print(sentence_int)  # tensor({list(tr.tokens.ids)})",
    language="python",
)
tables.dataframe(
    {
        "": [t("tut_printed"), t("tut_computed")],
        t("tut_vocab"): [str(PRINTED["vocab"]), str(tr.tokens.vocab)],
        t("tut_ids"): [str(PRINTED["ids"]), str(list(tr.tokens.ids))],
    },
    hide_index=True,
)

st.subheader(t("tut_s2"))
st.code(
    f"torch.manual_seed(123)\nembed = torch.nn.Embedding(6, 16)\nembedded_sentence = embed(sentence_int).detach()\n"
    f"print(embedded_sentence.shape)  # torch.Size({list(tr.x.shape)})",
    language="python",
)

st.subheader(t("tut_s3"))
st.code(
    "torch.manual_seed(123)  # again: the printed numbers need it\nd_q, d_k, d_v = 24, 24, 28\n"
    "W_query = torch.nn.Parameter(torch.rand(d_q, d))\nW_key = torch.nn.Parameter(torch.rand(d_k, d))\n"
    "W_value = torch.nn.Parameter(torch.rand(d_v, d))",
    language="python",
)
st.caption(t("tut_seed_note"))

st.subheader(t("tut_s4"))
st.code(
    f"query_2 = W_query.matmul(x_2)       # torch.Size({list(w.query_2.shape)})\n"
    f"keys = W_key.matmul(embedded_sentence.T).T      # torch.Size({list(tr.K[0].shape)})\n"
    f"values = W_value.matmul(embedded_sentence.T).T  # torch.Size({list(tr.V[0].shape)})\n"
    f"omega_2 = query_2.matmul(keys.T)\nattention_weights_2 = F.softmax(omega_2 / d_k**0.5, dim=0)",
    language="python",
)
tables.dataframe(
    {
        "": ["omega_2", "attention_weights_2"],
        t("tut_printed"): [_row(PRINTED["omega_2"]), _row(PRINTED["attention_weights_2"])],
        t("tut_computed"): [_row(w.omega_2.tolist()), _row(w.attention_weights_2.tolist())],
        t("tut_match"): ["✓" if w.matches(k) else "✗" for k in ("omega_2", "attention_weights_2")],
    },
    hide_index=True,
)
names = fig.labels(tr.tokens.words)
chart(
    charts.bars(w.attention_weights_2.tolist(), names, title="attention_weights_2", highlight=4),
    "tut_bars",
)
st.success(t("tut_dessert", w=float(w.attention_weights_2[4])))


def steps_5_to_7() -> None:
    """The tutorial after its first chart (``later``: on a tab's first run, once that chart is on screen)."""
    st.subheader(t("tut_s5"))
    st.code(
        "context_vector_2 = attention_weights_2.matmul(values)\n"
        f"print(context_vector_2.shape)  # torch.Size({list(w.context_vector_2.shape)})",
        language="python",
    )

    st.subheader(t("tut_s6"))
    st.code(
        f"multihead_query_2 = multihead_W_query.matmul(x_2)  # torch.Size({list(w.multihead_query_2.shape)})\n"
        f"multihead_keys    # torch.Size({list(w.multihead_keys.shape)})\n"
        f"multihead_values  # torch.Size({list(w.multihead_values.shape)})\n"
        f"final_context = torch.cat(multihead_contexts, dim=0)  # torch.Size({list(w.final_context.shape)})",
        language="python",
    )
    chart(
        charts.heatmap(
            w.multihead_weights_2,
            names,
            [f"{t('head')} {h}" for h in range(3)],
            title=t("tut_heads_title"),
            x_title="key",
            y_title=t("head"),
        ),
        "tut_heads",
    )

    st.subheader(t("tut_s7"))
    st.code(
        f"embedded_sentence_2 = torch.rand(8, 16)\nquery_2 = W_query.matmul(embedded_sentence_2[1])\n"
        f"context = attention.matmul(values)  # torch.Size({list(w.cross_context.shape)})",
        language="python",
    )
    chart(charts.bars(w.cross_weights.tolist(), names, title=t("tut_cross_title")), "tut_cross")
    st.page_link("pages/1_steps.py", label=t("tut_open"), icon=":material/calculate:")


later.below_first_screen("tutorial", steps_5_to_7)
