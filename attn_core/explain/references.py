"""References that do not come from attention, all for the mean-pooled embedding e(x).

Leave-one-out: 1 − cos(e(x), e(x without piece i)), with the removal chosen (``sentence.REMOVALS``).
Mean pooling gives every piece a direct 1/n share of e(x): ``direct`` is 1 − cos(e(x), the mean of
the other pieces' final vectors, nothing re-run), so what a piece does through the others can be
read apart from its own share (the direct share mostly follows the norms of the final vectors).

Integrated gradients of g(x') = cos(e(x'), t) on the word embeddings, from the baseline
[CLS] [PAD] … [SEP] (same positions), t = e(x) for one sentence or e(b) for a pair. The path
integral uses Gauss-Legendre nodes; completeness says Σ_i attr_i = g(x) − g(baseline), and the
relative error of that sum is returned. (Plain gradient × input of the self-cosine is useless: at
x' = x the cosine is at its maximum 1, so its gradient is zero.)

Exact Shapley values of the words (at most ``SHAPLEY_MAX`` words: 2^m subsets, in batched passes),
v(S) = cos(e(x with only the words of S), t), removal as chosen.

A decoder (``pre.causal``, ``decoder``) explains f(x) = log p(y* | x) instead of the cosine: leave-one-out is the
drop f(x) − f(x without piece i), integrated gradients attribute f(x) − f(baseline), v(S) = f(only the words of
S). ``value_after`` and ``change_after`` say which quantity; the rest of this module is the same for both.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from . import decoder as D
from . import encoder as E
from .sentence import Item, check_removal, is_decoder, removed

IG_STEPS = 64  # Gauss-Legendre nodes: 32 left a completeness error up to ~6e-4 on short sentences
SHAPLEY_MAX = 10


def cos_after(pre, item: Item, remove: list[set[int]], removal: str, target: torch.Tensor) -> np.ndarray:
    """cos(e(x with each set removed), target) for each set, in batched passes. A piece masked out of
    every attention row and out of the pooling changes nothing else: that removal runs the kept
    pieces alone at their own positions (the same numbers, without the removed pieces' cost), as
    deletion does at positions 0, 1, ..."""
    if removal == "mask":
        ids, keys, weights = removed(item, remove, removal)
        e = E.embed_ids(pre, ids, keys, weights)
    else:
        removed(item, [], removal)  # checks the removal's name
        e = E.embed_kept(pre, _kept_rows(item, remove, removal))
    return E.cosine(e, target[None]).double().numpy()


def _kept_rows(item: Item, remove: list[set[int]], removal: str) -> list[tuple[list[int], list[int]]]:
    rows = []
    for gone in remove:
        kept = [i for i in range(item.n) if i not in gone]
        positions = kept if removal == "attention" else list(range(len(kept)))
        rows.append(([item.ids[i] for i in kept], positions))
    return rows


def value_after(pre, item: Item, remove: list[set[int]], removal: str, target) -> np.ndarray:
    """What is explained, for x with each set removed: cos(e(·), target) for an encoder, log p(y* | ·) for a
    decoder (``target``: what ``full(...).target`` is)."""
    if not is_decoder(pre):
        return cos_after(pre, item, remove, removal, target)
    check_removal(pre, removal)
    return D.logp_kept(pre, _kept_rows(item, remove, removal), target.token)


def whole_value(target) -> float:
    """What is explained, on the whole sentence: 1 (the cosine of e(x) with itself) or f(x)."""
    return target.logp if isinstance(target, D.NextToken) else 1.0


def change_after(pre, item: Item, remove: list[set[int]], removal: str, target) -> np.ndarray:
    """How much removing each set changes it: 1 − cos (encoder), f(x) − f(x without the set) (decoder)."""
    return whole_value(target) - value_after(pre, item, remove, removal, target)


def full(pre, item: Item) -> E.Pass | D.Pass:
    if is_decoder(pre):
        return D.full(pre, item.ids)
    ids = torch.tensor([item.ids])
    ones = torch.ones(1, item.n)
    with torch.inference_mode():
        return E.run(pre, E.word_embeddings(pre, ids), ones.bool(), ones)


def loo(pre, item: Item, removal: str, passed: E.Pass | D.Pass) -> np.ndarray:
    return change_after(pre, item, [{i} for i in range(item.n)], removal, passed.target)


def direct_share(passed: E.Pass | D.Pass) -> np.ndarray | None:
    """1 − cos(e(x), the mean of the other pieces' final vectors): piece i's own 1/n share (None for a
    decoder: its prediction is read at one position, with no pooling to share)."""
    if isinstance(passed, D.Pass):
        return None
    h = passed.hidden[-1][0].double()
    n = h.shape[0]
    others = (h.sum(0, keepdim=True) - h) / max(n - 1, 1)
    return (1 - E.cosine(others, h.mean(0, keepdim=True))).numpy()


def gauss_legendre(steps: int) -> tuple[np.ndarray, np.ndarray]:
    x, w = np.polynomial.legendre.leggauss(steps)
    return (x + 1) / 2, w / 2


def integrated_gradients(pre, ids: tuple[int, ...], target, steps: int = IG_STEPS) -> dict:
    """Attributions per piece of g(x') = cos(e(x'), target) (a decoder: f), and the completeness check."""
    if is_decoder(pre):
        out = D.integrated_gradients(pre, ids, target, *gauss_legendre(steps))
        return _complete(out["attr"], out["delta"])
    n = len(ids)
    x_ids = torch.tensor([ids])
    base_ids = torch.tensor([[ids[0]] + [pre.tokenizer.pad_token_id] * (n - 2) + [ids[-1]]])
    with torch.no_grad():
        x, b = E.word_embeddings(pre, x_ids)[0], E.word_embeddings(pre, base_ids)[0]
    alphas, w = gauss_legendre(steps)
    a = torch.tensor(alphas, dtype=torch.float32)[:, None, None]
    path = (b + a * (x - b)).detach().requires_grad_(True)
    ones = torch.ones(steps, n)
    with torch.enable_grad():
        g = E.cosine(E.embed(pre, path, ones.bool(), ones), target[None])
        (grad,) = torch.autograd.grad(g.sum(), path)
    avg = (grad.double() * torch.tensor(w)[:, None, None]).sum(0)
    attr = (avg * (x - b).double()).sum(-1).numpy()
    with torch.inference_mode():
        ends = E.cosine(E.embed(pre, torch.stack([x, b]), ones[:2].bool(), ones[:2]), target[None]).double()
    return _complete(attr, float(ends[0] - ends[1]))


def _complete(attr: np.ndarray, delta: float) -> dict:
    """The attributions with completeness's check: Σ attr against g(x) − g(baseline), as a relative error."""
    error = abs(float(attr.sum()) - delta) / abs(delta) if abs(delta) > 1e-12 else 0.0
    return {"attr": attr, "delta": delta, "sum": float(attr.sum()), "error": error}


def subset_values(pre, item: Item, removal: str, target: torch.Tensor) -> np.ndarray:
    """v(S) for every subset S of the words, indexed by the bitmask of S."""
    m = item.n_words
    pieces = [item.pieces_of(w) for w in range(m)]
    remove = [{p for w in range(m) if not (mask >> w) & 1 for p in pieces[w]} for mask in range(2**m)]
    return value_after(pre, item, remove, removal, target)


def shapley_from_values(v: np.ndarray, m: int) -> np.ndarray:
    """Exact Shapley values from v over all 2^m bitmasks: Σ_S |S|!(m−|S|−1)!/m! (v(S ∪ p) − v(S))."""
    masks = np.arange(2**m)
    size = np.array([int(s).bit_count() for s in masks])
    weight = np.array([math.factorial(k) * math.factorial(m - k - 1) / math.factorial(m) for k in range(m)])
    phi = np.zeros(m)
    for p in range(m):
        without = masks[(masks >> p) & 1 == 0]
        phi[p] = float((weight[size[without]] * (v[without | (1 << p)] - v[without])).sum())
    return phi


def shapley(pre, item: Item, removal: str, target) -> dict | None:
    """Each word's exact Shapley value and the check Σ φ = v(all) − v(none); None above SHAPLEY_MAX words."""
    m = item.n_words
    if m > SHAPLEY_MAX or m < 1:
        return None
    v = subset_values(pre, item, removal, target)
    phi = shapley_from_values(v, m)
    return {"words": phi, "v_all": float(v[-1]), "v_none": float(v[0]), "sum": float(phi.sum())}
