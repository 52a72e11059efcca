"""What a model family is: one module (``bert``, ``gpt2``, ``llama``) that alone knows its architecture's layout,
written down as a ``Protocol``, and the registry the loader reads (``FAMILIES``: name -> module).

Every caller (loader, forward pass, head weights, interpret, why, explain, the Real model page's code, the Next
token notebook) reaches a family's layout through these members, never by comparing its name. A new family is
one more module satisfying ``Decoder`` (or ``Encoder``) and one ``register`` call: see docs/recipes.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import torch

from . import bert, gpt2, llama
from .base import HeadWeights, Model

Accessor = Callable[[Any], Any]  # a block (or the whole model) -> one of its modules, or None where it has none


@runtime_checkable
class Family(Protocol):
    """What every family provides (``hf``: the transformers model; ``block``: one of ``blocks(hf)``)."""

    CAUSAL: bool  # a decoder (keys after the query masked) or an encoder
    MODEL_TYPES: tuple[str, ...]  # the config ``model_type``s it claims (the fallback family claims none)
    ATTN_NORM: str | None  # what its attention reads, named for a page ("RMSNorm (input_layernorm)"); None: the stream

    attention: Accessor  # block -> its attention module (its forward hook sees the weights)
    out_linear: Accessor  # block -> the linear layer whose input is the heads' context, concatenated
    mlp: Accessor  # block -> the module whose output the MLP adds to the stream (None: post-norm)
    final_norm: Accessor  # hf -> the norm before the unembedding (None: an encoder)
    unembed: Accessor  # hf -> (W_U, b_U or None), or None for an encoder
    attn_norm: Accessor  # block -> the norm attention reads through (None: post-norm)
    mlp_output: Accessor  # block -> the MLP's last module

    def auto(self, transformers) -> Any:
        """The transformers Auto class that loads it."""

    def blocks(self, hf) -> list: ...

    def embedding_parts(self, hf, ids: torch.Tensor) -> dict[str, torch.Tensor]:
        """The stream entering block 0 by source ("token", "position", ...); they add up to it."""

    def embedding_modules(self, hf) -> dict: ...

    def check(self, hf, spec: str) -> None:
        """Raise ``ModelUnavailable`` where the loaded model is outside what the family's code reads."""

    def shape(self, hf) -> dict:
        """``base.dims(...)``: layers, heads, kv_heads, d_model, d_head, max_positions, vocab."""

    def head_weights(self, m: Model, layer: int, head: int) -> HeadWeights: ...

    def out_proj(self, m: Model, layer: int) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(W_O (d_model, H·d), b_O)."""

    def values(self, attn, x: torch.Tensor, heads: int) -> torch.Tensor:
        """(B, H, L, d) every query head's values, from the attention's input x (B, L, d_model)."""

    def projection_code(self, m: Model, layer: int, head: int, shapes: dict) -> str:
        """The family's own code taking one head's query weights out of its modules (``shapes``: the tuples of
        W_q, x and Q, for the comments)."""


@runtime_checkable
class Decoder(Family, Protocol):
    """A causal family; ``rotary(hf, hidden) -> (cos, sin)`` too where its attention takes them."""

    NOTEBOOK_FORWARD: str  # the Next token notebook's forward pass in plain torch from ``W`` (names -> weights),
    # ``cfg``, ``ids`` and ``L``, ending with the final norm's output in ``x`` (L, d_model)
    NOTEBOOK_FORWARD_TEXT: str  # the locale key of the markdown above that cell

    def base(self, hf) -> Any:
        """The model without its LM head."""


@runtime_checkable
class Encoder(Family, Protocol):
    """A post-norm encoder family."""

    embedding_norm: Accessor  # hf -> the embeddings' LayerNorm

    def mlp_input(self, block, y: torch.Tensor) -> torch.Tensor: ...

    def norms(self, block) -> tuple: ...


FAMILIES: dict[str, Any] = {}


def missing(module) -> list[str]:
    """The members of its Protocol (``Decoder`` if causal, else ``Encoder``) that ``module`` lacks."""
    proto = Decoder if getattr(module, "CAUSAL", False) else Encoder
    names = [n for c in proto.__mro__ if c not in (object, Protocol) for n in getattr(c, "__annotations__", {})]
    names += [n for c in proto.__mro__ if c not in (object, Protocol) for n, v in vars(c).items() if callable(v)]
    return sorted({n for n in names if not n.startswith("_") and not hasattr(module, n)})


def register(name: str, module) -> None:
    """Offer ``module`` as family ``name``: a model whose config's ``model_type`` it claims loads through it."""
    lacking = missing(module)
    if lacking:
        raise TypeError(f"family {name!r} lacks {', '.join(lacking)}")
    FAMILIES[name] = module


def unregister(name: str) -> None:
    FAMILIES.pop(name, None)


def of(m: Model):
    """The family module of a loaded model."""
    return FAMILIES[m.family]


for _name, _module in (("bert", bert), ("gpt2", gpt2), ("llama", llama)):
    register(_name, _module)
