"""What every family shares: the records (``Model``, ``Encoding``, ``Run``, ``HeadWeights``, ``HeadTrace``), the
error a model that cannot be used raises, and the layer/head check.

Shapes: L tokens, H query heads, KV key/value heads (H under multi-head attention, fewer under grouped-query
attention: query head h reads key/value head h // (H / KV)), d the head size, d_model the residual stream's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from ..errors import AttentionConfigError
from ..positions import PositionScheme
from ..steps import Attended, AttendedView
from ..trace import Weights

FAMILY_NAMES = ("bert", "gpt2", "llama")
SUPPORTED = "BERT-style encoders (BERT, RoBERTa, ELECTRA, MiniLM), GPT-2, Llama-style decoders (Llama, Qwen2, Mistral)"


SPEC_SHOWN = 80  # characters of a model's name a message echoes: its start and its end, "…" between


def shown(spec: str) -> str:
    """A model's name as a message echoes it: whole up to SPEC_SHOWN characters, else its start and its end (a
    5,000-character --model or link is not printed back whole)."""
    text = str(spec)
    if len(text) <= SPEC_SHOWN:
        return text
    tail = SPEC_SHOWN // 4
    return f"{text[: SPEC_SHOWN - tail - 1]}…{text[-tail:]}"


class ModelUnavailable(AttentionConfigError):
    """The model (or the library to run it) cannot be loaded; the message says how to fix it (naming the model
    shortened: ``shown``)."""

    def __init__(self, code: str, /, **params) -> None:
        if "spec" in params:
            params["spec"] = shown(params["spec"])
        super().__init__("model", code, **params)


@dataclass(frozen=True)
class Model:
    name: str  # what to show: an offered name, a directory or a hub name
    family: str  # "bert" | "gpt2" | "llama"
    path: str | None  # the local directory (None for a hub name)
    tokenizer: Any  # a transformers tokenizer
    hf: Any  # the transformers model, eval mode, gradients off, never written to
    layers: int
    heads: int
    kv_heads: int
    d_model: int
    d_head: int
    causal: bool
    max_positions: int
    vocab: int

    model = property(lambda self: self.hf, doc="the transformers model (the name the encoder pages use)")

    @property
    def n_params(self) -> int:
        return sum(p.numel() for p in self.hf.parameters())


def dims(layers: int, heads: int, d_model: int, max_positions: int, vocab: int, **other: int) -> dict:
    """A family's ``shape``: the fields of ``Model`` a config gives; ``kv_heads`` (H unless grouped-query
    attention) and ``d_head`` (d_model / H unless the model says otherwise) may be given in ``other``."""
    return {
        "layers": layers,
        "heads": heads,
        "kv_heads": other.get("kv_heads", heads),
        "d_model": d_model,
        "d_head": other.get("d_head", d_model // heads),
        "max_positions": max_positions,
        "vocab": vocab,
    }


@dataclass(frozen=True)
class Encoding:
    pieces: tuple[str, ...]  # what to show for each token (byte pieces merged into characters); [PAD] after n_real
    ids: tuple[int, ...]
    n_real: int  # tokens before any padding
    n_total: int  # tokens the whole text would need (> max_positions: cut)
    unk: int  # unknown-token pieces in the text
    truncated: bool
    group: tuple[int, ...] = ()  # token -> the first token of the character(s) it shares its display with
    specials: int = 2  # special tokens the tokenizer added ([CLS] and [SEP]; a decoder's BOS)

    @property
    def cut(self) -> int:
        """How many tokens the model's context cut off."""
        return self.n_total - self.n_real

    @property
    def unk_share(self) -> float:
        return self.unk / max(self.n_real - self.specials, 1)


@dataclass(frozen=True)
class Run:
    """One forward pass (batch of one). For decoders the residual stream decomposes exactly:
    ``resid[l + 1] == (resid[l] + attn_out[l]) + mlp_out[l]``; a post-norm encoder (BERT) has no such sum
    (``attn_out`` and ``mlp_out`` are None there)."""

    encoding: Encoding
    hidden: torch.Tensor  # (layers + 1, L, d_model) the residual stream before each block, and after the last
    attentions: torch.Tensor  # (layers, H, L, L) the model's own attention probabilities
    attn_in: torch.Tensor  # (layers, L, d_model) what each attention sees (BERT: hidden[l]; GPT-2: ln_1; Llama: norm)
    context: torch.Tensor  # (layers, L, H, d) each head's context: the output projection's input, split by head
    attn_out: torch.Tensor | None = None  # (layers, L, d_model) what attention adds to the stream (decoders)
    mlp_out: torch.Tensor | None = None  # (layers, L, d_model) what the MLP adds (decoders)
    logits: torch.Tensor | None = None  # (L, vocab) next-token logits (decoders)
    causal: bool = False

    resid = property(lambda self: self.hidden, doc="(layers + 1, L, d_model), before any final norm")


