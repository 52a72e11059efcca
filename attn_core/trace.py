"""The teaching path: every intermediate of (multi-head, self or cross) attention, kept by name.

``run_trace(settings) -> Trace``. Pages plot the fields; the CLI prints them or exports them
as JSON. Shapes: H heads, L query length, S key length (L == S for self-attention).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from . import steps
from .config import Settings, validate
from .errors import AttentionConfigError
from .kernels import KERNELS, Explained, effective_weights, kernel_options
from .knobs import kernel_knobs
from .masks import build_mask
from .positions import SCHEMES, input_table
from .steps import AdditiveParams, Attended, AttendedView
from .tokenize import PAD, Tokens, build_vocab, tokenize


@dataclass(frozen=True)
class Weights:
    W_q: torch.Tensor  # (H, d_q, d_model)
    W_k: torch.Tensor  # (H, d_k, d_model)
    W_v: torch.Tensor  # (H, d_v, d_model)
    b_q: torch.Tensor | None  # (H, d_q)
    b_k: torch.Tensor | None  # (H, d_k)
    b_v: torch.Tensor | None  # (H, d_v)
    W_o: torch.Tensor | None  # (d_model, H * d_v), standard layout only
    b_o: torch.Tensor | None  # (d_model,)
    additive: AdditiveParams | None


def draw_weights(s: Settings) -> Weights:
    """Seeded projections. ``tutorial`` init draws torch.rand in the tutorial's order (W_q, W_k,
    W_v) right after seeding; ``standard`` is nn.Linear's uniform(±1/√fan_in)."""
    g = torch.Generator().manual_seed(s.seed)
    H, dm = s.heads, s.d_model

    def draw(*shape: int, fan_in: int) -> torch.Tensor:
        r = torch.rand(*shape, generator=g)
        return r if s.init == "tutorial" else (r * 2 - 1) / math.sqrt(fan_in)

    W_q, W_k, W_v = draw(H, s.d_q, dm, fan_in=dm), draw(H, s.d_k, dm, fan_in=dm), draw(H, s.d_v, dm, fan_in=dm)
    b_q = b_k = b_v = W_o = b_o = None
    if s.layout == "standard":
        W_o = draw(dm, H * s.d_v, fan_in=H * s.d_v)
        if s.init == "standard":
            b_q, b_k, b_v = draw(H, s.d_q, fan_in=dm), draw(H, s.d_k, fan_in=dm), draw(H, s.d_v, fan_in=dm)
            b_o = draw(dm, fan_in=H * s.d_v)
    additive = steps.draw_additive(H, s.d_q, s.d_k, seed=s.seed) if s.score == "additive" else None
    return Weights(W_q, W_k, W_v, b_q, b_k, b_v, W_o, b_o, additive)


def param_count(s: Settings) -> dict[str, int]:
    """Parameters of the layer as configured, and the overview's 4·d_model² for comparison."""
    s = s.resolved()
    H, dm = s.heads, s.d_model
    proj = H * dm * (s.d_q + s.d_k + s.d_v)
    bias = H * (s.d_q + s.d_k + s.d_v) if s.layout == "standard" and s.init == "standard" else 0
    out = dm * H * s.d_v if s.layout == "standard" else 0
    out_bias = dm if s.layout == "standard" and s.init == "standard" else 0
    additive = H * (s.d_k * s.d_q + s.d_k * s.d_k + s.d_k) if s.score == "additive" else 0
    total = proj + bias + out + out_bias + additive
    return {
        "projections": proj,
        "biases": bias + out_bias,
        "output": out,
        "additive": additive,
        "total": total,
        "formula_4d2": 4 * dm * dm,
    }


@dataclass(frozen=True)
class Trace(AttendedView):
    settings: Settings  # resolved
    tokens: Tokens  # query side (padded where the mask is 'padding')
    source_tokens: Tokens | None  # key/value side for cross-attention
    n_real: int  # key-side tokens before padding
    x_embed: torch.Tensor  # (L, d_model) token embeddings
    pos: torch.Tensor  # (max(L, S), d_model) positional encoding (zeros for 'none')
    x: torch.Tensor  # (L, d_model) query-side input = x_embed + pos
    x_source: torch.Tensor  # (S, d_model) key/value-side input (x itself for self-attention)
    weights: Weights
    attended: Attended  # steps.attend's result: Q, K, V, scores, scale, scaled, mask, softmax (read below)
    attn: torch.Tensor  # (H, L, S) the weights used for the sum (after dropout, if any)
    context: torch.Tensor  # (H, L, d_v) attn @ V
    concat: torch.Tensor  # (L, H * d_v)
    projected: torch.Tensor | None  # (L, d_model) concat @ W_oᵀ + b_o, standard layout
    output: torch.Tensor  # the layer's output, after the optional residual + LayerNorm
    variant: Explained | None = None  # the kernel's own intermediates (None for full attention)

    @property
    def is_cross(self) -> bool:
        return self.source_tokens is not None

    @property
    def key_tokens(self) -> Tokens:
        return self.source_tokens or self.tokens

    @property
    def empty_rows(self) -> torch.Tensor:
        return self.softmax.empty  # (H, L)

    def peak_weight(self, head: int, query: int, *, scaled: bool = True) -> float:
        """The largest weight of one query row, with the score scaling or without it (the raw
        scores through the same mask and softmax): how much scaling tames the softmax."""
        row = self.scaled_scores[head, query] if scaled else self.scores[head, query]
        return float(steps.staged_softmax(row, self.mask[query]).weights.max())


