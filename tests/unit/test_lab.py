"""The Attention Lab's engine: tasks, determinism, head scores, memory, bad settings, the command line.
The presets' claims over 5 seeds are in test_lab_presets.py."""

import json
from collections import Counter
from dataclasses import replace

import pytest
import torch
from tolerance import assert_close

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


def test_sort_reaches_99_percent_and_the_training_accuracy_follows():
    snaps = list(lab.train(LabConfig(task="sort")))
    assert snaps[-1].val_acc >= 0.99 and snaps[-1].train_acc >= 0.98
    assert snaps[0].train_acc < snaps[-1].train_acc  # measured on the training batches as they came


def test_repeat_needs_induction_no_fixed_offset_finds_the_answer():
    """The copy starts at a random place: the distance back to the answer varies from example to
    example, so a head looking a fixed number of places back cannot solve the task."""
    x, y, scored = TASKS["repeat"].make(torch.Generator().manual_seed(5), 400, 12)
    offsets = Counter()
    for b in range(400):
        ideal = TASKS["repeat"].ideal(x[b], 12)
        for t_ in scored[b].nonzero().flatten().tolist():
            offsets[t_ - int(ideal[t_].argmax())] += 1
    assert len(offsets) >= 4 and max(offsets.values()) < 0.4 * sum(offsets.values()), offsets
    for t_ in scored[0].nonzero().flatten().tolist():  # no fixed input position holds the answer either
        for j in range(t_ + 1):
            assert float((x[:, j] == y[:, t_]).float().mean()) < 0.4, (t_, j)


def test_the_two_layer_model_on_repeat_forms_an_induction_head():
    _, two = preset("induction")
    result = run(two)
    assert result["final"]["val_acc"] >= 0.99
    x, _, scored = lab.probe(two)
    ideal = TASKS["repeat"].ideal(x, len(x))
    second = torch.tensor(result["weights"][1]).mean(0)  # the second layer, heads averaged
    rows = scored.nonzero().flatten().tolist()
    assert all(int(second[t_].argmax()) == int(ideal[t_].argmax()) for t_ in rows), second.argmax(-1)
    assert float(second.triu(1).abs().max()) == 0.0  # causal: nothing after the query
    scores = result["final"]["scores"]
    assert max(h["induction"] for h in scores[1]) > 0.8 and max(h["prev"] for h in scores[0]) > 0.3
    assert result["final"]["phase_change"] is not None


def _tl_score(a: torch.Tensor, pattern: torch.Tensor) -> float:
    """TransformerLens's ``mul`` score written out with loops, over the rows the pattern has a key for."""
    num = den = 0.0
    for t_ in range(a.shape[0]):
        if any(pattern[t_, j] > 0 for j in range(a.shape[1])):
            for j in range(a.shape[1]):
                num += float(a[t_, j] * pattern[t_, j])
                den += float(a[t_, j])
    return num / den


def test_head_scores_are_the_head_detectors_and_find_the_heads_they_name():
    x = torch.tensor([[3, 5, 7, 2, 5, 7, 2, 9]])
    L = 8
    prev = torch.zeros(L, L)
    prev[0, 0] = 1.0
    for t_ in range(1, L):
        prev[t_, t_ - 1] = 1.0  # a perfect previous-token head
    induction = torch.zeros(L, L)
    for t_ in range(L):
        earlier = [j for j in range(t_ - 1) if int(x[0, j]) == int(x[0, t_])]
        if earlier:
            induction[t_, earlier[0] + 1] = 1.0  # the token after the earlier occurrence
        else:
            induction[t_, t_] = 1.0
    uniform = torch.tril(torch.ones(L, L))
    uniform = uniform / uniform.sum(-1, keepdim=True)
    w = torch.stack([prev, induction, uniform]).unsqueeze(0)  # (1, 3 heads, L, L)
    got = lab.head_scores([w], x)[0]
    assert got[0]["prev"] == pytest.approx(1.0) and got[1]["induction"] == pytest.approx(1.0)
    assert got[0]["induction"] < 0.5 and got[1]["prev"] < 0.5
    patterns = lab.detection_patterns(x)
    expected = {("prev", h): _tl_score(w[0, h], patterns["prev"][0]) for h in range(3)}
    expected |= {("induction", h): _tl_score(w[0, h], patterns["induction"][0]) for h in range(3)}
    for (name, h), value in expected.items():
        assert got[h][name] == pytest.approx(value), (name, h)
    # the detector's own pattern, by hand: query 4 (a 5, seen at 1) on key 2; 5 (a 7) on 3; 6 (a 2) on 4
    assert patterns["induction"][0].nonzero().tolist() == [[4, 2], [5, 3], [6, 4]]
    apart = [got[h]["apart"] for h in range(3)]
    assert all(0.0 < a <= 1.0 for a in apart)
    same = lab.head_scores([torch.stack([uniform, uniform]).unsqueeze(0)], x)[0]
    assert same[0]["apart"] == pytest.approx(0.0, abs=1e-6, rel=1e-5)  # identical heads are 0 apart


