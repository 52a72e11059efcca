"""Drawing helpers shared by pages: a chart with its CSV download, and the steps of attention
that the Step-by-step and Real model pages both show.

The step helpers take anything with a ``Trace``'s fields (``attn_core.trace.Trace``, or the
Real model's ``HeadTrace``): ``softmax``, ``mask``, ``attn``, ``context``.
"""

from __future__ import annotations

import html
import re

import streamlit as st

from attn_core.export import matrix_csv
from explorer import charts
from explorer import figures as fig
from explorer.base import session, tables, widgets
from explorer.base.i18n import STRINGS, t, tex
from explorer.base.safe import md
from explorer.charts import png

SOFTMAX_STAGES = (
    r"m_i = \max_j \tilde e_{ij},\quad p_{ij} = e^{\tilde e_{ij} - m_i},\quad "
    r"Z_i = \sum_j p_{ij},\quad \alpha_{ij} = p_{ij} / Z_i"
)
WEIGHTED_SUM = r"\alpha_{ij} = \mathrm{softmax}_j(\tilde e_{ij}),\qquad z_i = \sum_j \alpha_{ij} v_j"


def export_name(title: str, key: str, page: str) -> str:
    """A chart's file name when downloaded: the page, then its title (letters and digits of any script)."""
    text = re.sub(r"<[^>]+>", " ", html.unescape(title or "")) or key
    words = re.findall(r"\w+", text)
    return f"{page or 'home'}_{'_'.join(words)[:60] or key}"


def export_config(figure, key: str) -> dict:
    """Plotly's modebar: its camera button downloads the chart as a vector SVG named after page and chart."""
    name = export_name(figure.layout.title.text, key, session.get("_page", ""))
    return {"toImageButtonOptions": {"format": "svg", "filename": name}, "displaylogo": False}


def chart(figure, key: str, *, on_select=None) -> None:
    """Draw ``figure`` across its column, its main fact in a sentence under it (the chart's text
    alternative: what a screen reader reads, and what the back of a room can read). ``on_select``: a callback
    run when a point is clicked (the selection under ``key`` in the session); None: the chart takes no clicks."""
    options = {} if on_select is None else {"on_select": on_select, "selection_mode": "points"}
    config = export_config(figure, key)
    st.plotly_chart(figure, width="stretch", key=key, config=config, **options)
    png.record(config["toImageButtonOptions"]["filename"], figure)  # offered as PNG at the page's end
    alt = fig.alt_text(figure)
    if alt:
        st.caption(md(alt))


def a_b_maps(maps: list[tuple], key: str) -> None:
    """A comparison's maps in three columns: A's and B's weights (each ``(z, labels, title, name)``), then B − A when
    it is given (a third map, on a diverging scale about 0); each chart keyed ``f"{key}_{name}"``."""
    for i, (col, (z, labels, title, name)) in enumerate(zip(st.columns(3), maps, strict=False)):
        diff = i == 2
        with col:
            chart(
                charts.heatmap(
                    z,
                    labels,
                    labels,
                    title=title,
                    x_title="key",
                    y_title="query",
                    colorscale="RdBu" if diff else "Blues",
                    zmid=0.0 if diff else None,
                    weights=not diff,
                ),
                f"{key}_{name}",
            )


def focus_select(container, labels: list[str]) -> int:
    """The focus token (a query position; one ``focus`` in the URL for every page): a shorter
    sentence keeps it when it fits, else the last token. The charts built next outline it."""
    from explorer.controls import PAGE, draw

    n = len(labels)
    focus = draw(PAGE["focus"], container, options=range(n), default=min(1, n - 1), format_func=labels.__getitem__)
    fig.use_focus(labels[focus])
    return focus


def matrix_chart(figure, name: str, matrix=None, rows=None, cols=None, *, key_prefix: str = "") -> None:
    """Draw ``figure``; with ``matrix``, offer it as CSV with token labels."""
    chart(figure, f"{key_prefix}chart_{name}")
    if matrix is not None:
        st.download_button(
            t("download_csv", name=html.unescape(figure.layout.title.text or name)),  # the chart's own title
            lambda: matrix_csv(matrix, rows, cols),
            f"{name}.csv",
            "text/csv",
            key=f"{key_prefix}dl_{name}",
            on_click="ignore",
        )  # the CSV is built only when clicked


