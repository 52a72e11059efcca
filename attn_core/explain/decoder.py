"""A decoder (GPT-2, Llama-style: every causal family of ``attn_core.models``) explained on its next-token
prediction, as ``encoder`` explains the encoder's sentence embedding. What is explained:

    f(x) = log p(y* | x) at the last position, y* = the model's top next token for the whole prompt x

A piece is removed by running the pieces kept, alone: at their own positions ("attention": the same numbers as
masking it out of every attention row, since a causal query reads only earlier keys) or moved up ("delete"), the
prediction read at the last piece kept. A decoder has no [MASK] token. When nothing is left (a one-piece prompt
without a beginning-of-sequence token), the model predicts from its start token alone (BOS, else EOS: the
document separator GPT-2 was trained with).

Integrated gradients run on the input embeddings (the model adds its own positions), from the baseline that keeps
the special tokens and puts an uninformative token's embedding (PAD, else EOS, else BOS) in every other piece's
place, as the encoder's [CLS] [PAD] … [SEP]. (Not the zero vector: a model with RMSNorm is scale-invariant, so
the path from 0 jumps within α < 1e-3 and no quadrature of it is complete.)
"""

from __future__ import annotations

import contextvars
import threading
from dataclasses import dataclass

import numpy as np
import torch

from .. import models

_OUT: contextvars.ContextVar[dict | None] = contextvars.ContextVar("attn_explorer_explain_block", default=None)
_INSTALL = threading.Lock()
_HOOKED_ATTR = "_attn_explorer_explain_block"


@dataclass(frozen=True)
class NextToken:
    token: int  # y*, the model's top next token for the whole prompt
    text: str
    logp: float  # f(x) = log p(y* | x)


@dataclass(frozen=True)
class Pass:
    """The fields ``encoder.Pass`` has, for one prompt (batch of one)."""

    hidden: list[torch.Tensor]  # layers + 1 tensors (1, n, d_model): the residual stream entering each block
    attentions: list[torch.Tensor]  # layers tensors (1, H, n, n), causal
    values: list[torch.Tensor]  # layers tensors (1, H, n, d_head): each query head's values (GQA: its shared head)
    target: NextToken


def _values(pre, x: torch.Tensor, layer: int) -> torch.Tensor:
    """(1, H, n, d_head) from what layer ``layer``'s attention sees (n, d_model)."""
    out = []
    for head in range(pre.heads):
        w = models.head_weights(pre, layer, head)
        v = x @ w.W_v[0].T
        out.append(v if w.b_v is None else v + w.b_v[0])
    return torch.stack(out)[None]


def full(pre, ids: tuple[int, ...]) -> Pass:
    """The model once on the prompt: every layer's input, attention and values, and y*."""
    run = models.forward(pre, list(ids))
    logp = run.logits[-1].double().log_softmax(-1)
    token = int(logp.argmax())
    target = NextToken(token, models.display_pieces(pre.tokenizer, [token])[0][0], float(logp[token]))
    n_layers = pre.layers
    return Pass(
        [run.resid[layer][None] for layer in range(n_layers + 1)],
        [run.attentions[layer][None] for layer in range(n_layers)],
        [_values(pre, run.attn_in[layer], layer) for layer in range(n_layers)],
        target,
    )


def _first_of(*tokens) -> int:
    return next((int(t) for t in tokens if t is not None), 0)


def start_token(tok) -> int:
    """What a prompt with nothing left starts from."""
    return _first_of(tok.bos_token_id, tok.eos_token_id, tok.pad_token_id)


def baseline_token(tok) -> int:
    """What integrated gradients' baseline puts in each ordinary piece's place."""
    return _first_of(tok.pad_token_id, tok.eos_token_id, tok.bos_token_id)


def _logp(pre, ids: torch.Tensor, positions: torch.Tensor, token: int) -> torch.Tensor:
    mask = torch.ones_like(ids)
    out = pre.hf(input_ids=ids, position_ids=positions, attention_mask=mask, use_cache=False, logits_to_keep=1)
    return out.logits[:, -1].double().log_softmax(-1)[:, token]