def kernel_settings(s: Settings) -> dict:
    """The settings a kernel may take as options, by their option names (every kernel option of
    ``attn_core.knobs``: a field of ``Settings``, else its ``extra``, else the option's default)."""
    return {name: s.option(name) for name in kernel_knobs()}


def _padded(tokens: Tokens, length: int) -> Tokens:
    extra = max(0, length - len(tokens.words))
    return Tokens(tokens.words + (PAD,) * extra, tokens.vocab, tokens.ids + (-1,) * extra)


def trace_bytes(s: Settings, L: int, S: int) -> int:
    """An upper estimate of the memory one trace takes while it is computed and kept (fp32):
    the weights, Q/K/V, about ten (H, L, S) matrices (scores, scaled, mask stages, softmax stages,
    weights), the context and, for the additive score, its (H, L, S, d_k) tanh term and its copy."""
    r = s.resolved()
    H, dm = r.heads, r.d_model
    weights = (
        H * dm * (r.d_q + r.d_k + r.d_v)
        + dm * H * r.d_v
        + (3 * H * r.d_k * max(r.d_q, r.d_k) if r.score == "additive" else 0)
    )
    acts = H * (L * r.d_q + S * (r.d_k + r.d_v) + L * r.d_v) + 3 * max(L, S) * dm + 2 * L * H * r.d_v
    square = 10 * H * L * S
    additive = 2 * H * L * S * r.d_k if r.score == "additive" else 0
    variant = 0 if r.kernel == "full" else 4 * H * (L + S) * r.features + 2 * r.proj_k * S + 2 * H * L * S
    return 4 * (weights + acts + square + additive + variant)


def _tokenized(s: Settings) -> tuple[dict, Tokens, Tokens | None]:
    """The shared vocabulary, the query-side tokens and the key/value-side ones (cross-attention)."""
    q_words = tokenize(s.sentence, field="sentence", max_tokens=s.max_tokens).words
    kv_words = tokenize(s.source, field="source", max_tokens=s.max_tokens).words if s.source is not None else None
    vocab = build_vocab(q_words, *([kv_words] if kv_words else []))
    tokens = tokenize(s.sentence, vocab=vocab, max_tokens=s.max_tokens)
    source = tokenize(s.source, vocab=vocab, field="source", max_tokens=s.max_tokens) if s.source is not None else None
    return vocab, tokens, source


def _checked_kernel(s: Settings, tokens: Tokens, source: Tokens | None):
    """The kernel and the options it takes, or an AttentionConfigError for what it cannot do here."""
    if s.kernel not in KERNELS:
        raise AttentionConfigError("kernel", "unknown_choice", value=s.kernel, options=", ".join(KERNELS))
    kern = KERNELS[s.kernel]
    if kern.dot_product and s.score == "additive":
        raise AttentionConfigError("kernel", "dot_kernel", kernel=s.kernel)
    n_keys = len((source or tokens).words)
    opts = kernel_options(kern, **kernel_settings(s))
    kern.check(len(tokens.words), n_keys, causal=s.causal, cross=source is not None, **opts)
    return kern, opts


def _check_memory(s: Settings, tokens: Tokens, n_real: int, cross: bool) -> None:
    padding = s.mask == "padding"
    L_est = max(len(tokens.words), s.pad_to if padding and not cross else 0)
    S_est = max(n_real, s.pad_to if padding else 0)
    need = trace_bytes(s, L_est, S_est)
    if need > s.max_bytes:
        raise AttentionConfigError(
            "heads",
            "too_much_memory_additive" if s.score == "additive" else "too_much_memory",
            need=f"{need / 2**20:,.0f}",
            L=L_est,
            S=S_est,
            heads=s.heads,
            limit=f"{s.max_bytes / 2**20:,.0f}",
        )