@dataclass(frozen=True)
class HeadWeights(Weights):
    """One head's weights (``Weights`` with H = 1) and how the model scores with them."""

    kv_head: int = 0  # the key/value head this query head reads (grouped-query attention)
    score: str = "scaled_dot"  # "dot" when the model does not scale (GPT-2 with scale_attn_weights off)
    temperature: float = 1.0  # the scores are divided by it after 1/sqrt(d) (GPT-2's inverse layer scaling)
    inv_freq: torch.Tensor | None = None  # (d/2,) rotary frequencies (Llama-style), None without rotary positions
    rope_scaling: float = 1.0  # the factor the model multiplies cos and sin by

    @classmethod
    def of(cls, q, k, v, **how) -> HeadWeights:
        """From the (W, b) pairs of the query, key and value projections; one head has no output projection and no
        additive score of its own. ``how``: the fields below (kv_head, score, temperature, rotary)."""
        (W_q, b_q), (W_k, b_k), (W_v, b_v) = q, k, v
        return cls(W_q, W_k, W_v, b_q, b_k, b_v, None, None, None, **how)

    def angles(self, L: int) -> torch.Tensor | None:
        """(L, d/2) the rotary angle of each position and frequency (None without rotary positions)."""
        if self.inv_freq is None:
            return None
        return torch.arange(L).float()[:, None] * self.inv_freq.float()[None, :]

    def rotary(self) -> PositionScheme | None:
        """The model's own rotation of Q and K (the two halves of a head paired, as transformers rotates)."""
        if self.inv_freq is None:
            return None
        return PositionScheme("rope", "queries_keys", "Su et al. 2021, as this model applies it", rotate=self._rotate)

    def _rotate(self, x: torch.Tensor) -> torch.Tensor:
        freqs = self.angles(x.shape[-2])  # (L, d/2)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos() * self.rope_scaling, emb.sin() * self.rope_scaling
        half = x.shape[-1] // 2
        rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * cos.to(x.dtype) + rotated * sin.to(x.dtype)


@dataclass(frozen=True)
class HeadTrace(AttendedView):
    """One head, every step kept by name (the fields of ``Trace`` for one head, H = 1)."""

    tokens: tuple[str, ...]
    layer: int
    head: int
    x: torch.Tensor  # (L, d_model) what the attention sees
    weights: Weights  # W_q, W_k, W_v (1, d, d_model), b_q, b_k, b_v (1, d)
    attended: Attended  # steps.attend's result: Q, K, V (1, L, d), scores, scaled (1, L, L), mask, softmax
    context: torch.Tensor  # (1, L, d) attn @ V
    model_attn: torch.Tensor | None  # (L, L) the model's output_attentions for this head
    max_diff: float | None  # max |attn - model_attn|
    extra: dict = field(default_factory=dict)

    attn = property(lambda self: self.attended.softmax.weights, doc="(1, L, L)")

    @property
    def empty_rows(self) -> torch.Tensor:
        return self.softmax.empty


def check_layer_head(m: Model, layer: int, head: int | None = None) -> None:
    if not 0 <= layer < m.layers:
        raise AttentionConfigError("layer", "no_layer", layer=layer, layers=m.layers, last=m.layers - 1)
    if head is not None and not 0 <= head < m.heads:
        raise AttentionConfigError("head", "no_head", head=head, heads=m.heads, last=m.heads - 1)


def at(path: str | None):
    """A family's accessor: the submodule at the dotted ``path`` of its argument (``at("attn.c_proj")(block)`` is
    ``block.attn.c_proj``), or None for a part the family does not have (``at(None)``)."""
    names = path.split(".") if path else []

    def get(obj):
        if not names:
            return None
        for name in names:
            obj = getattr(obj, name)
        return obj

    get.__doc__ = f".{path}" if path else "None: this family has no such part"
    return get


def rows(lin, sl: slice) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The output rows ``sl`` of an ``nn.Linear`` as one head's (W (1, d, d_in), b (1, d) or None), float32 copies."""
    weight = lin.weight.detach()[sl].float().clone().unsqueeze(0)
    bias = None if lin.bias is None else lin.bias.detach()[sl].float().clone().unsqueeze(0)
    return weight, bias


def lm_head(hf) -> tuple[torch.Tensor, torch.Tensor | None]:
    """A decoder's unembedding ``lm_head``: (W_U (vocab, d_model), its bias or None), as float32 copies' views."""
    head = hf.lm_head
    return head.weight.detach().float(), None if head.bias is None else head.bias.detach().float()
