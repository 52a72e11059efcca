"""The toy trace's notebook (Step by step, Multi-head, Cross-attention): the Markdown of each step (its formula and
the page's sentence) beside the code cell that recomputes it, the variant's own steps, and the comparison."""

from __future__ import annotations

from ..config import Settings
from ..errors import AttentionConfigError
from ..kernels import KERNELS
from ..notebook_text import SOFTMAX_STAGES, WEIGHTED_SUM, has, text
from ..trace import Trace, param_count, run_trace
from .cells import Cell, Notebook, _md, _tex, check_lang, quoted, user_md
from .tensors import _compare_cell, app_lists, app_tensors
from .trace_code import (
    _mask_code,
    _multihead_code,
    _output_code,
    _qkv_code,
    _scores_code,
    _setup,
    _softmax_code,
    _tokens_code,
)
from .variants import check_exportable, pattern_code, variant_code

PAGES = ("steps", "multihead", "cross")
_MASK_TEX = r"\tilde e_{ij} = \begin{cases} e_{ij} & \text{mask}_{ij} \\ -\infty & \text{otherwise}\end{cases}"
_SCORE_TEX = {
    "dot": r"e_{ij} = q_i^\top k_j",
    "scaled_dot": r"e_{ij} = \frac{q_i^\top k_j}{\sqrt{d_k}}",
    "additive": r"e_{ij} = v^\top \tanh(W_a q_i + U_a k_j)",
}


def _title(page: str, t: Trace, lang: str) -> str:
    key = {"steps": "page.steps", "multihead": "page.multihead", "cross": "page.cross"}[page]
    title = text(key, lang)
    if t.settings.kernel != "full":
        name = f"kernel.{t.settings.kernel}.label"
        title += " — " + text(name, lang) if has(name) else ""
    return "# " + title


def _settings_md(s: Settings, lang: str) -> str:
    rows = [f"- {text('nb_settings', lang)}:"]
    rows.append(f"  - sentence: {quoted(s.sentence)}")
    if s.source is not None:
        rows.append(f"  - source: {quoted(s.source)}")
    skip = {"sentence", "source", "max_tokens", "max_bytes"}
    items = ", ".join(f"{k} = {user_md(v)}" for k, v in s.to_dict().items() if k not in skip)
    rows.append(f"  - {items}")
    return "\n".join(rows)


def trace_notebook(
    settings: Settings,
    *,
    lang: str = "en",
    focus: int | None = None,
    head: int = 0,
    page: str | None = None,
    trace: Trace | None = None,
) -> Notebook:
    """The notebook of one view. Refuses what ``run_trace`` refuses, with its message."""
    t = trace if trace is not None else run_trace(settings)
    s = t.settings
    check_lang(lang)
    page = page or ("cross" if t.is_cross else "multihead" if s.heads > 1 else "steps")
    if page not in PAGES:
        raise AttentionConfigError("page", "unknown_choice", value=page, options=", ".join(PAGES))
    if not 0 <= head < s.heads:
        raise AttentionConfigError("head", "no_head", head=head, heads=s.heads, last=s.heads - 1)
    focus = min(max(1 if focus is None else focus, 0), len(t.tokens.words) - 1)
    check_exportable(t)
    tensors, lists = app_tensors(t), app_lists(t)
    cells = _intro_cells(t, page, lang, focus, head) + _step_cells(t, lang, focus, head)
    cells += _variant_cells(t, lang) + _output_cells(t, lang, focus) + _multihead_cells(t, lang)
    cells += [
        _md("## " + text("nb_compare_title", lang), text("nb_compare", lang)),
        Cell("code", _compare_cell(tensors, lists)),
    ]
    return Notebook(tuple(cells), f"attention_{page}")


def _intro_cells(t: Trace, page: str, lang: str, focus: int, h: int) -> list[Cell]:
    """The title, what the notebook recomputes and with which settings, and the setup cell."""
    s = t.settings
    L, S = len(t.tokens.words), len(t.key_tokens.words)
    tok = t.tokens.words[focus]
    return [
        _md(
            _title(page, t, lang),
            text(
                "nb_intro",
                lang,
                page=text(f"page.{'steps' if page == 'steps' else page}", lang),
                tok=quoted(tok),
                head=h,
            ),
            text("cross_intro", lang, L=L, S=S) if t.is_cross else "",
            text("variant_steps", lang, name=text(f"kernel.{s.kernel}.label", lang)) if t.variant is not None else "",
            _settings_md(s, lang),
        ),
        _md("## 0 " + text("nb_setup", lang)),
        Cell("code", _setup(s, t, focus, h)),
    ]


