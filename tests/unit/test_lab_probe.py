"""The Lab's probe example (``attn_core.lab.probe``: the first held-out example, whose attention the page draws)
is made once per task, seed and length and handed out as copies: equal to drawing the whole held-out set again,
for every task, and a caller that writes into its copy does not change the next one's."""

from __future__ import annotations

import pytest
import torch

from attn_core.lab import LabConfig, probe
from attn_core.lab.config import VAL_SIZE, validate
from attn_core.lab.tasks import TASKS


def drawn_again(cfg: LabConfig) -> tuple[torch.Tensor, ...]:
    """The held-out set drawn from its seed, as the trainer draws it; its first example."""
    c = validate(cfg)
    x, y, scored = TASKS[c.task].make(torch.Generator().manual_seed(c.seed + 1_000_003), VAL_SIZE, c.length)
    return x[0], y[0], scored[0]


@pytest.mark.parametrize("task", sorted(TASKS))
@pytest.mark.parametrize("seed", [0, 7])
def test_the_probe_is_the_first_held_out_example(task, seed):
    cfg = LabConfig(task=task, seed=seed)
    for _ in range(2):  # made, then from the cache
        got, expected = probe(cfg), drawn_again(cfg)
        assert len(got) == 3
        for a, b in zip(got, expected, strict=True):
            assert a.dtype == b.dtype and torch.equal(a, b)


def test_a_copy_written_into_leaves_the_next_one_alone():
    cfg = LabConfig(task="reverse", seed=3)
    first = probe(cfg)
    kept = [part.clone() for part in first]
    for part in first:
        part.fill_(1)
    assert all(torch.equal(a, b) for a, b in zip(probe(cfg), kept, strict=True))


def test_other_seeds_and_lengths_give_other_examples():
    a, b = probe(LabConfig(task="reverse", seed=1))[0], probe(LabConfig(task="reverse", seed=2))[0]
    assert not torch.equal(a, b)
    short = probe(LabConfig(task="reverse", seed=1, length=6))[0]
    assert short.shape[0] != a.shape[0] or not torch.equal(short, a)
