"""Run a trained model (every family of ``attn_core.models``) with interventions on its heads, without editing
the model's code.

transformers v5 has no ``head_mask``. Each layer's ``BertSelfAttention`` returns ``(context, weights)``:
context (B, L, H·d) is the heads' outputs side by side, before the output projection
``attention.output.dense``; weights (B, H, L, L) the probabilities. A forward hook on that module
(registered once per model, first in line, and idle unless a ``Plan`` is active in this thread: the
same pattern transformers uses for ``output_attentions``) rewrites a head's slice of the context:

    zero     the slice is 0                                   (Michel et al., 2019)
    uniform  weights 1/n over the keys it may see, context = weights · V   (Kovaleva et al., 2019)
    mean     the slice is its mean over a corpus (``Plan.mean``: (layers, H·d))
    patch    the slice (and the weights) are copied from another run (``Plan.source``)

and ``Plan.reweight(layer, weights, keys)`` may replace every head's weights (context = weights · V).
Masking a token as a key is the model's own ``attention_mask`` with that token's entry 0.

    run(pre, batch, plan) -> Output      last hidden state, pooled embedding, per-layer weights
    pooled(hidden, keep) -> (B, d_model) the sentence embedding: the mean over kept tokens
                                          (sentence-transformers' pooling for this model)

A decoder (GPT-2, Llama-style) returns its attention's output already projected: its hook takes each head's
context from the output projection's input (a pre-hook, ``Plan.seen``) and, when the plan changes a head,
projects the new context with the model's own output projection. Its ``Output.embedding`` is the vector that
predicts the next token: the final norm of the last real token's residual stream (``next_logits`` unembeds it).
"""

from __future__ import annotations

import contextvars
import threading
from collections import namedtuple
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from attn_core import models as pt
from attn_core.tensors import CAPTURED

NONE, ZERO, UNIFORM, MEAN, PATCH = 0, 1, 2, 3, 4
MODES = {"zero": ZERO, "uniform": UNIFORM, "mean": MEAN}

# what a recording plan keeps per layer, named as the tensor table names them: the heads' outputs side by side
# (concat, (B, L, H·d), before the output projection) and the weights ((B, H, L, L)); a tuple, so (ctx, w) unpacks
Captured = namedtuple("Captured", CAPTURED)

_ACTIVE: contextvars.ContextVar[Plan | None] = contextvars.ContextVar("attn_explorer_plan", default=None)
_INSTALL = threading.Lock()
_HOOKED_ATTR = "_attn_explorer_hooks"


@dataclass
class Plan:
    """What to do to which head in which batch row. ``modes`` (B, layers, H) holds NONE/ZERO/UNIFORM/
    MEAN/PATCH; ``keys`` (B, L) the keys each row may attend to (for uniform weights)."""

    modes: torch.Tensor
    keys: torch.Tensor
    mean: torch.Tensor | None = None  # (layers, H·d)
    source: dict[int, tuple[torch.Tensor, torch.Tensor]] | None = None  # layer -> (context (L, H·d), weights)
    reweight: Callable | None = None  # (layer, weights (B, H, L, L), keys (B, L)) -> weights
    capture: dict[int, Captured] = field(default_factory=dict)
    record: bool = False  # keep every layer's context and weights in ``capture``
    seen: dict[int, torch.Tensor] = field(default_factory=dict, repr=False)  # decoders: the model's own context


@dataclass(frozen=True)
class Batch:
    ids: torch.Tensor  # (B, L) long
    real: torch.Tensor  # (B, L) bool: not padding
    keep: torch.Tensor  # (B, L) bool: real and not masked (the attention mask and the pooling)


def batch_of(pre, sentences: list[str]) -> tuple[Batch, list[pt.Encoding]]:
    """The sentences as one padded batch (each encoded as the Real model page encodes it), and their encodings."""
    encs = [pt.encode(pre, s) for s in sentences]
    L = max(e.n_real for e in encs)
    pad = pre.tokenizer.pad_token_id
    pad = pad if pad is not None else (pre.tokenizer.eos_token_id or 0)  # a decoder's right padding is never seen
    ids = torch.tensor([list(e.ids) + [pad] * (L - e.n_real) for e in encs])
    real = torch.arange(L)[None] < torch.tensor([e.n_real for e in encs])[:, None]
    return Batch(ids, real, real.clone()), encs