def logp_kept(pre, rows: list[tuple[list[int], list[int]]], token: int, chunk: int = 256) -> np.ndarray:
    """log p(token | the pieces kept) for rows of (ids, positions) of the pieces kept, rows of one length run
    together (no padding); an empty row is the start token alone at position 0."""
    rows = [(ids, pos) if ids else ([start_token(pre.tokenizer)], [0]) for ids, pos in rows]
    out = np.empty(len(rows))
    by_length: dict[int, list[int]] = {}
    for b, (ids, _) in enumerate(rows):
        by_length.setdefault(len(ids), []).append(b)
    with torch.inference_mode():
        for members in by_length.values():
            for s in range(0, len(members), chunk):
                part = members[s : s + chunk]
                ids = torch.tensor([rows[b][0] for b in part])
                pos = torch.tensor([rows[b][1] for b in part])
                out[part] = _logp(pre, ids, pos, token).numpy()
    return out


def logp_embeds(pre, embeds: torch.Tensor, token: int) -> torch.Tensor:
    """(B,) log p(token) at the last position for input embeddings (B, n, d_model) at positions 0..n-1."""
    B, n = embeds.shape[:2]
    mask = torch.ones(B, n, dtype=torch.long)
    out = pre.hf(inputs_embeds=embeds, attention_mask=mask, use_cache=False, logits_to_keep=1)
    return out.logits[:, -1].float().log_softmax(-1)[:, token]


def integrated_gradients(pre, ids: tuple[int, ...], target: NextToken, nodes, weights) -> dict:
    """Attributions per piece of f on the input embeddings (``nodes``, ``weights``: the quadrature on [0, 1])."""
    emb = pre.hf.get_input_embeddings()
    specials = set(pre.tokenizer.all_special_ids)
    base_ids = [i if i in specials else baseline_token(pre.tokenizer) for i in ids]
    with torch.no_grad():
        x, b = emb(torch.tensor([ids, base_ids])).float()
    a = torch.tensor(nodes, dtype=torch.float32)[:, None, None]
    path = (b + a * (x - b)).detach().requires_grad_(True)
    with torch.enable_grad():
        (grad,) = torch.autograd.grad(logp_embeds(pre, path, target.token).sum(), path)
    avg = (grad.double() * torch.tensor(weights)[:, None, None]).sum(0)
    attr = (avg * (x - b).double()).sum(-1).numpy()
    with torch.inference_mode():
        ends = logp_embeds(pre, torch.stack([x, b]), target.token).double()
    return {"attr": attr, "delta": float(ends[0] - ends[1])}


def _capture(layer: int):
    def hook(module, args, kwargs, output):
        cap = _OUT.get()
        if cap is not None and cap.get("layer") == layer:
            cap["out"] = (output[0] if isinstance(output, tuple) else output).detach()

    return hook


def _install(pre) -> None:
    """A forward hook on every block, once per model, idle unless a capture is active in this thread."""
    hf = pre.hf
    if getattr(hf, _HOOKED_ATTR, False):
        return
    from ..models.locate import FAMILIES

    with _INSTALL:
        if getattr(hf, _HOOKED_ATTR, False):
            return
        for i, block in enumerate(FAMILIES[pre.family].blocks(hf)):
            block.register_forward_hook(_capture(i), with_kwargs=True)
        setattr(hf, _HOOKED_ATTR, True)


def attend(pre, layer: int, x: torch.Tensor, keys: torch.Tensor, zero_value: torch.Tensor | None = None):
    """Block ``layer`` of the decoder on x (B, n, d_model), the model's own modules; ``zero_value`` (B, n) bool
    zeroes those pieces' values in every head (as setting their column of every head's weights to 0: the
    context is the weights times the values). Returns (the residual stream after the block, None, None), the
    shape of ``encoder.attend``'s result."""
    from ..interpret import hooks

    _install(pre)
    B = x.shape[0]
    keep = None if zero_value is None else (~zero_value).to(x.dtype)

    def zeroed(at: int, w: torch.Tensor, _keys) -> torch.Tensor:
        return w * keep[:, None, None, :] if at == layer and keep is not None else w

    plan = hooks.Plan(torch.zeros(B, pre.layers, pre.heads, dtype=torch.int8), keys, reweight=zeroed)
    cap = {"layer": layer}
    token = _OUT.set(cap)
    try:
        hooks.run_from(pre, layer, x, keys, plan)  # the later layers run too: only this block's output is kept
    finally:
        _OUT.reset(token)
    return cap["out"].float(), None, None