def _step_cells(t: Trace, lang: str, focus: int, h: int) -> list[Cell]:
    """Tokens and embeddings, Q/K/V, the scores, the mask and the staged softmax."""
    s = t.settings
    tok = t.tokens.words[focus]
    return [
        _md(
            "## " + text("st_tokens", lang),
            text("tokens_table", lang) + ". " + text("nb_embed", lang, seed=s.seed),
            _tex(r"x_i = E[\mathrm{id}_i] + PE_i \qquad E \in \mathbb{R}^{|V| \times d_{model}}"),
        ),
        Cell("code", _tokens_code(s)),
        _md(
            "## " + text("st_qkv", lang),
            _tex(r"Q = X W_q^\top,\quad K = X W_k^\top,\quad V = X W_v^\top"),
            text("nb_weights", lang, seed=s.seed, init=s.init),
        ),
        Cell("code", _qkv_code(s)),
        _md(
            "## " + text("st_scores", lang),
            _tex(_SCORE_TEX[s.score] + (rf"\ /\ T,\ T = {s.temperature:g}" if s.temperature != 1 else "")),
            text("focus_scores", lang, tok=user_md(tok)) + ".",
        ),
        Cell("code", _scores_code(s)),
        _md(
            "## " + text("st_mask", lang),
            _tex(_MASK_TEX),
            text("mask_count", lang, n=int(t.mask.sum()), total=t.mask.numel()),
        ),
        Cell("code", _mask_code(s, pattern_code(t))),
        _md(
            "## " + text("st_softmax", lang),
            _tex(SOFTMAX_STAGES),
            text("why_scale", lang, unscaled=t.peak_weight(h, focus, scaled=False), scaled=t.peak_weight(h, focus)),
            text("empty_rows", lang, n=int(t.empty_rows[h].sum())) if bool(t.empty_rows.any()) else "",
        ),
        Cell("code", _softmax_code()),
    ]


def _variant_cells(t: Trace, lang: str) -> list[Cell]:
    """The variant's own steps (5.1, 5.2, ...), from its spec: its formula and the page's note for each; none for
    full attention. A variant without stages of its own: one step, its name and formula, then its code."""
    s = t.settings
    steps = variant_code(t)
    if t.variant is None:
        if not steps:
            return []
        kern = KERNELS[s.kernel]
        name = f"kernel.{s.kernel}.label"
        title = "## 5 " + (text(name, lang) if has(name) else user_md(kern.label))
        return [_md(title, _tex(kern.formula))] + [Cell("code", code) for _, code in steps]
    cells = []
    stages = {st.key: st for st in t.variant.stages}
    for n, (key, code) in enumerate(steps):
        st = stages[key]
        notes = [text(f"vs.{key}.note", lang, **st.facts)]
        if "error" in st.facts:
            notes.append(text("vs_error", lang, **st.facts))
            if st.facts["error"] >= st.facts["uniform"]:
                notes.append(text("vs_no_better", lang))
        head_md = f"## 5.{n + 1} " + text(f"vs.{key}.title", lang)
        intro = text("nb_variant", lang, name=text(f"kernel.{s.kernel}.label", lang)) if n == 0 else ""
        cells += [_md(head_md, intro, _tex(st.formula), " ".join(notes)), Cell("code", code)]
    return cells


def _output_cells(t: Trace, lang: str, focus: int) -> list[Cell]:
    s = t.settings
    tok = t.tokens.words[focus]
    kern = KERNELS[s.kernel]
    return [
        _md(
            "## " + text("st_output", lang),
            _tex(WEIGHTED_SUM if t.variant is None else kern.formula),
            text("focus_row", lang, tok=user_md(tok)) + "; " + text("focus_context", lang, tok=user_md(tok)) + ".",
            text("dropout_note", lang) if s.dropout > 0 else "",
        ),
        Cell("code", _output_code(t)),
    ]


def _multihead_cells(t: Trace, lang: str) -> list[Cell]:
    s = t.settings
    n = param_count(s)
    proj = text("mh_proj", lang) if t.projected is not None else ""
    return [
        _md(
            "## " + text("page.multihead", lang),
            text("mh_intro", lang, proj=proj),
            _tex(
                r"\mathrm{MultiHead}(X) = \mathrm{Concat}(z^{(1)}, \dots, z^{(h)})"
                + (r"\,W_o^\top" if t.projected is not None else "")
                + (r"\quad\to\quad \mathrm{LayerNorm}(X + \cdot)" if s.residual_norm else "")
            ),
            text("nb_params", lang, n=n["total"], f=n["formula_4d2"]),
        ),
        Cell("code", _multihead_code(t)),
    ]
