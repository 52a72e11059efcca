"""A against B (``attn_core.pair`` and ``python -m attn_core compare``): the difference against two independent
traces, what can still be compared when the shapes disagree, the command's JSON keys and its refusals."""

import json
import math

import pytest
import torch
from cli_run import in_process

from attn_core import Settings, run_trace
from attn_core.pair import changed_most, diff, entropy, step_matrices, words

TEXT = "the animal did not cross the street because it was tired"


def _close(got, want) -> None:
    torch.testing.assert_close(torch.as_tensor(got, dtype=torch.float64), want.double(), rtol=1e-6, atol=1e-9)


def _entropy_oracle(attn: torch.Tensor) -> torch.Tensor:
    """Row entropies by a plain loop over the numbers: −Σ w log w, skipping zeros."""
    H, L, _ = attn.shape
    out = torch.zeros(H, L, dtype=torch.float64)
    for h in range(H):
        for q in range(L):
            out[h, q] = -sum(w * math.log(w) for w in attn[h, q].tolist() if w > 0)
    return out


def test_the_difference_is_two_independent_traces_subtracted():
    sa, sb = Settings(sentence=TEXT, heads=2), Settings(sentence=TEXT, heads=2, causal=True)
    a, b = run_trace(sa), run_trace(sb)
    d = diff(a, b)
    fresh_a, fresh_b = run_trace(sa), run_trace(sb)  # independent of the traces diff read
    assert d["shapes_agree"] is True
    assert len(d["weights"]) == 2
    _close(d["weights"], fresh_b.attn - fresh_a.attn)
    assert float(torch.as_tensor(d["weights"]).abs().max()) > 0.01  # the causal mask did change something
    _close(d["entropy"]["a"], _entropy_oracle(fresh_a.attn))
    _close(d["entropy"]["b"], _entropy_oracle(fresh_b.attn))
    _close(d["max_abs"]["b"], fresh_b.attn.amax(-1))
    assert d["entropy"]["b"][0][0] == pytest.approx(0.0, abs=1e-12)  # causal: the first query sees itself only


def test_shapes_that_disagree_give_null_weights_but_entropy_and_max_per_query():
    a = run_trace(Settings(sentence="the cat sat", heads=1))
    b = run_trace(Settings(sentence="the cat sat on the mat", heads=2))
    d = diff(a, b)
    assert d["shapes_agree"] is False and d["weights"] is None
    assert [len(d["entropy"]["a"]), len(d["entropy"]["a"][0])] == [1, 3]
    assert [len(d["entropy"]["b"]), len(d["entropy"]["b"][0])] == [2, 6]
    _close(d["entropy"]["b"], _entropy_oracle(b.attn))
    _close(d["max_abs"]["a"], a.attn.amax(-1))
    change = changed_most(a, b)
    assert not change.agree and change.query is None
    assert change.entropy_b == pytest.approx(float(_entropy_oracle(b.attn)[0].mean()), rel=1e-5, abs=1e-7)
    assert "different shapes" in words(change, "en") and "形状不同" in words(change, "zh")
    pair = step_matrices(a, b, "st_softmax")
    assert pair.diff is None and pair.a.shape == (3, 3) and pair.b.shape == (6, 6)


def test_what_changed_most_names_the_query_and_its_keys():
    sa, sb = Settings(sentence=TEXT, heads=1), Settings(sentence=TEXT, heads=1, temperature=0.25)
    a, b = run_trace(sa), run_trace(sb)
    c = changed_most(a, b)
    moved = (b.attn[0] - a.attn[0]).abs()  # the oracle: the row with the largest single move
    q = int(moved.amax(-1).argmax())
    assert c.query == q and c.moved == pytest.approx(float(moved[q].max()), rel=1e-5, abs=1e-7)
    assert c.key_a == int(a.attn[0, q].argmax()) and c.key_b == int(b.attn[0, q].argmax())
    assert c.weight_b == pytest.approx(float(b.attn[0, q].max()), rel=1e-6, abs=1e-9)
    assert c.entropy_b < c.entropy_a  # a lower temperature sharpens every row
    said = words(c, "en")
    assert f"'{TEXT.split()[q]}'" in said and "fell" in said
    assert "降到" in words(c, "zh")


def test_entropy_of_one_hot_and_uniform_rows():
    attn = torch.tensor([[[1.0, 0.0, 0.0, 0.0], [0.25, 0.25, 0.25, 0.25], [0.0, 0.0, 0.0, 0.0]]])
    torch.testing.assert_close(entropy(attn), torch.tensor([[0.0, math.log(4), 0.0]], dtype=torch.float64))


def test_step_matrices_share_one_colour_scale_and_subtract():
    a = run_trace(Settings(sentence=TEXT, heads=2))
    b = run_trace(Settings(sentence=TEXT, heads=2, seed=7))
    pair = step_matrices(a, b, "st_qkv", head=1)
    _close(pair.diff, b.Q[1] - a.Q[1])
    low, high = pair.bounds
    assert low == pytest.approx(float(min(a.Q[1].min(), b.Q[1].min())), rel=1e-6)
    assert high == pytest.approx(float(max(a.Q[1].max(), b.Q[1].max())), rel=1e-6)


def test_compare_json_holds_a_and_b_as_trace_prints_them_and_the_diff(capsys):
    flags_a, flags_b = ["--heads", "2"], ["--heads", "2", "--mask", "causal"]
    code, out, _ = in_process(capsys, ["compare", TEXT, "--a", " ".join(flags_a), "--b", " ".join(flags_b), "--json"])
    assert code == 0
    data = json.loads(out)
    assert set(data) == {"a", "b", "diff"}
    assert {"weights", "max_abs", "entropy"} <= set(data["diff"])
    assert set(data["diff"]["max_abs"]) == {"a", "b"} and set(data["diff"]["entropy"]) == {"a", "b"}
    for side, flags in (("a", flags_a), ("b", flags_b)):
        code, out, _ = in_process(capsys, ["trace", TEXT, *flags, "--json"])
        assert code == 0 and data[side] == json.loads(out), side
    wa = torch.tensor([h["weights"] for h in data["a"]["heads"]])
    wb = torch.tensor([h["weights"] for h in data["b"]["heads"]])
    _close(data["diff"]["weights"], wb - wa)


def test_compare_a_side_may_read_its_own_sentence(capsys):
    code, out, _ = in_process(capsys, ["compare", "a b c", "--b", "'a b c d e'", "--json"])
    assert code == 0
    data = json.loads(out)
    assert data["b"]["tokens"] == ["a", "b", "c", "d", "e"] and data["a"]["tokens"] == ["a", "b", "c"]
    assert data["diff"]["weights"] is None and len(data["diff"]["entropy"]["b"][0]) == 5


@pytest.mark.parametrize(
    "argv, start",
    [
        (["--a", "--bogus 3"], "error: --a: "),
        (["--b", "--heads"], "error: --b: "),
        (["--b", '"unclosed'], "error: --b: "),
        (["--a", "--json"], "error: --a: "),
        (["--a", "--help"], "error: --a: "),
        (["--b", "--heads 0"], "error: Side b: "),
        (["--a", "--heads 3 --d-model 8 --layout standard"], "error: Side a: "),
    ],
)
def test_a_bad_flag_is_refused_in_one_line(capsys, argv, start):
    code, out, err = in_process(capsys, ["compare", "the cat sat", *argv, "--json"])
    assert code == 2 and out == ""
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith(start), err  # the side at fault named first
