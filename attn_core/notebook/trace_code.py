"""The toy trace's code cells, step by step: the setup (every setting as a constant), tokens and embeddings, Q/K/V,
scores, the mask, the staged softmax, the output and the heads together. Each recomputes its step with the same
generator calls as ``attn_core`` and prints what the page shows for the focus token."""

from __future__ import annotations

from ..config import Settings
from ..kernels import KERNELS
from ..kernels.notebook_cells import MASK_CODE
from ..trace import Trace
from .cells import _SOFTMAX

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


def _positions_code(pos: str) -> str:
    """The cell's lines that make ``pos``, the positions' table (max(L, S), D_MODEL)."""
    if pos == "sinusoidal":
        return (
            "n = max(L, S)  # sinusoidal positions: PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(...)\n"
            "angle = torch.arange(n, dtype=torch.float32).unsqueeze(1) / torch.pow(\n"
            "    10000.0, torch.arange(0, D_MODEL, 2, dtype=torch.float32) / D_MODEL\n"
            ")\n"
            "pos = torch.zeros(n, D_MODEL)\n"
            "pos[:, 0::2] = torch.sin(angle)\n"
            "pos[:, 1::2] = torch.cos(angle[:, : D_MODEL // 2])\n"
        )
    if pos == "learned":
        return (
            "g_pos = torch.Generator().manual_seed(SEED + 1)  # a seeded table standing in for learned positions\n"
            "pos = torch.randn(max(L, S), D_MODEL, generator=g_pos)\n"
        )
    return "pos = torch.zeros(max(L, S), D_MODEL)  # no positional encoding\n"


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
    code += _positions_code(s.pos)
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


def _mask_code(s: Settings, pattern: str | None = None) -> str:
    """The mask: ``pattern``, a sparse variant's own (its spec's expression), else the settings' mask."""
    code = "i, j = torch.arange(L).unsqueeze(1), torch.arange(S).unsqueeze(0)  # (L, 1) queries, (1, S) keys\n"
    if pattern is not None:
        code += f"mask = {pattern}  # the variant's pattern is the mask\n"
        code += "if CAUSAL:\n    mask = mask & (j <= i)\n"
    else:
        code += f"mask = {MASK_CODE[s.mask]}  # True = may attend\n"
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
