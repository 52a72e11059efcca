"""The query-key map (attn_core.why.qkmap): its two transforms leave every softmax row unchanged, at d_k = 2 the map
is the vectors themselves and gives back every score, the PCA keeps what it says it keeps, and the correlation it
prints is Pearson's r computed here independently."""

from __future__ import annotations

import math

import pytest
import torch
from tolerance import assert_close

from attn_core import Settings, run_trace
from attn_core.why import qk_map
from attn_core.why.qkmap import transformed


def qk(L: int, S: int, d: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(L, d, generator=g) * 1.7 + 0.4, torch.randn(S, d, generator=g) * 0.6 - 1.0


@pytest.mark.parametrize("d", [1, 2, 5, 16])
def test_the_transforms_leave_every_softmax_row_unchanged(d):
    Q, K = qk(6, 9, d, seed=d)
    q, k, c, t = transformed(Q, K)
    assert c > 0 and t.shape == (d,)
    assert_close(torch.softmax(q @ k.T, -1), torch.softmax(Q @ K.T, -1), rtol=1e-6, atol=1e-6)
    # ... while the scores themselves move by one constant per row (q_i · t)
    assert_close(q @ k.T - Q @ K.T, (q @ t)[:, None].expand(6, 9), rtol=1e-5, atol=1e-5)
    assert_close(q.norm(dim=-1).mean(), (k - t).norm(dim=-1).mean(), rtol=1e-5, atol=1e-6)


def test_a_translation_the_query_sees_is_caught():
    """The check above fails on a transform that is not one of the two: keys moved by a different vector each."""
    Q, K = qk(5, 7, 3, seed=1)
    moved = K + torch.randn(7, 3, generator=torch.Generator().manual_seed(2))
    assert not torch.allclose(torch.softmax(Q @ moved.T, -1), torch.softmax(Q @ K.T, -1), rtol=1e-6, atol=1e-6)


def test_at_two_dimensions_the_map_is_the_vectors_and_gives_back_every_score():
    Q, K = qk(7, 7, 2, seed=3)
    m = qk_map(Q, K, Q @ K.T)
    assert m.method == "exact" and m.explained == 1.0
    assert_close(m.queries @ (m.keys - m.translation).T, Q @ K.T, rtol=1e-5, atol=1e-5)
    # the distances say the scores too: q·k = (|q|² + |k'|² - |q - k'|²) / 2 - q·t
    q2, k2 = m.queries.pow(2).sum(-1)[:, None], m.keys.pow(2).sum(-1)[None, :]
    dist2 = torch.cdist(m.queries, m.keys).pow(2)
    got = (q2 + k2 - dist2) / 2 - (m.queries @ m.translation)[:, None]
    assert_close(got, Q @ K.T, rtol=1e-4, atol=1e-4)


def test_pca_keeps_the_share_it_says_and_the_correlation_is_pearsons():
    Q, K = qk(8, 10, 12, seed=4)
    scores = Q @ K.T / math.sqrt(12)
    allowed = torch.ones(8, 10, dtype=torch.bool).tril()
    m = qk_map(Q, K, scores, allowed)
    q, k, _, _ = transformed(Q, K)
    both = torch.cat([q, k]).double()
    eig = torch.linalg.eigvalsh(torch.cov(both.T)).flip(0)  # an independent route to the variance by axis
    assert m.method == "pca" and m.explained == pytest.approx(float(eig[:2].sum() / eig.sum()), rel=1e-4)
    d = torch.cdist(m.queries.double(), m.keys.double())[allowed].numpy()
    s = scores.double()[allowed].numpy()
    import numpy as np

    assert m.correlation == pytest.approx(float(np.corrcoef(-d, s)[0, 1]), rel=1e-6, abs=1e-9)


def test_on_a_trace_the_map_uses_the_heads_own_scores():
    tr = run_trace(Settings(sentence="the cat sat on the mat", d_q=2, d_k=2, heads=2, layout="tutorial"))
    head = 1
    m = qk_map(tr.Q[head], tr.K[head], tr.scaled_scores[head], tr.mask)
    assert m.method == "exact" and -1.0 <= m.correlation <= 1.0
    assert_close(m.queries @ (m.keys - m.translation).T, tr.Q[head] @ tr.K[head].T, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("Q", "K"),
    [
        (torch.zeros(3, 2), torch.zeros(4, 3)),
        (torch.zeros(3), torch.zeros(3)),
        (torch.zeros(2, 3, 2), torch.zeros(2, 2)),
    ],
)
def test_what_is_not_one_heads_queries_and_keys_is_refused(Q, K):
    with pytest.raises(ValueError):
        qk_map(Q, K, torch.zeros(3, 4))


def test_all_zero_vectors_give_a_map_and_no_correlation():
    m = qk_map(torch.zeros(3, 4), torch.zeros(3, 4), torch.zeros(3, 3))
    assert m.correlation is None and torch.isfinite(m.queries).all() and torch.isfinite(m.keys).all()


def test_other_points_share_the_one_translation_and_scale_and_r_stays_this_sentences():
    """d = 2 (exact): with ``more``, c = sqrt(mean ‖k‖ / mean ‖q‖) and t = mean(q') - mean(k') are taken over every
    point (written out here), the map's points are c q and k / c + t, and r is over this sentence's pairs alone
    (Pearson's r of minus the drawn distance and the score, written out)."""
    g = torch.Generator().manual_seed(11)
    Q, K = torch.randn(5, 2, generator=g), torch.randn(6, 2, generator=g) * 3 + 1
    MQ, MK = torch.randn(40, 2, generator=g) * 0.5, torch.randn(30, 2, generator=g) - 2
    scores = Q @ K.T
    m = qk_map(Q, K, scores, more=(MQ, MK))
    all_q, all_k = torch.cat([Q, MQ]).double(), torch.cat([K, MK]).double()
    q_len = sum(float(row.dot(row)) ** 0.5 for row in all_q) / len(all_q)
    k_len = sum(float(row.dot(row)) ** 0.5 for row in all_k) / len(all_k)
    c = (k_len / q_len) ** 0.5
    t = (c * all_q).mean(0) - (all_k / c).mean(0)
    assert m.method == "exact" and m.scale == pytest.approx(c, rel=1e-5)
    assert_close(m.queries.double(), c * Q.double(), rtol=1e-5, atol=1e-6)
    assert_close(m.keys.double(), K.double() / c + t, rtol=1e-5, atol=1e-6)
    assert_close(m.more_queries.double(), c * MQ.double(), rtol=1e-5, atol=1e-6)
    assert_close(m.more_keys.double(), MK.double() / c + t, rtol=1e-5, atol=1e-6)
    alone = qk_map(Q, K, scores)
    assert alone.more_queries is None and abs(alone.scale - m.scale) > 1e-3  # the probe points moved c
    x = [-float((m.queries[i] - m.keys[j]).double().norm()) for i in range(5) for j in range(6)]
    y = [float(scores[i, j]) for i in range(5) for j in range(6)]
    mx, my = sum(x) / len(x), sum(y) / len(y)
    cov = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    r = cov / (sum((a - mx) ** 2 for a in x) * sum((b - my) ** 2 for b in y)) ** 0.5
    assert m.correlation == pytest.approx(r, abs=1e-6)
    with pytest.raises(ValueError):
        qk_map(Q, K, scores, more=(MQ, torch.zeros(3, 4)))
