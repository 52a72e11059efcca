"""Explanations read from attention: raw attention, rollout and flow (Abnar & Zuidema, 2020).

Each takes the head-averaged attention of every layer, ``W`` (layers, n, n) (row i: what query i
reads), over the real pieces only, and gives one value per piece for the mean-pooled embedding:
the mean over the output positions i of a matrix M[i, j] (how much output i draws on input j).
A decoder's prediction is read at the last position alone: its value per piece is M's last row
(``last=True``). Its attention is causal (W[i, j] = 0 for j > i), and so are A_l, their products
and the flow graph's edges: rollout and flow give no later piece any weight in an earlier output.

    raw:      M = W_last                                   (the last layer, mean over heads)
    rollout:  A_l = 0.5 W_l + 0.5 I,  M = A_L ... A_2 A_1  (the residual counted as half)
    flow:     M[i, j] = max-flow from input j to output i in the layered graph whose edges
              (l - 1, j) -> (l, i) carry A_l[i, j]

Flow's sink keeps depth: one max-flow per (input, output) pair, averaged over the outputs. A single
super-sink joined to every last-layer position would make each input's flow equal to its own edges
into layer 1 (0.5 * the column sum of A_1 + 0.5), whatever the later layers do. That is n² max-flows
per depth, so flow is computed up to ``FLOW_MAX`` pieces and not above.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_flow

FLOW_MAX = 32  # pieces: n² max-flows on a graph of (layers + 1) · n nodes
FLOW_SCALE = 2**24  # capacities become int32 (scipy's maximum_flow needs int32: int64 silently gave 0)


def residual(W: np.ndarray) -> np.ndarray:
    """A = 0.5 W + 0.5 I, rows renormalised (they already sum to 1 for softmax rows)."""
    A = 0.5 * W + 0.5 * np.eye(W.shape[-1])
    return A / A.sum(-1, keepdims=True)


def rollout_matrices(W: np.ndarray) -> np.ndarray:
    """(layers, n, n): the rollout up to each layer, A_l ... A_1."""
    A = residual(np.asarray(W, dtype=np.float64))
    out = np.empty_like(A)
    out[0] = A[0]
    for layer in range(1, len(A)):
        out[layer] = A[layer] @ out[layer - 1]
    return out


def per_token(M: np.ndarray, last: bool = False) -> np.ndarray:
    """One value per input piece: the mean of M's rows (a mean-pooled output), or its last row (``last``:
    a decoder's next-token prediction, read at the last position)."""
    M = np.asarray(M, dtype=np.float64)
    return M[-1].copy() if last else M.mean(0)


def raw(W: np.ndarray, layer: int = -1, last: bool = False) -> np.ndarray:
    return per_token(np.asarray(W, dtype=np.float64)[layer], last)


def rollout(W: np.ndarray, layer: int = -1, last: bool = False) -> np.ndarray:
    return per_token(rollout_matrices(W)[layer], last)


def flow_graph(W: np.ndarray, depth: int) -> csr_matrix:
    """The layered graph of the first ``depth`` layers: node l·n + j is piece j after l layers;
    the edge (l - 1, j) -> (l, i) has capacity A_l[i, j], as int32 units of 1 / FLOW_SCALE."""
    A = residual(np.asarray(W, dtype=np.float64))[:depth]
    n = A.shape[-1]
    rows, cols, caps = [], [], []
    for layer in range(depth):
        i, j = np.nonzero(A[layer] > 0)
        rows.append(layer * n + j)
        cols.append((layer + 1) * n + i)
        caps.append(np.rint(A[layer][i, j] * FLOW_SCALE))
    size = (depth + 1) * n
    data = np.concatenate(caps).astype(np.int32)
    return csr_matrix((data, (np.concatenate(rows), np.concatenate(cols))), shape=(size, size), dtype=np.int32)


def flow_matrix_pairwise(W: np.ndarray, depth: int | None = None) -> np.ndarray:
    """``flow_matrix`` the plain way: one scipy max-flow per (input, output) pair on the whole layered
    graph (n² calls, most of their time in scipy's checks and conversions). Kept as the tests' reference."""
    W = np.asarray(W, dtype=np.float64)
    depth = len(W) if depth is None else depth
    n = W.shape[-1]
    graph = flow_graph(W, depth)
    M = np.zeros((n, n))
    for j in range(n):
        for i in range(n):
            M[i, j] = maximum_flow(graph, j, depth * n + i).flow_value / FLOW_SCALE
    return M