def signed_matrix(
    values, name: str, rows, cols, *, title: str, x_title: str, y_title: str, y=None, key_prefix: str = ""
) -> None:
    """A matrix of either sign (rows x cols) as a heatmap centred on 0, with its CSV (``matrix_chart``);
    ``y``: the rows' axis labels (the rows themselves when None)."""
    figure = charts.heatmap(
        values,
        cols,
        rows if y is None else y,
        title=title,
        x_title=x_title,
        y_title=y_title,
        colorscale="RdBu",
        zmid=0,
    )
    matrix_chart(figure, name, values, rows, cols, key_prefix=key_prefix)


def query_key_chart(
    m, name: str, q_words: list[str], k_words: list[str], *, title: str, key_prefix: str = "", **options
) -> None:
    """A query × key matrix (a row per query token, a column per key token) drawn with its CSV download;
    ``options``: the heatmap's own (``colorscale``, ``zmid``, ``zrange``, ``weights``)."""
    figure = charts.heatmap(
        m,
        fig.labels(k_words),
        fig.labels(q_words),
        title=title,
        x_title="key",
        y_title="query",
        **options,
    )
    matrix_chart(figure, name, m, q_words, k_words, key_prefix=key_prefix)


def scores_step(tr, h: int, q_words: list[str], k_words: list[str], *, key_prefix: str = "") -> None:
    """Raw scores Q Kᵀ beside the scaled ones that enter the mask and the softmax."""
    a, b = st.columns(2)
    for col, name, title in ((a, "scores", t("raw_scores")), (b, "scaled_scores", t("scaled_scores"))):
        with col:
            m = getattr(tr, name)[h]
            query_key_chart(m, name, q_words, k_words, title=title, key_prefix=key_prefix, colorscale="RdBu", zmid=0)


def mask_step(tr, q_words: list[str], k_words: list[str], *, key_prefix: str = "") -> None:
    """How many pairs may attend, and the mask as a matrix (1 = may attend)."""
    mask = tr.mask.int()
    st.caption(t("mask_count", n=int(mask.sum()), total=mask.numel()))
    s = getattr(tr, "settings", None)
    if s is not None and s.mask == "padding" and bool(tr.mask.all()):  # nothing padded: say why nothing changed
        st.info(t("mask_nothing_padded", n=len(k_words)), icon=":material/info:")
    query_key_chart(
        mask,
        "mask",
        q_words,
        k_words,
        title=t("mask_matrix"),
        key_prefix=key_prefix,
        colorscale="Blues",
        zrange=(0, 1),  # 1 = may attend: the same scale whatever the mask
    )


def softmax_step(tr, h: int, q_words: list[str], k_words: list[str], *, key_prefix: str = "", explain=st) -> None:
    """The softmax in stages: each row's max and sum beside exp(x - max). ``explain``: where the
    formula and the code go (presenter mode folds them away)."""
    explain.latex(SOFTMAX_STAGES)
    widgets.code(
        explain,
        "m = scaled.amax(-1, keepdim=True)\n"
        "p = (scaled - m).exp()   # masked entries -> 0\n"
        "Z = p.sum(-1, keepdim=True)\n"
        "weights = p / Z",
    )
    softmax_charts(tr.softmax, h, q_words, k_words, key_prefix=key_prefix)


def softmax_charts(sm, h: int, q_words: list[str], k_words: list[str], *, key_prefix: str = "") -> None:
    """Each row's max and sum beside exp(x - max), from ``sm``'s ``row_max``, ``row_sum`` and ``exp``."""
    a, b = st.columns([1, 3])
    with a:
        tables.dataframe(
            {t("token"): q_words, t("sm_max"): sm.row_max[h].tolist(), t("sm_sum"): sm.row_sum[h].tolist()},
            hide_index=True,
        )
    with b:
        query_key_chart(sm.exp[h], "exp", q_words, k_words, title=t("sm_exp"), key_prefix=key_prefix)