def test_the_first_token_score_is_the_mean_weight_on_key_0_of_the_queries_after_it():
    """The sink score by hand: a head that puts everything on key 0 scores 1, a previous-token head 1/(L-1) (only
    query 1's previous key is key 0), a causal uniform head the mean of 1/(t+1) over t >= 1; sigmoid-style rows
    that do not sum to 1 score their weight on key 0 over their own total."""
    x = torch.tensor([[3, 5, 7, 2, 5, 7, 2, 9]])
    L = 8
    sink = torch.zeros(L, L)
    sink[:, 0] = 1.0
    prev = torch.diag(torch.ones(L - 1), -1)
    prev[0, 0] = 1.0
    uniform = torch.tril(torch.ones(L, L))
    uniform = uniform / uniform.sum(-1, keepdim=True)
    unnormalised = torch.tril(torch.full((L, L), 0.1))
    unnormalised[1:, 0] = 0.4  # rows t >= 1: 0.4 on key 0 of 0.4 + 0.1 t in all
    w = torch.stack([sink, prev, uniform, unnormalised]).unsqueeze(0)
    got = [h["first"] for h in lab.head_scores([w], x)[0]]
    want_uniform = sum(1 / (t + 1) for t in range(1, L)) / (L - 1)
    want_unnormalised = 0.4 * (L - 1) / sum(0.4 + 0.1 * t for t in range(1, L))  # sum(A * P) / sum(A) over rows
    assert got == pytest.approx([1.0, 1 / (L - 1), want_uniform, want_unnormalised], rel=1e-6)


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

    monkeypatch.setattr(lab.training, "_loss", blows_up)  # where train() reads it
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
    assert set(out["curve"][0]) == {"step", "train_loss", "val_loss", "val_acc", "scores"}
    assert set(out["final"]) >= {"val_acc", "val_loss", "steps_to_99", "phase_change", "scores"}
    scores = out["final"]["scores"]  # per layer, per head: the head detector's scores, on 0..1
    assert len(scores) == 1 and len(scores[0]) == 2 and set(scores[0][0]) == {"prev", "induction", "first", "apart"}
    assert all(0.0 <= v <= 1.0 for h in scores[0] for v in h.values()) and scores == out["curve"][-1]["scores"]
    assert len(out["probe"]["input"]) == 8 and len(out["weights"]) == 1 and len(out["weights"][0]) == 2
    assert main(["train", "--lr", "nan"]) == 2 and "learning rate" in capsys.readouterr().err
    assert main(["train", "--task", "sort", "--steps", "10", "--every", "5", "--jsonl"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [x["step"] for x in lines] == [5, 10] and lines[-1]["status"] == "done"


@pytest.mark.parametrize("name", list(TASKS))
def test_every_length_a_task_accepts_it_can_build_and_the_next_one_is_refused(name):
    task = TASKS[name]
    low, high = max(2, task.low), min(32, task.high)
    g = torch.Generator().manual_seed(1)
    for L in range(low, high + 1):
        cfg = lab.validate(LabConfig(task=name, length=L))
        x, _, scored = task.make(g, 3, L)
        assert x.shape == (3, L) and bool(scored.any()), (name, L)
        assert lab.ideal(cfg).shape == (L, L)
    for bad in (low - 1, high + 1):
        if bad >= 1:
            with pytest.raises(AttentionConfigError) as err:
                lab.validate(LabConfig(task=name, length=bad))
            assert err.value.field == "length" and err.value.code == "out_of_range"


def test_recall_at_the_linked_lengths_is_refused_with_its_range():
    for L in (19, 32):
        with pytest.raises(AttentionConfigError) as err:
            lab.validate(LabConfig(task="recall", length=L))
        assert "5..17" in str(err.value)


def test_dropout_up_to_the_sidebars_maximum_trains_and_beyond_says_the_real_limit():
    result = run(LabConfig(task="shift", dropout=0.9, steps=20, every=10))
    assert result["config"]["dropout"] == 0.9 and result["final"]["status"] == "done"
    with pytest.raises(AttentionConfigError) as err:
        lab.validate(LabConfig(dropout=0.95))
    assert err.value.code == "lab_dropout" and "0 to 0.9" in str(err.value)


MEMORY_CASES = [
    LabConfig(),
    LabConfig(task="sort", heads=4, d_k=8, d_v=8),
    LabConfig(task="shift", batch=256, heads=4, d_model=64, length=32),
    LabConfig(task="shift", score="additive", heads=2, d_k=32, length=16),
    LabConfig(kernel="linear_elu", batch=128, length=32),
    LabConfig(task="repeat", pos="rope", layers=2, batch=128, length=24),
]


@pytest.mark.parametrize("cfg", MEMORY_CASES, ids=range(len(MEMORY_CASES)))
def test_the_memory_estimate_covers_the_measured_peak_and_is_not_far_above_it(cfg):
    from attn_core.bench import peak_bytes_cpu

    c = lab.validate(cfg)
    torch.manual_seed(0)
    model = lab.LabModel(c)
    assert sum(p.numel() for p in model.parameters()) == lab.parameter_count(c)
    opt = torch.optim.AdamW(model.parameters())
    task, g = TASKS[c.task], torch.Generator().manual_seed(0)

    def step():
        x, y, scored = task.make(g, c.batch, c.length)
        logits, _ = model(x)
        loss = lab._loss(logits, y, scored)
        opt.zero_grad()
        loss.backward()
        opt.step()

    step()  # AdamW's moments exist from here on, as in training
    xv, _, _ = task.make(g, lab.VAL_SIZE, c.length)

    def held_out():
        model.eval()
        with torch.no_grad():
            return model(xv)

    measured = max(peak_bytes_cpu(step), peak_bytes_cpu(held_out))
    estimate = lab.estimate_bytes(c)
    assert measured <= estimate <= 5 * measured, (measured / 2**20, estimate / 2**20)


def test_settings_over_the_memory_bound_are_refused_with_the_estimate():
    huge = LabConfig(score="additive", heads=8, d_model=256, d_k=512, d_v=256, length=32, batch=512, layers=2)
    with pytest.raises(AttentionConfigError) as err:
        lab.check_memory(huge)
    assert err.value.code == "lab_memory_additive" and err.value.params["need"] > 10_000  # ~100 GiB
    assert "256 MiB" in str(err.value) and "smaller batch" in str(err.value)
    assert lab.check_memory(LabConfig()) < lab.MAX_BYTES


def test_the_cli_reproduces_a_presets_side_and_refuses_unknown_ones(capsys):
    assert main(["train", "--preset", "induction", "--side", "b", "--seed", "7", "--steps", "20", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    expected = replace(preset("induction")[1], seed=7, steps=20)
    assert out["config"] == lab.validate(expected).to_dict()
    assert out["curve"] == run(expected)["curve"]  # the same run as the page's B
    for argv, words in (
        (["--preset", "nope"], ["positions", "scaling", "induction", "heads", "linear"]),
        (["--preset", "heads", "--side", "c"], ["'a'", "'b'"]),
    ):
        with pytest.raises(SystemExit) as stop:  # argparse's refusal: one line, status 2
            main(["train", *argv])
        assert stop.value.code == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and all(w in err for w in words), err
    assert main(["train", "--side", "b"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "positions, scaling, induction, heads, linear" in err, err


def _cli(args: list[str], limit_bytes: int | None = None):
    import os
    import resource
    import subprocess
    import sys

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return subprocess.run(
        [sys.executable, "-m", "attn_core", *args],
        check=False,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=limit if limit_bytes else None,
    )


@pytest.mark.parametrize(
    "args,limit,words",
    [
        (["train", "--task", "recall", "--length", "19", "--json"], None, ["length = 19", "5 and 17"]),
        (
            ["train", "--score", "additive", "--heads", "8", "--d-model", "256", "--d-k", "512", "--d-v", "256"]
            + ["--length", "32", "--batch", "512", "--layers", "2"],
            3 * 2**30,
            ["would need about", "MiB", "smaller batch"],
        ),
        (  # past the estimate's bound on purpose: the allocator itself refuses, still one line
            ["train", "--score", "additive", "--heads", "8", "--d-k", "64", "--batch", "512", "--length", "32"]
            + ["--steps", "2", "--max-mib", "100000"],
            int(2.5 * 2**30),
            ["ran out of memory", "about", "smaller batch"],
        ),
    ],
    ids=["recall-19", "largest-settings", "allocator-refuses"],
)
def test_the_cli_answers_bad_and_huge_settings_in_one_line(args, limit, words):
    done = _cli(args, limit)
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr, done.stderr
    assert all(w in done.stderr for w in words), done.stderr


def test_bench_at_a_huge_length_under_a_small_address_space_says_what_it_needs():
    done = _cli(["bench", "--kernels", "linear_elu", "--lengths", "1048576"], 3 * 2**30)
    assert "Traceback" not in done.stderr, done.stderr[-500:]
    rows = [line for line in done.stdout.splitlines() if line.startswith("linear_elu")]
    assert len(rows) == 1 and "skipped: needs ~" in rows[0] and "budget" in rows[0], done.stdout


def test_the_fields_shared_with_the_traces_settings_are_the_shared_table():
    """lab.SHARED names every field LabConfig has in common with config.Settings (the Lab page reads
    them from the sidebar), each with the same type."""
    from dataclasses import fields

    from attn_core.config import Settings

    mine = {f.name: f.type for f in fields(LabConfig)}
    theirs = {f.name: f.type for f in fields(Settings)}
    assert set(mine) & set(theirs) == set(lab.SHARED) and len(lab.SHARED) == 12
    assert {n: mine[n] for n in lab.SHARED} == {n: theirs[n] for n in lab.SHARED}


def test_the_query_key_maps_are_those_of_the_queries_and_keys_that_give_the_models_weights():
    """queries_keys on a seeded model: each head's map is qk_map of the Q, K and scaled scores the layer attends with,
    and those scores, masked and softmaxed, are the weights the forward pass returns (computed apart, with the
    whole batch); the scores are Q Kᵀ / sqrt(d_k) with sinusoidal positions. Snapshots carry the maps, two points a
    token; a kernel without a softmax carries none."""
    from attn_core.lab.model import LabModel
    from attn_core.lab.training import probe, queries_keys, train
    from attn_core.why import qk_map

    cfg = lab.validate(LabConfig(task="repeat", layers=2, heads=2, steps=50, every=25, seed=4))
    torch.manual_seed(4)
    model = LabModel(cfg).eval()
    x = probe(cfg)[0]
    maps = queries_keys(model, x)
    _, forward = model(x[None])
    for layer, a in enumerate(model.attended(x[None])):
        assert_close(a.scaled[0], a.Q[0] @ a.K[0].transpose(-2, -1) / cfg.d_k**0.5, rtol=1e-5, atol=1e-6)
        masked = a.scaled[0].masked_fill(~a.mask, float("-inf"))
        assert_close(torch.softmax(masked, -1), forward[layer][0], rtol=1e-5, atol=1e-6)
        assert not a.mask[0, 1]  # the task is causal: the first query does not see the second key
        for h in range(2):
            want = qk_map(a.Q[0, h], a.K[0, h], a.scaled[0, h], a.mask)
            got = maps[layer][h]
            assert_close(torch.tensor(got["queries"]), want.queries, rtol=1e-5, atol=1e-6)
            assert_close(torch.tensor(got["keys"]), want.keys, rtol=1e-5, atol=1e-6)
            assert got["correlation"] == pytest.approx(want.correlation) and got["d"] == cfg.d_k
            for side, m in (("q_norm", a.Q[0, h]), ("k_norm", a.K[0, h])):  # colour by norm: before the map's scaling
                written = torch.tensor([sum(v * v for v in row) ** 0.5 for row in m.double().tolist()])
                assert_close(torch.tensor(got[side], dtype=torch.float64), written, rtol=1e-5, atol=1e-6)
    snaps = list(train(cfg))
    assert [s.step for s in snaps] == [25, 50]
    assert all(len(s.qk) == 2 and all(len(h["queries"]) == 12 == len(h["keys"]) for h in s.qk[0]) for s in snaps)
    sig = list(train(LabConfig(task="repeat", kernel="sigmoid", steps=25, every=25)))
    assert sig[-1].qk == [] and sig[-1].weights


@pytest.mark.parametrize("name", ["scaling", "heads"])
def test_the_multi_tensor_optimizer_trains_as_the_per_parameter_one(monkeypatch, name):
    """AdamW with ``foreach`` (the Lab's, for speed) follows the same run as torch's per-parameter loop."""
    from attn_core.lab import training

    adamw = torch.optim.AdamW
    for cfg in preset(name):
        cfg = replace(cfg, steps=60, every=20)
        fast = list(training.train(cfg))
        monkeypatch.setattr(torch.optim, "AdamW", lambda *a, **k: adamw(*a, **{**k, "foreach": False}))
        plain = list(training.train(cfg))
        monkeypatch.setattr(torch.optim, "AdamW", adamw)
        assert [s.step for s in fast] == [s.step for s in plain] == [20, 40, 60]
        for a, b in zip(fast, plain, strict=True):
            got, want = ([s.train_loss, s.val_loss, s.grad_qk] for s in (a, b))
            # another CPU may round the two paths' last bits apart, and 60 steps may grow that: rtol 1e-4 still
            # fails a run whose learning rate is 5 % off (0.0032 apart at step 20)
            assert_close(torch.tensor(got), torch.tensor(want), rtol=1e-4, atol=1e-5, msg=(name, a.step))
            assert a.val_acc == pytest.approx(b.val_acc, abs=1 / 64)