def _mask(s: Settings, kern, opts: dict, L: int, S: int, n_real: int) -> torch.Tensor:
    """(L, S) bool: a sparse kernel's pattern, else the mask the settings name."""
    if kern.pattern is not None:  # a sparse kernel: its pattern is the mask
        return kern.pattern(L, S, s.causal, **opts)
    return build_mask(
        s.mask,
        L,
        S,
        window=s.window,
        dilation=s.dilation,
        global_tokens=s.global_tokens,
        block_size=s.block,
        n_real=n_real,
        also_causal=s.causal or kern.always_causal,
    )


def _variant(s: Settings, kern, opts: dict, a: Attended) -> tuple[Explained | None, torch.Tensor]:
    """The variant's own steps (if it explains them) and the weights shown: the softmax's, or the
    matrix a variant without a softmax amounts to."""
    variant = None
    if kern.explain is not None:  # the variant's own steps, on its efficient path
        variant = kern.explain(a.Q, a.K, a.V, causal=s.causal or kern.always_causal, scale=a.scale, **opts)
    if kern.softmax:
        return variant, a.softmax.weights
    if variant is not None:  # what the kernel amounts to, shown in place of the softmax
        return variant, variant.weights
    Q, K = a.Q.unsqueeze(0), a.K.unsqueeze(0)
    return variant, effective_weights(s.kernel, Q, K, causal=s.causal, scale=a.scale, **opts)[0]


def _embedded(s: Settings, n_vocab: int, tokens, source, L: int, S: int):
    """(pos, x_embed, x, x_source): the token embeddings plus the positions' table, for the queries'
    tokens and (cross-attention) the source's; PAD (id -1) gets its own zero row after the vocabulary."""
    pad_id = n_vocab
    ids = lambda t: [pad_id if i < 0 else i for i in t.ids]
    pos = input_table(s.pos, max(L, S), s.d_model, seed=s.seed)
    x_embed = steps.embed(ids(tokens), n_vocab + 1, s.d_model, seed=s.seed, pad_id=pad_id)
    x = x_embed + pos[:L]
    if source is None:
        return pos, x_embed, x, x
    x_source = steps.embed(ids(source), n_vocab + 1, s.d_model, seed=s.seed, pad_id=pad_id) + pos[:S]
    return pos, x_embed, x, x_source


def _combined(s: Settings, w, concat, x):
    """(projected or None, output): the heads' concatenation through W_o (when there is one), then
    the residual and layer norm when asked."""
    projected = None
    out = concat
    if w.W_o is not None:
        projected = concat @ w.W_o.T + (w.b_o if w.b_o is not None else 0.0)
        out = projected
    if s.residual_norm:
        out = steps.layer_norm(x + out)
    return projected, out


def _checked(settings: Settings):
    """Every check made before computing: (settings, vocab, tokens, source or None, kernel, options, real keys)."""
    s = validate(settings)
    vocab, tokens, source = _tokenized(s)
    kern, opts = _checked_kernel(s, tokens, source)
    n_real = len((source or tokens).words)
    _check_memory(s, tokens, n_real, source is not None)
    return s, vocab, tokens, source, kern, opts, n_real


def check_settings(settings: Settings) -> Settings:
    """What ``run_trace`` validates or raises, without computing (for pages that do not draw the trace)."""
    return _checked(settings)[0]


def run_trace(settings: Settings) -> Trace:
    """Validate, tokenize, embed, project, score, mask, softmax, sum, combine heads."""
    s, vocab, tokens, source, kern, opts, n_real = _checked(settings)
    key_side = source or tokens
    if s.mask == "padding" and s.pad_to > n_real:
        key_side = _padded(key_side, s.pad_to)
        if source is None:
            tokens = key_side
        else:
            source = key_side

    L, S = len(tokens.ids), len(key_side.ids)
    pos, x_embed, x, x_source = _embedded(s, len(vocab), tokens, source, L, S)
    w = draw_weights(s)
    mask = _mask(s, kern, opts, L, S, n_real)
    scheme = SCHEMES[s.pos]  # added to the embeddings above; attend applies a rotation or a bias
    a = steps.attend(x, x_source, w, mask, score=s.score, temperature=s.temperature, positions=scheme)
    variant, weights = _variant(s, kern, opts, a)
    attn = steps.dropout(weights, s.dropout, seed=s.seed)
    # the kernel's own output (dropout acts on weights, so then the weights are summed)
    context = variant.output if variant is not None and s.dropout <= 0 else attn @ a.V  # (H, L, d_v)

    concat = context.transpose(0, 1).reshape(L, -1)  # (L, H * d_v)
    projected, out = _combined(s, w, concat, x)
    return Trace(
        settings=s,
        tokens=tokens,
        source_tokens=source,
        n_real=n_real,
        x_embed=x_embed,
        pos=pos,
        x=x,
        x_source=x_source,
        weights=w,
        attended=a,
        attn=attn,
        context=context,
        concat=concat,
        projected=projected,
        output=out,
        variant=variant,
    )
