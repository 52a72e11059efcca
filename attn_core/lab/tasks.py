"""The Lab's toy tasks: each a seeded batch generator with the attention pattern that solves it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Task:
    name: str
    vocab: int  # token ids 0 .. vocab-1
    length: int  # the default sequence length
    low: int  # the shortest length it makes sense for
    causal: bool  # the task is next-token prediction: queries may not look ahead
    make: Callable  # (generator, n, L) -> x (n, L), y (n, L), scored (n, L) bool
    ideal: Callable  # (x (L,), L) -> (L, L): the pattern that solves it (rows of scored positions sum to 1)
    steps: int  # the step budget its preset uses
    high: int = 32  # the longest length it can build


def _uniform(g, n, L, vocab):
    return torch.randint(0, vocab, (n, L), generator=g)


def _reverse(g, n, L):
    x = _uniform(g, n, L, 10)
    return x, x.flip(-1), torch.ones(n, L, dtype=torch.bool)


def _reverse_ideal(x, L):
    return torch.eye(L).flip(-1)


def _sort(g, n, L):
    x = _uniform(g, n, L, 3)
    return x, x.sort(dim=-1).values, torch.ones(n, L, dtype=torch.bool)


def _sort_ideal(x, L):
    target = x.sort().values
    same = (x.view(1, L) == target.view(L, 1)).float()  # row i: the positions holding the value that goes at i
    return same / same.sum(-1, keepdim=True)


def _shift(g, n, L):
    x = _uniform(g, n, L, 10)
    y = torch.roll(x, 1, dims=-1)
    scored = torch.ones(n, L, dtype=torch.bool)
    scored[:, 0] = False
    return x, y, scored


def _shift_ideal(x, L):
    return torch.diag(torch.ones(L - 1), -1)


_REPEAT_VOCAB = 16


def _repeat_parts(L: int) -> tuple[int, int]:
    """repeat at length L: ``n`` distinct tokens, then a copy of ``m`` of them (a random segment)."""
    m = max(2, L // 3)
    return L - m, m


def _repeat(g, n, L):
    """Induction: L - m distinct random tokens, then a copy of a segment of m of them that starts at a
    random place after a random-length prefix; the task is the next token, scored in the copy (where
    the earlier occurrence of the current token says what comes next). The distance from a token of
    the copy back to its earlier occurrence varies (m to L - m), so no fixed offset solves it: the
    model must find the earlier occurrence of its token and read the token after it."""
    first, m = _repeat_parts(L)
    tokens = torch.stack([torch.randperm(_REPEAT_VOCAB, generator=g)[:first] for _ in range(n)])
    start = torch.randint(0, first - m + 1, (n,), generator=g)
    segment = torch.gather(tokens, 1, start.view(-1, 1) + torch.arange(m).view(1, -1))
    x = torch.cat([tokens, segment], dim=-1)
    y = torch.roll(x, -1, dims=-1)
    scored = torch.zeros(n, L, dtype=torch.bool)
    scored[:, first : L - 1] = True  # in the copy: the next token is the one after the earlier occurrence
    return x, y, scored


def _repeat_ideal(x, L):
    first, _ = _repeat_parts(L)
    ideal = torch.zeros(L, L)
    for t in range(first, L - 1):
        j = next(j for j in range(first) if int(x[j]) == int(x[t]))
        ideal[t, j + 1] = 1.0  # the token after the earlier occurrence of the current one
    return ideal


_KEYS = 8  # recall: keys are 0..7, values 8..15; at most _KEYS distinct pairs, so L <= 2 * _KEYS + 1


def _recall(g, n, L):
    pairs = (L - 1) // 2
    keys = torch.stack([torch.randperm(_KEYS, generator=g)[:pairs] for _ in range(n)])
    values = torch.randint(_KEYS, 2 * _KEYS, (n, pairs), generator=g)
    which = torch.randint(0, pairs, (n,), generator=g)
    x = torch.zeros(n, L, dtype=torch.long)
    x[:, 0 : 2 * pairs : 2], x[:, 1 : 2 * pairs : 2] = keys, values
    x[:, L - 1] = keys[torch.arange(n), which]
    y = torch.zeros(n, L, dtype=torch.long)
    y[:, L - 1] = values[torch.arange(n), which]
    scored = torch.zeros(n, L, dtype=torch.bool)
    scored[:, L - 1] = True
    return x, y, scored


def _recall_ideal(x, L):
    ideal = torch.zeros(L, L)
    pairs = (L - 1) // 2
    j = next(j for j in range(pairs) if int(x[2 * j]) == int(x[L - 1]))
    ideal[L - 1, 2 * j + 1] = 1.0  # the value stored after the matching key
    return ideal


TASKS = {
    t.name: t
    for t in (
        Task("reverse", 10, 8, 2, False, _reverse, _reverse_ideal, 800),
        Task("sort", 3, 6, 2, False, _sort, _sort_ideal, 1500),
        Task("shift", 10, 8, 2, False, _shift, _shift_ideal, 600),
        Task("repeat", _REPEAT_VOCAB, 12, 4, True, _repeat, _repeat_ideal, 600, high=24),
        Task("recall", 2 * _KEYS, 9, 5, False, _recall, _recall_ideal, 2000, high=2 * _KEYS + 1),
    )
}
