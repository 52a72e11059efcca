"""The probe set's queries and keys for one head of a trained model: every probe sentence through the model's
layers up to the head's as one right-padded batch (what that layer's attention sees, ``models.attention_inputs``),
then one head's queries and keys of every real token, projected and rotated as ``models.take_apart`` does for one
sentence.

``probe_states`` is the layer's part (one forward pass, stopped at that layer); ``probe_queries_keys`` one head's (two
small projections). A caller caches both on plain values (the model's name, the layer, the head)."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .. import models as pt
from .. import steps
from ..interpret.hooks import batch_of


@dataclass(frozen=True)
class ProbeStates:
    layer: int
    inputs: torch.Tensor  # (B, L, d_model) the layer's attention input, right-padded
    real: torch.Tensor  # (B, L) bool: a real token (not padding)
    pieces: tuple[tuple[str, ...], ...]  # each sentence's real tokens, as the model's tokenizer splits them


@dataclass(frozen=True)
class ProbePoints:
    Q: torch.Tensor  # (N, d) every real token's query, sentence after sentence
    K: torch.Tensor  # (N, d) ... and its key
    sentence: list[int]  # (N,) which sentence each point is from
    position: list[int]  # (N,) its position in that sentence
    token: list[str]  # (N,) its token


def probe_states(m, sentences: list[str], layer: int) -> ProbeStates:
    """Every sentence encoded as the Real model page encodes one (its special tokens, cut to the context), batched,
    through the model up to ``layer``'s attention."""
    pt.check_layer_head(m, layer)
    batch, encs = batch_of(m, sentences)  # as Inside the model batches them
    pieces = tuple(tuple(e.pieces[: e.n_real]) for e in encs)
    return ProbeStates(layer, pt.attention_inputs(m, batch.ids, batch.real, layer), batch.real, pieces)


def probe_queries_keys(m, states: ProbeStates, head: int) -> ProbePoints:
    """Head ``head`` of the states' layer: every real token's query and key (its bias and rotation included)."""
    w = pt.head_weights(m, states.layer, head)
    x = states.inputs  # (B, L, d_model)
    Q, K = steps.project(x, w.W_q, w.b_q)[:, 0], steps.project(x, w.W_k, w.b_k)[:, 0]  # (B, L, d)
    rotary = w.rotary() if isinstance(w, pt.HeadWeights) else None  # learned positions are in x already
    if rotary is not None:
        Q, K = rotary.rotate(Q), rotary.rotate(K)
    where = states.real.nonzero().tolist()  # (N, 2): sentence, position, in order
    return ProbePoints(
        Q[states.real],
        K[states.real],
        [b for b, _ in where],
        [i for _, i in where],
        [states.pieces[b][i] for b, i in where],
    )
