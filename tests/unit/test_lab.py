"""The Attention Lab's engine: tasks, determinism, the claims its presets make (measured), bad settings."""

import json
from collections import Counter
from dataclasses import replace

import pytest
import torch

from attn_core import lab
from attn_core.cli import main
from attn_core.errors import AttentionConfigError
from attn_core.lab import TASKS, LabConfig, preset, run


@pytest.fixture(autouse=True)
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)  # as the CLI and the page run it
    yield
    torch.set_num_threads(before)


def test_every_tasks_ideal_pattern_solves_it():
    """Reading the values the ideal pattern points at gives the target, at every scored position."""
    g = torch.Generator().manual_seed(0)
    for task in TASKS.values():
        x, y, scored = task.make(g, 20, task.length)
        for b in range(20):
            ideal = task.ideal(x[b], task.length)
            rows = scored[b].nonzero().flatten()
            assert torch.allclose(ideal[rows].sum(-1), torch.ones(len(rows))), task.name
            one_hot = torch.nn.functional.one_hot(x[b], task.vocab).float()
            read = (ideal @ one_hot).argmax(-1)
            assert torch.equal(read[rows], y[b][rows]), task.name


def test_the_same_seed_gives_the_same_run_and_another_seed_another():
    cfg = LabConfig(task="shift", steps=60, every=20)
    a, b = run(cfg), run(cfg)
    assert a["curve"] == b["curve"] and a["weights"] == b["weights"]
    assert run(replace(cfg, seed=1))["curve"] != a["curve"]


def _bag_only_accuracy(task, L, n=20000) -> float:
    """The best any model blind to positions can do on reverse: every position sees the same bag
    of tokens (and its own), so the best guess at every position is the bag's most common token."""
    x, y, _ = task.make(torch.Generator().manual_seed(7), n, L)
    hits = 0
    for row, target in zip(x.tolist(), y.tolist()):
        mode = Counter(row).most_common(1)[0][0]
        hits += sum(t == mode for t in target)
    return hits / (n * L)


def test_reverse_is_learned_with_positions_and_not_without():
    without, with_pos = preset("positions")
    a, b = run(without), run(with_pos)
    assert b["final"]["val_acc"] >= 0.99 and b["final"]["steps_to_99"] is not None
    limit = _bag_only_accuracy(TASKS["reverse"], 8)
    assert a["final"]["val_acc"] <= limit + 0.1 and a["final"]["steps_to_99"] is None  # stuck near the blind limit


def test_sort_reaches_99_percent_and_the_training_accuracy_follows():
    snaps = list(lab.train(LabConfig(task="sort")))
    assert snaps[-1].val_acc >= 0.99 and snaps[-1].train_acc >= 0.98
    assert snaps[0].train_acc < snaps[-1].train_acc  # measured on the training batches as they came


def test_scaled_scores_learn_faster_than_unscaled_at_a_large_d_k_on_three_seeds():
    unscaled, scaled = preset("scaling")
    for seed in (0, 1, 2):
        slow = run(replace(unscaled, seed=seed))["final"]["steps_to_99"]
        fast = run(replace(scaled, seed=seed))["final"]["steps_to_99"]
        assert fast is not None and (slow is None or fast < slow), (seed, fast, slow)


def test_a_causal_model_on_repeat_looks_at_the_token_after_the_earlier_occurrence():
    cfg, _ = preset("induction")
    result = run(cfg)
    assert result["final"]["val_acc"] >= 0.99
    w = torch.tensor(result["weights"][0]).mean(0)  # (L, L), the heads averaged
    L = w.shape[0]
    half = L // 2
    targets = {t: t - half + 1 for t in range(half, 2 * half - 1)}
    assert all(int(w[t].argmax()) == j for t, j in targets.items()), w.argmax(-1)
    assert float(w.triu(1).abs().max()) == 0.0  # causal: nothing after the query


