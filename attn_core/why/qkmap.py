"""Queries and keys of one head as one map (AttentionViz, Yeh et al. 2023): a query near the keys it attends to.

Two transforms leave every softmax row unchanged, and the map uses both:
- scale: queries times c, keys divided by c (every q·k the same); c = sqrt(mean ‖k‖ / mean ‖q‖) gives both
  clouds the same mean norm;
- translation: every key plus one vector t (row i's scores all move by q_i·t, a constant its softmax drops);
  t = mean(q') - mean(k') puts the two clouds' centres together.
Then ‖q - k‖² = ‖q‖² + ‖k‖² - 2 q·k: within a row, the nearer key is the higher-scoring one up to the key's norm.
The 2-D picture is the vectors themselves when d = 2 ("exact": a key's score with query i is q_i·(k - t)), else
their first two principal components ("pca", with the variance they keep). ``correlation`` is Pearson's r between
the negative 2-D distance and the scaled score over the pairs the mask allows: how far the picture can be read.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class QKMap:
    queries: torch.Tensor  # (L, 2) where the map draws each query
    keys: torch.Tensor  # (S, 2) ... and each key
    method: str  # "exact" (d = 2) or "pca"
    explained: float  # the share of the transformed vectors' variance the two axes keep (1.0 when exact)
    scale: float  # c: queries times c, keys divided by c
    translation: torch.Tensor  # (d,) t, added to every (scaled) key
    correlation: float | None  # r(-2-D distance, score) over the allowed pairs; None when undefined
    more_queries: torch.Tensor | None = None  # (M, 2) where the map draws ``more``'s queries (None without)
    more_keys: torch.Tensor | None = None  # (N, 2) ... and its keys


def transformed(Q: torch.Tensor, K: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, float, torch.Tensor]:
    """(Q', K', c, t): Q' = c Q, K' = K / c + t, the two softmax-preserving transforms chosen as above."""
    q_norm, k_norm = Q.norm(dim=-1).mean(), K.norm(dim=-1).mean()
    c = float((k_norm / q_norm).sqrt()) if q_norm > 0 and k_norm > 0 else 1.0
    q, k = Q * c, K / c
    t = q.mean(0) - k.mean(0)
    return q, k + t, c, t


def _pearson(x: torch.Tensor, y: torch.Tensor) -> float | None:
    x, y = x.double() - x.double().mean(), y.double() - y.double().mean()
    den = float(x.norm() * y.norm())
    return float((x * y).sum()) / den if den > 0 else None


def qk_map(
    Q: torch.Tensor,
    K: torch.Tensor,
    scores: torch.Tensor,
    allowed: torch.Tensor | None = None,
    more: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> QKMap:
    """The map of one head: Q (L, d), K (S, d), its scaled scores (L, S), ``allowed`` (L, S) bool (None: all).
    ``more``: other queries (M, d) and keys (N, d) of the same head (other sentences) on the same map: the one
    translation and scale, and the principal axes, are chosen over every point; r stays over Q and K's pairs."""
    mq, mk = more if more is not None else (Q[:0], K[:0])
    one = mq.dim() == mk.dim() == 2 and mq.shape[-1] == mk.shape[-1] == Q.shape[-1]
    if Q.dim() != 2 or K.dim() != 2 or Q.shape[-1] != K.shape[-1] or not one:
        raise ValueError(f"queries (L, d) and keys (S, d) of one head, not {tuple(Q.shape)} and {tuple(K.shape)}")
    L, S = Q.shape[0], K.shape[0]
    q, k, c, t = transformed(torch.cat([Q, mq]).float(), torch.cat([K, mk]).float())
    if q.shape[-1] == 2:
        pq, pk, method, explained = q, k, "exact", 1.0
    else:
        pq, pk, explained = _pca(q, k)
        method = "pca"
    dist = torch.cdist(pq[:L].double(), pk[:S].double())  # (L, S)
    keep = torch.ones_like(scores, dtype=torch.bool) if allowed is None else allowed.bool()
    keep = keep & torch.isfinite(scores)
    r = _pearson(-dist[keep], scores.double()[keep]) if int(keep.sum()) > 2 else None
    extra = (pq[L:], pk[S:]) if more is not None else (None, None)
    return QKMap(pq[:L], pk[:S], method, explained, c, t, r, *extra)


def _pca(q: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, float]:
    """Queries and keys on the first two principal axes of both together, and the share of variance they keep."""
    both = torch.cat([q, k])
    centre = both.mean(0)
    _, sv, vh = torch.linalg.svd(both - centre, full_matrices=False)
    axes = vh[:2].T  # (d, 2); with d = 1 only one axis: the second coordinate is 0
    proj = (both - centre) @ axes
    if proj.shape[-1] < 2:
        proj = torch.cat([proj, proj.new_zeros(proj.shape[0], 2 - proj.shape[-1])], -1)
    var = sv.pow(2)
    explained = float(var[:2].sum() / var.sum()) if float(var.sum()) > 0 else 1.0
    return proj[: q.shape[0]], proj[q.shape[0] :], explained
