"""The bundled encoder (all-MiniLM-L6-v2) re-run layer by layer from its own modules, so that an
explanation can change what happens inside: mask a key out of every attention row, zero one
token's value vector in one layer, or feed word embeddings on an integration path.

    e(x) = mean_i h_i over the real pieces (the model's own pooling: sentence-transformers' Pooling
           with mean tokens; its Normalize module does not change a cosine)

Every function takes a batch: ``words`` (B, n, d_model) word embeddings, ``keys`` (B, n) bool, True =
may be attended, and ``pool`` (B, n) float, the weight of each piece in the mean (1 for real pieces).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from ..models import Pretrained


@dataclass(frozen=True)
class Pass:
    hidden: list[torch.Tensor]  # layers + 1 tensors (B, n, d_model): hidden[l] is layer l's input
    attentions: list[torch.Tensor]  # layers tensors (B, H, n, n)
    values: list[torch.Tensor]  # layers tensors (B, H, n, d_head): each layer's V
    pooled: torch.Tensor  # (B, d_model)

    target = property(lambda self: self.pooled[0], doc="what the explanations of the first sentence compare with")


def word_embeddings(pre: Pretrained, ids: torch.Tensor) -> torch.Tensor:
    """(B, n) ids -> (B, n, d_model): the word-embedding table's rows (positions added later)."""
    return pre.model.embeddings.word_embeddings(ids).float()


def _embed(pre: Pretrained, words: torch.Tensor, positions: torch.Tensor | None = None) -> torch.Tensor:
    emb = pre.model.embeddings
    n = words.shape[1]
    pos = emb.position_embeddings.weight[:n].float() if positions is None else emb.position_embeddings(positions)
    typ = emb.token_type_embeddings.weight[0].float()
    return emb.LayerNorm(words + pos + typ)


def _split(t: torch.Tensor, heads: int) -> torch.Tensor:
    B, n, d = t.shape
    return t.view(B, n, heads, d // heads).transpose(1, 2)  # (B, H, n, d_head)


def attend(pre: Pretrained, layer: int, x: torch.Tensor, keys: torch.Tensor, zero_value: torch.Tensor | None = None):
    """One BERT layer on x (B, n, d_model). ``zero_value`` (B, n) bool zeroes those pieces' value
    vectors in every head (value zeroing). Returns (output, attention probabilities, V)."""
    block = pre.model.encoder.layer[layer]
    sa = block.attention.self
    H = pre.heads
    q, k, v = _split(sa.query(x), H), _split(sa.key(x), H), _split(sa.value(x), H)
    if zero_value is not None:
        v = v * (~zero_value)[:, None, :, None]
    scores = q @ k.transpose(-1, -2) / pre.d_head**0.5
    scores = scores.masked_fill(~keys[:, None, None, :], torch.finfo(scores.dtype).min)
    probs = scores.softmax(-1)
    ctx = (probs @ v).transpose(1, 2).reshape(x.shape)
    h1 = block.attention.output.LayerNorm(block.attention.output.dense(ctx) + x)
    ff = block.output.dense(block.intermediate.intermediate_act_fn(block.intermediate.dense(h1)))
    return block.output.LayerNorm(ff + h1), probs, v


def pool(hidden: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Mean pooling: (B, n, d) and (B, n) -> (B, d)."""
    return (hidden * weights[..., None]).sum(1) / weights.sum(1, keepdim=True).clamp_min(1e-12)


def run(pre: Pretrained, words: torch.Tensor, keys: torch.Tensor, weights: torch.Tensor) -> Pass:
    """The whole encoder on a batch, every layer's input, attention and values kept."""
    x = _embed(pre, words)
    hidden, attentions, values = [x], [], []
    for layer in range(pre.layers):
        x, probs, v = attend(pre, layer, x, keys)
        hidden.append(x)
        attentions.append(probs)
        values.append(v)
    return Pass(hidden, attentions, values, pool(x, weights))


def embed(pre: Pretrained, words: torch.Tensor, keys: torch.Tensor, weights: torch.Tensor, positions=None):
    """Only the pooled embedding (B, d_model); ``positions`` (B, n) ids when they are not 0..n-1."""
    x = _embed(pre, words, positions)
    for layer in range(pre.layers):
        x = attend(pre, layer, x, keys)[0]
    return pool(x, weights)


def embed_ids(pre: Pretrained, ids: torch.Tensor, keys: torch.Tensor, weights: torch.Tensor, chunk: int = 256):
    """Pooled embeddings of a batch of id sequences, in chunks, without gradients."""
    out = []
    with torch.inference_mode():
        for s in range(0, ids.shape[0], chunk):
            sl = slice(s, s + chunk)
            out.append(embed(pre, word_embeddings(pre, ids[sl]), keys[sl], weights[sl]))
    return torch.cat(out)


def cosine(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return F.cosine_similarity(a, b, dim=-1)


def embed_kept(pre: Pretrained, rows: list[tuple[list[int], list[int]]], chunk: int = 256) -> torch.Tensor:
    """Pooled embeddings of sequences given as (ids, positions) of the pieces kept, each attending to
    all of them: rows of one length are run together, so removed pieces cost nothing. Returns (B, d)."""
    out = torch.empty(len(rows), pre.d_model)
    by_length: dict[int, list[int]] = {}
    for b, (ids, _) in enumerate(rows):
        by_length.setdefault(len(ids), []).append(b)
    with torch.inference_mode():
        for n, members in by_length.items():
            for s in range(0, len(members), chunk):
                part = members[s : s + chunk]
                ids = torch.tensor([rows[b][0] for b in part])
                pos = torch.tensor([rows[b][1] for b in part])
                ones = torch.ones(len(part), n)
                out[part] = embed(pre, word_embeddings(pre, ids), ones.bool(), ones, pos)
    return out