def test_alibi_biases_the_sliding_windows_softmax_and_trains():
    result = run(LabConfig(task="shift", kernel="sliding_window", window=1, pos="alibi", steps=150))
    w = torch.tensor(result["weights"][0][0])
    band = lab.masks.build_mask("sliding_window", 8, 8, window=1)
    assert float(w[~band].abs().max()) == 0.0 and result["final"]["val_acc"] > 0.5  # chance is 0.1


def test_a_variants_pattern_holds_in_training():
    result = run(LabConfig(task="shift", kernel="sliding_window", window=1, steps=100))
    w = torch.tensor(result["weights"][0][0])
    band = lab.masks.build_mask("sliding_window", 8, 8, window=1)
    assert float(w[~band].abs().max()) == 0.0 and result["final"]["val_acc"] > 0.5


@pytest.mark.parametrize(
    "changes,field,code",
    [
        ({"lr": 0.0}, "lr", "lab_lr"),
        ({"lr": -1.0}, "lr", "lab_lr"),
        ({"lr": float("nan")}, "lr", "lab_lr"),
        ({"lr": 1e6}, "lr", "lab_lr"),
        ({"batch": 0}, "batch", "out_of_range"),
        ({"steps": -5}, "steps", "out_of_range"),
        ({"length": 1}, "length", "out_of_range"),
        ({"length": 1000}, "length", "out_of_range"),
        ({"task": "repeat", "kernel": "linear_elu"}, "kernel", "lab_causal_kernel"),
        ({"pos": "rope", "d_k": 7}, "d_k", "lab_rope_even"),
        ({"pos": "alibi", "kernel": "linear_elu"}, "pos", "lab_alibi_kernel"),
        ({"score": "additive", "kernel": "linear_elu"}, "kernel", "dot_kernel"),
        ({"task": "nope"}, "task", "unknown_choice"),
    ],
)
def test_bad_settings_name_the_setting_and_the_fix(changes, field, code):
    with pytest.raises(AttentionConfigError) as err:
        lab.validate(LabConfig(**changes))
    assert err.value.field == field and err.value.code == code


def test_a_diverging_run_stops_and_says_so(monkeypatch, capsys):
    real = lab._loss
    calls = {"n": 0}

    def blows_up(*args):
        calls["n"] += 1
        loss = real(*args)
        return loss * float("nan") if calls["n"] >= 5 else loss

    monkeypatch.setattr(lab, "_loss", blows_up)
    snaps = list(lab.train(LabConfig(steps=50, every=100)))  # no evaluation before step 50: training calls only
    assert [(s.step, s.status) for s in snaps] == [(5, "diverged")]
    calls["n"] = 0
    result = run(LabConfig(steps=50, every=100))
    assert result["final"]["status"] == "diverged" and result["final"]["val_acc"] is None
    assert result["curve"] == [] and result["weights"] == []  # nothing NaN is reported
    calls["n"] = 0
    assert main(["train", "--steps", "50", "--every", "100"]) == 1
    assert "diverged at step 5" in capsys.readouterr().err


def test_the_cli_prints_the_run_with_the_contract_keys(capsys):
    args = ["train", "--task", "reverse", "--heads", "2", "--pos", "sinusoidal", "--steps", "40", "--seed", "0"]
    assert main([*args, "--every", "20", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"config", "curve", "final", "probe", "weights"}
    assert out["config"]["heads"] == 2 and out["config"]["pos"] == "sinusoidal" and out["config"]["steps"] == 40
    assert [p["step"] for p in out["curve"]] == [20, 40]
    assert set(out["curve"][0]) == {"step", "train_loss", "val_loss", "val_acc"}
    assert set(out["final"]) >= {"val_acc", "val_loss", "steps_to_99"}
    assert len(out["probe"]["input"]) == 8 and len(out["weights"]) == 1 and len(out["weights"][0]) == 2
    assert main(["train", "--lr", "nan"]) == 2 and "learning rate" in capsys.readouterr().err
    assert main(["train", "--task", "sort", "--steps", "10", "--every", "5", "--jsonl"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [x["step"] for x in lines] == [5, 10] and lines[-1]["status"] == "done"
