"""Each Lab preset's claim, checked on 5 seeds that are not the default and were not used to build
the presets (the seeds of ``benchmarks/lab_presets.py``, whose record the page quotes).

LONG: about 2 minutes on a quiet 2-core CPU (several times that under load). Each test runs the
smallest budget that shows its claim: a run that must reach 99 % gets fewer steps than its preset
(reaching it sooner is a stricter test), a run that must stay below a mark gets its preset's whole
budget (as long as the page gives it).
"""

from collections import Counter
from dataclasses import replace

import pytest
import torch

from attn_core import lab
from attn_core.lab import TASKS, preset, run

SEEDS = (101, 102, 103, 104, 105)
pytestmark = pytest.mark.usefixtures("one_thread")  # as the page's workers run it (tests/conftest.py)


def _bag_only_accuracy(L: int, n: int = 20000) -> float:
    """The best a model blind to positions can do on reverse: every position sees the same bag of
    tokens, so its best guess is the bag's most common token (an independent oracle)."""
    x, y, _ = TASKS["reverse"].make(torch.Generator().manual_seed(7), n, L)
    hits = 0
    for row, target in zip(x.tolist(), y.tolist()):
        mode = Counter(row).most_common(1)[0][0]
        hits += sum(t == mode for t in target)
    return hits / (n * L)


def test_positions_reverse_is_learned_with_positions_and_not_without():
    without, with_pos = preset("positions")
    limit = _bag_only_accuracy(8)
    for seed in SEEDS:
        a = run(replace(without, seed=seed))["final"]  # the whole budget: it must not get there
        b = run(replace(with_pos, seed=seed, steps=250))["final"]
        assert a["val_acc"] <= limit + 0.1 and a["steps_to_99"] is None, (seed, a["val_acc"], limit)
        assert b["val_acc"] >= 0.99, (seed, b["val_acc"])


def test_scaling_scaled_scores_reach_99_percent_before_unscaled_ones_at_d_k_512():
    unscaled, scaled = preset("scaling")
    for seed in SEEDS:
        fast = run(replace(scaled, seed=seed, steps=300))["final"]["steps_to_99"]
        assert fast is not None, seed
        slow = run(replace(unscaled, seed=seed, steps=fast))["final"]["steps_to_99"]
        assert slow is None or slow > fast, (seed, fast, slow)  # not there yet when B already is


def test_induction_one_layer_stays_below_60_percent_two_layers_reach_99_on_at_least_4_of_5():
    one, two = preset("induction")
    reached = 0
    for seed in SEEDS:
        a = run(replace(one, seed=seed))["final"]  # the preset's whole budget
        assert a["val_acc"] < 0.6, (seed, a["val_acc"])
        assert max(h["induction"] for h in a["scores"][0]) < 0.5  # no induction head in one layer
        b = run(replace(two, seed=seed, steps=250))["final"]
        if b["val_acc"] >= 0.99:
            reached += 1
            assert max(h["induction"] for h in b["scores"][1]) > 0.8, (seed, b["scores"])
            assert max(h["prev"] for h in b["scores"][0]) > 0.3, (seed, b["scores"])  # its previous-token head
            assert b["phase_change"] is not None and b["phase_change"] <= b["steps_to_99"]
    assert reached >= 4, reached


def test_heads_one_head_and_four_learn_sort_alike_and_the_four_differ_measurably():
    """Both reach 99 % held-out accuracy within 150 steps (the record: after 50-100), and no head of
    the four is a copy of the others (each at least 0.05 apart in total variation)."""
    one, four = preset("heads")
    for seed in SEEDS:
        a = run(replace(one, seed=seed, steps=150))["final"]
        b = run(replace(four, seed=seed, steps=150))["final"]
        assert a["steps_to_99"] is not None and b["steps_to_99"] is not None, (seed, a["val_acc"], b["val_acc"])
        apart = [h["apart"] for h in b["scores"][0]]
        assert len(apart) == 4 and all(x > 0.05 for x in apart), (seed, apart)  # not four copies of one head


def _sharpness(weights) -> float:
    """The mean over the probe's rows of each row's largest weight (1: one key per query)."""
    w = torch.tensor(weights[0])  # (H, L, L), first layer
    return float(w.max(-1).values.mean())


def test_linear_full_attention_solves_reverse_linear_attention_stays_below_with_a_blurrier_pattern():
    full, linear = preset("linear")
    for seed in SEEDS:
        a = run(replace(full, seed=seed, steps=250))
        b = run(replace(linear, seed=seed))  # the whole budget: it must not get there
        assert a["final"]["val_acc"] >= 0.99 and b["final"]["steps_to_99"] is None, seed
        assert b["final"]["val_acc"] < a["final"]["val_acc"]
        assert _sharpness(b["weights"]) < _sharpness(a["weights"]) - 0.1, seed


def test_the_presets_seeds_are_the_records():
    from explorer.lab import record as lab_record

    _, presets = lab_record.read()
    assert set(presets) == set(lab.PRESETS)
    assert all(tuple(p[side]["seeds"]) == SEEDS for p in presets.values() for side in "ab")