def _middle_edges(caps: np.ndarray, depth: int, off: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The edges of the full layers between the first and the last, in every copy (``off``: each copy's first
    node): their rows, columns and capacities."""
    n = caps.shape[-1]
    mid_r, mid_c, mid_w = [], [], []
    for layer in range(1, depth - 1):
        dst, src = np.nonzero(caps[layer] > 0)
        mid_r.append(1 + (layer - 1) * n + src)
        mid_c.append(1 + layer * n + dst)
        mid_w.append(caps[layer][dst, src])
    if not mid_r:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    rows = (np.concatenate(mid_r)[None, :] + off).ravel()
    cols = (np.concatenate(mid_c)[None, :] + off).ravel()
    return rows, cols, np.tile(np.concatenate(mid_w), len(off))


def flow_matrix(W: np.ndarray, depth: int | None = None) -> np.ndarray:
    """M[i, j] = the max-flow from input j to output i after ``depth`` layers (default: all).

    The same integer max-flows as ``flow_matrix_pairwise``, n scipy calls instead of n²: for one input
    j, the graphs from j to each output i are laid side by side as disjoint copies (each holding only
    its own input j and output i of the outer layers), a super-source feeds every copy's input and
    every copy's output drains into a super-sink, both with capacities no cut can reach. A maximum
    flow of disjoint copies is a maximum flow in each copy (the total is the sum of the copies'
    flows, each at most its own maximum), so the flow leaving the super-source into copy i is
    the max-flow from j to i."""
    W = np.asarray(W, dtype=np.float64)
    depth = len(W) if depth is None else depth
    n = W.shape[-1]
    caps = np.rint(residual(W)[:depth] * FLOW_SCALE).astype(np.int64)  # caps[l][i, j]: (l, j) -> (l + 1, i)
    if depth == 1:
        return caps[0] / FLOW_SCALE  # one edge from each input to each output
    # one copy: node 0 is the input, 1 + (l - 1) n + k piece k after l layers (0 < l < depth), last the output
    size = 2 + (depth - 1) * n
    out_node = size - 1
    k = np.arange(n)
    last = 1 + (depth - 2) * n + k  # the pieces after depth - 1 layers, into the output
    copies = np.arange(n)  # copy i: towards output i
    off = copies[:, None] * size
    big = np.int64(np.iinfo(np.int32).max // 4)  # above any copy's cut (≤ n · FLOW_SCALE + n)
    S, T = n * size, n * size + 1
    rows_mid, cols_mid, w_mid = _middle_edges(caps, depth, off)
    rows_last = (last[None, :] + off).ravel()
    cols_last = np.repeat(copies * size + out_node, n)
    w_last = caps[depth - 1].ravel()  # copy i, piece k: caps[depth - 1][i, k]
    M = np.zeros((n, n))
    for j in range(n):
        rows_first = np.repeat(copies * size, n)
        cols_first = (1 + k[None, :] + off).ravel()
        w_first = np.tile(caps[0][:, j], n)  # (0, j) -> (1, k): caps[0][k, j]
        rows = np.concatenate([rows_first, rows_mid, rows_last, np.full(n, S), copies * size + out_node])
        cols = np.concatenate([cols_first, cols_mid, cols_last, copies * size, np.full(n, T)])
        w = np.concatenate([w_first, w_mid, w_last, np.full(2 * n, big)])
        keep = w > 0
        graph = csr_matrix(
            (w[keep].astype(np.int32), (rows[keep], cols[keep])), shape=(n * size + 2, n * size + 2), dtype=np.int32
        )
        result = maximum_flow(graph, S, T)
        M[:, j] = result.flow[[S], :].toarray()[0, copies * size] / FLOW_SCALE
    return M


def flow(W: np.ndarray, layer: int = -1, last: bool = False) -> np.ndarray | None:
    """Flow's value per piece up to ``layer`` (default the last); None above FLOW_MAX pieces."""
    W = np.asarray(W, dtype=np.float64)
    if W.shape[-1] > FLOW_MAX:
        return None
    depth = len(W) if layer == -1 else layer + 1
    return per_token(flow_matrix(W, depth), last)


def super_sink_flow(W: np.ndarray) -> np.ndarray:
    """Each input's max-flow to one super-sink joined to every last-layer position (the choice
    this module avoids: it only sees layer 1). Kept to show it in a test."""
    W = np.asarray(W, dtype=np.float64)
    n, depth = W.shape[-1], len(W)
    g = flow_graph(W, depth).tolil()
    size = g.shape[0]
    g.resize((size + 1, size + 1))
    for i in range(n):
        g[depth * n + i, size] = np.iinfo(np.int32).max // (2 * n)
    g = g.tocsr().astype(np.int32)
    return np.array([maximum_flow(g, j, size).flow_value / FLOW_SCALE for j in range(n)])