@dataclass(frozen=True)
class Output:
    hidden: torch.Tensor  # (B, L, d_model) the last layer's output
    embedding: torch.Tensor  # (B, d_model) pooled
    attentions: torch.Tensor | None  # (layers, B, H, L, L)
    hidden_states: tuple[torch.Tensor, ...] | None  # every layer's input (and the last output)


def _heads(ctx: torch.Tensor, H: int) -> torch.Tensor:
    B, L, width = ctx.shape
    return ctx.view(B, L, H, width // H)


def _values(module, hidden: torch.Tensor, H: int) -> torch.Tensor:
    B, L, _ = hidden.shape
    return module.value(hidden).view(B, L, H, -1).transpose(1, 2)  # (B, H, L, d)


def _apply(plan: Plan, layer: int, module, hidden: torch.Tensor, ctx: torch.Tensor, w: torch.Tensor, fam=None):
    H = w.shape[1]
    values = _values if fam is None else fam.values
    modes = plan.modes[:, layer].to(ctx.device)  # (B, H)
    if plan.reweight is None and not bool(modes.any()):
        return None
    ctx, w = _heads(ctx, H).clone(), w.clone()  # (B, L, H, d)
    if plan.reweight is not None or bool((modes == UNIFORM).any()):
        keys = plan.keys.to(w.dtype)[:, None, None, :]  # (B, 1, 1, L)
        new_w = plan.reweight(layer, w, plan.keys) if plan.reweight is not None else w
        if fam is not None and fam.CAUSAL:  # a decoder's query sees no later key
            keys = keys * torch.ones(w.shape[-2:], dtype=w.dtype).tril()
        uniform = keys / keys.sum(-1, keepdim=True).clamp_min(1)
        new_w = torch.where((modes == UNIFORM)[:, :, None, None], uniform.expand_as(w), new_w)
        changed = (modes == UNIFORM) | (plan.reweight is not None)
        recomputed = (new_w @ values(module, hidden, H)).transpose(1, 2)  # (B, L, H, d)
        ctx = torch.where(changed[:, None, :, None], recomputed, ctx)
        w = torch.where(changed[:, :, None, None], new_w, w)
    m = modes[:, None, :, None]  # (B, 1, H, 1)
    ctx = torch.where(m == ZERO, torch.zeros_like(ctx), ctx)
    if plan.mean is not None:
        ctx = torch.where(m == MEAN, _heads(plan.mean[layer][None, None], H).to(ctx.dtype), ctx)
    if plan.source is not None and layer in plan.source:
        src_ctx, src_w = plan.source[layer]
        ctx = torch.where(m == PATCH, _heads(src_ctx[None], H), ctx)
        w = torch.where((modes == PATCH)[:, :, None, None], src_w[None], w)
    B, L = ctx.shape[:2]
    return ctx.reshape(B, L, -1), w


def _hook(layer: int):
    def hook(module, args, kwargs, output):
        plan = _ACTIVE.get()
        if plan is None:
            return None
        hidden = args[0] if args else kwargs["hidden_states"]
        ctx, w = output[0], output[1]
        changed = _apply(plan, layer, module, hidden, ctx, w)
        if changed is not None:
            ctx, w = changed
        if plan.record:
            plan.capture[layer] = Captured(ctx.detach(), w.detach())
        return None if changed is None else (ctx, w, *output[2:])

    return hook


def _seen(layer: int):
    def hook(module, args, kwargs):
        plan = _ACTIVE.get()
        if plan is not None:
            plan.seen[layer] = args[0] if args else kwargs["input"]

    return hook


def _decoder_hook(layer: int, fam, out_linear):
    def hook(module, args, kwargs, output):
        plan = _ACTIVE.get()
        if plan is None:
            return None
        hidden = args[0] if args else kwargs["hidden_states"]
        ctx, w = plan.seen.pop(layer), output[1]
        changed = _apply(plan, layer, module, hidden, ctx, w, fam)
        if changed is not None:
            ctx, w = changed
        if plan.record:
            plan.capture[layer] = Captured(ctx.detach(), w.detach())
        return None if changed is None else (out_linear(ctx), w, *output[2:])

    return hook


def install(model, fam=None) -> None:
    """Register the hooks once per model (idle while no plan is active in the calling thread). ``fam``: the
    model's family module (``attn_core.models``); None is a BERT encoder."""
    if getattr(model, _HOOKED_ATTR, False):
        return
    with _INSTALL:
        if getattr(model, _HOOKED_ATTR, False):
            return
        if fam is None or not fam.CAUSAL:
            for i, layer in enumerate(model.encoder.layer):
                layer.attention.self.register_forward_hook(_hook(i), with_kwargs=True, prepend=True)
        else:
            for i, block in enumerate(fam.blocks(model)):
                proj = fam.out_linear(block)
                proj.register_forward_pre_hook(_seen(i), with_kwargs=True, prepend=True)
                fam.attention(block).register_forward_hook(_decoder_hook(i, fam, proj), with_kwargs=True, prepend=True)
        setattr(model, _HOOKED_ATTR, True)


def pooled(hidden: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """Mean over the kept tokens: (B, L, d) -> (B, d)."""
    k = keep.to(hidden.dtype)[..., None]
    return (hidden * k).sum(1) / k.sum(1).clamp_min(1)


def _additive(keep: torch.Tensor, dtype) -> torch.Tensor:
    """The (B, 1, 1, L) additive mask the eager attention adds to its scores."""
    return torch.where(keep, 0.0, torch.finfo(dtype).min).to(dtype)[:, None, None, :]


def _family(pre):
    from attn_core.models.locate import FAMILIES

    return FAMILIES[getattr(pre, "family", "bert")]


def summary(pre, hidden: torch.Tensor, keep: torch.Tensor, real: torch.Tensor) -> torch.Tensor:
    """(B, d_model) what the measures read: an encoder's pooled embedding; a decoder's last real token (its
    ``hidden`` is after the final norm: the vector the unembedding turns into the next token's logits)."""
    if not getattr(pre, "causal", False):
        return pooled(hidden, keep)
    return hidden[torch.arange(hidden.shape[0]), real.sum(1) - 1]


def next_logits(pre, embedding: torch.Tensor) -> torch.Tensor:
    """(B, vocab) a decoder's next-token logits from ``Output.embedding``: the model's own unembedding."""
    with torch.inference_mode():
        return pre.model.lm_head(embedding).float()


def run(pre, batch: Batch, plan: Plan | None = None, *, attentions: bool = False, states: bool = False) -> Output:
    """The whole model on ``batch`` under ``plan`` (None: the model as it is)."""
    fam = _family(pre)
    install(pre.model, fam)
    model = fam.base(pre.model) if fam.CAUSAL else pre.model
    token = _ACTIVE.set(plan)
    try:
        with torch.inference_mode():
            out = model(
                input_ids=batch.ids,
                attention_mask=batch.keep.long(),
                output_attentions=attentions,
                output_hidden_states=states,
            )
    finally:
        _ACTIVE.reset(token)
    hidden = out.last_hidden_state.float()
    att = torch.stack(out.attentions).float() if attentions else None
    emb = summary(pre, hidden, batch.keep, batch.real)
    return Output(hidden, emb, att, out.hidden_states if states else None)


def _decoder_layers(pre, fam, start: int, hidden: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    L = hidden.shape[1]
    allowed = torch.ones(L, L, dtype=torch.bool).tril()[None, None] & keep[:, None, None, :]
    mask = torch.where(allowed, 0.0, torch.finfo(hidden.dtype).min).to(hidden.dtype)  # (B, 1, L, L)
    extra = {}
    if hasattr(fam, "rotary"):  # rotary positions: the (cos, sin) every layer's attention takes
        extra["position_embeddings"] = fam.rotary(pre.model, hidden)
    for block in fam.blocks(pre.model)[start:]:
        hidden = block(hidden, attention_mask=mask, **extra)
    return fam.final_norm(pre.model)(hidden)


def run_from(pre, start: int, hidden: torch.Tensor, keep: torch.Tensor, plan: Plan) -> torch.Tensor:
    """Layers ``start``.. of the model on ``hidden`` (B, L, d_model), the model's own modules, under
    ``plan``: what an intervention in layer ``start`` changes, without recomputing the layers before it
    (a decoder's result is after its final norm, as ``run``'s ``hidden``)."""
    fam = _family(pre)
    install(pre.model, fam)
    token = _ACTIVE.set(plan)
    try:
        with torch.inference_mode():
            if fam.CAUSAL:
                hidden = _decoder_layers(pre, fam, start, hidden, keep)
            else:
                mask = None if bool(keep.all()) else _additive(keep, hidden.dtype)
                for layer in pre.model.encoder.layer[start:]:
                    hidden = layer(hidden, mask)
    finally:
        _ACTIVE.reset(token)
    return hidden.float()


def cosine(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.cosine_similarity(a.double(), b.double(), dim=-1).clamp(-1.0, 1.0)  # no 1 + 4e-16
