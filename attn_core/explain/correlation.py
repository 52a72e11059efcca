"""How far two explanations agree: Spearman's ρ and Kendall's τ over the sentence's own pieces
([CLS] and [SEP] left out and reported apart), with a bootstrap interval for ρ (pieces resampled
with replacement) so that nobody reads a single ρ as a verdict.

A constant ranking has no correlation: the result then says so (``reason``) and carries no number,
never NaN; so does a sentence with fewer than three pieces to rank.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import kendalltau, rankdata, spearmanr

BOOTSTRAP = 300
MIN_PIECES = 3


def _constant(x: np.ndarray) -> bool:
    return bool(np.ptp(x) <= 1e-12 * max(1.0, float(np.abs(x).max())))


def _rho(x: np.ndarray, y: np.ndarray) -> float:
    return float(spearmanr(x, y).statistic)


def bootstrap(x: np.ndarray, y: np.ndarray, *, rounds: int = BOOTSTRAP, seed: int = 0) -> tuple[float, float] | None:
    """The 2.5 and 97.5 percentiles of ρ over resamples (constant resamples skipped), seeded. Every
    resample at once: each row's average ranks and their Pearson correlation, which is Spearman's ρ
    (``bootstrap_loop``, one ``spearmanr`` per resample, is the same in a loop and 40x slower)."""
    rng = np.random.default_rng(seed)
    n = len(x)
    idx = np.stack([rng.integers(0, n, n) for _ in range(rounds)])  # the same draws, in the same order
    a, b = np.asarray(x, dtype=np.float64)[idx], np.asarray(y, dtype=np.float64)[idx]
    valid = ~(_constant_rows(a) | _constant_rows(b))
    if int(valid.sum()) < rounds // 2:
        return None
    ra, rb = rankdata(a[valid], axis=1), rankdata(b[valid], axis=1)
    ra -= ra.mean(1, keepdims=True)
    rb -= rb.mean(1, keepdims=True)
    rho = (ra * rb).sum(1) / np.sqrt((ra * ra).sum(1) * (rb * rb).sum(1))
    lo, hi = np.percentile(rho, [2.5, 97.5])
    return float(lo), float(hi)


def _constant_rows(a: np.ndarray) -> np.ndarray:
    """``_constant`` of each row."""
    return np.ptp(a, axis=1) <= 1e-12 * np.maximum(1.0, np.abs(a).max(1))


def bootstrap_loop(
    x: np.ndarray, y: np.ndarray, *, rounds: int = BOOTSTRAP, seed: int = 0
) -> tuple[float, float] | None:
    """``bootstrap`` one resample at a time with scipy's ``spearmanr`` (the reference its test holds it to)."""
    rng = np.random.default_rng(seed)
    n, found = len(x), []
    for _ in range(rounds):
        idx = rng.integers(0, n, n)
        a, b = x[idx], y[idx]
        if not (_constant(a) or _constant(b)):
            found.append(_rho(a, b))
    if len(found) < rounds // 2:
        return None
    lo, hi = np.percentile(found, [2.5, 97.5])
    return float(lo), float(hi)


def correlate(x, y, *, with_interval: bool = True) -> dict:
    """{"spearman", "kendall", "interval"} or {"spearman": None, ..., "reason": "constant"|"too_few"}."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if len(x) < MIN_PIECES:
        return {"spearman": None, "kendall": None, "interval": None, "reason": "too_few"}
    if _constant(x) or _constant(y):
        return {"spearman": None, "kendall": None, "interval": None, "reason": "constant"}
    rho = float(np.clip(_rho(x, y), -1, 1))
    tau = float(np.clip(kendalltau(x, y).statistic, -1, 1))
    return {"spearman": rho, "kendall": tau, "interval": bootstrap(x, y) if with_interval else None, "reason": None}


def words_sum(values: np.ndarray, words: tuple, n_words: int) -> np.ndarray:
    """Piece values summed per word (to compare with word-level Shapley values)."""
    out = np.zeros(n_words)
    for i, w in enumerate(words):
        if w is not None:
            out[w] += values[i]
    return out


def specials(values: np.ndarray) -> dict:
    """[CLS]'s and [SEP]'s share of a method's total (they are left out of the correlations)."""
    values = np.asarray(values, dtype=np.float64)
    total = float(np.abs(values).sum())
    if total <= 0:
        return {"cls": None, "sep": None}
    return {"cls": float(abs(values[0]) / total), "sep": float(abs(values[-1]) / total)}
