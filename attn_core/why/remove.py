"""A source of the residual stream removed where it is made, and the model run again.

The model is shared by every session and never edited: the hooks are registered once per model and do nothing
unless a removal is active in the calling thread (a context variable). Removing

    token, position, segment   the embedding module's output is zeros
    L<l> heads                 layer l's output projection reads zeros (what remains is its bias)
    L<l> MLP                   layer l's MLP (BERT: its last linear layer) outputs zeros

and the model's own forward does the rest: every later layer, norm and softmax recomputed.
"""

from __future__ import annotations

import contextvars
import re
import threading

import torch

from .. import models as M
from ..models.run import family, once

_REMOVE: contextvars.ContextVar[str | None] = contextvars.ContextVar("attn_explorer_remove", default=None)
_LOCK = threading.Lock()
_HOOKED = "_attn_explorer_remove_hooks"
LAYER_SOURCE = re.compile(r"L(\d+) (heads|MLP)")


def _zero_output(name: str):
    def hook(module, args, output):
        if _REMOVE.get() == name:
            return torch.zeros_like(output)
        return None

    return hook


def _zero_input(name: str):
    def hook(module, args):
        if _REMOVE.get() == name:
            return (torch.zeros_like(args[0]), *args[1:])
        return None

    return hook


def install(m: M.Model) -> None:
    hf, fam = m.hf, family(m)

    def register() -> None:
        for name, module in fam.embedding_modules(hf).items():
            module.register_forward_hook(_zero_output(name))
        for i, block in enumerate(fam.blocks(hf)):
            fam.out_linear(block).register_forward_pre_hook(_zero_input(f"L{i} heads"))
            fam.mlp_output(block).register_forward_hook(_zero_output(f"L{i} MLP"))

    once(hf, _HOOKED, _LOCK, register)


def removable(m: M.Model, source: str) -> bool:
    found = LAYER_SOURCE.fullmatch(source)
    if found:
        return int(found.group(1)) < m.layers
    return source in family(m).embedding_modules(m.hf)


def recomputed_weight(m: M.Model, enc: M.Encoding, source: str, layer: int, head: int, query: int, key: int) -> float:
    """The model's attention weight (query → key, in ``layer``/``head``) with ``source`` removed at its origin."""
    if not removable(m, source):
        raise ValueError(f"{source!r} cannot be removed from {m.name}")
    install(m)
    ids = torch.tensor([enc.ids])
    mask = torch.zeros_like(ids)
    mask[:, : enc.n_real] = 1
    token = _REMOVE.set(source)
    try:
        with torch.inference_mode():
            out = m.hf(input_ids=ids, attention_mask=mask, output_attentions=True)
    finally:
        _REMOVE.reset(token)
    return float(out.attentions[layer][0, head, query, key])