def output_step(
    tr, h: int, q_words: list[str], k_words: list[str], *, weights_title: str, key_prefix: str = ""
) -> None:
    """The weights and the context vectors they make, side by side."""
    a, b = st.columns(2)
    with a:
        query_key_chart(
            tr.attn[h], "weights", q_words, k_words, title=weights_title, key_prefix=key_prefix, weights=True
        )
    with b:
        dims = [str(i) for i in range(tr.context.shape[-1])]
        signed_matrix(
            tr.context[h],
            "context",
            q_words,
            dims,
            title=t("context"),
            x_title="dim",
            y_title="query",
            y=fig.labels(q_words),
            key_prefix=key_prefix,
        )


def tensor_name(stage, name: str) -> str:
    """How a chart names a variant's intermediate: its words in the UI's language (``vs_tensor.``), else the
    engine's own label (a symbol: e_ij, K' = EK)."""
    key = f"vs_tensor.{name}"
    return t(key) if key in STRINGS else stage.labels.get(name, name)


def variant_step(
    tr, stage, h: int, focus: int, q_words: list[str], k_words: list[str], explain=st, presenting: bool = False
) -> None:
    """One of a variant's own steps: its formula, its code with this input's shapes (in ``explain``: the
    page, or presenter mode's fold-away), what to look at, and each of its intermediates for head ``h``
    (a tensor shared by all heads has one row). ``presenting``: what to look at comes under the charts,
    which must start on the first screen."""
    explain.latex(tex(stage.formula))
    widgets.code(explain, stage.code)
    if not presenting:
        _variant_notes(stage)
    _variant_charts(tr, stage, h, focus, q_words, k_words)
    if presenting:
        _variant_notes(stage)


def _variant_notes(stage) -> None:
    """What to look at in a variant's step, and how far it is from exact softmax where it says so."""
    st.caption(t(f"vs.{stage.key}.note", **stage.facts))
    if "error" in stage.facts:
        (st.warning if stage.facts["error"] >= stage.facts["uniform"] else st.info)(
            t("vs_error", **stage.facts)
            + (" " + t("vs_no_better") if stage.facts["error"] >= stage.facts["uniform"] else "")
        )


def _variant_charts(tr, stage, h: int, focus: int, q_words: list[str], k_words: list[str]) -> None:
    """Each of a variant step's intermediates for head ``h``, and the running state at the focus token."""
    from attn_core.kernels import AXES

    names = {"query": fig.labels(q_words), "key": fig.labels(k_words)}
    items = list(stage.tensors.items())
    cols = st.columns(min(len(items), 2))
    for n, (name, tensor) in enumerate(items):
        m = tensor[h if tensor.shape[0] > 1 else 0]
        rows, columns = AXES.get(name, ("", ""))
        y = names.get(rows) or [str(i) for i in range(m.shape[0])]
        x = names.get(columns) or [str(j) for j in range(m.shape[1])]
        signed = bool((m.nan_to_num(0.0) < 0).any())
        with cols[n % len(cols)]:
            matrix_chart(
                charts.heatmap(
                    m,
                    x,
                    y,
                    title=f"{tensor_name(stage, name)} {tuple(m.shape)}",
                    x_title=columns,
                    y_title=rows,
                    colorscale="RdBu" if signed else "Viridis",
                    zmid=0 if signed else None,
                ),
                name,
                m,
                y,
                x,
            )
    if stage.key == "prefix_state":
        _prefix_state_chart(tr, h, focus, q_words)


def _prefix_state_chart(tr, h: int, focus: int, q_words: list[str]) -> None:
    """A linear variant's running state (the prefix sum of φ(k) vᵀ) where the focus token stands."""
    from attn_core.kernels import prefix_state

    phi_k = tr.variant.tensors()["phi_k"]
    state, _z = prefix_state(phi_k[h : h + 1], tr.V[h : h + 1], focus)
    dims = [str(j) for j in range(state.shape[-1])]
    feats = [str(i) for i in range(state.shape[-2])]
    title = t("vs_prefix_at", tok=q_words[focus])
    signed_matrix(state[0], "prefix_state", feats, dims, title=title, x_title="dv", y_title="feature")
