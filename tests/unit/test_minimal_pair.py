"""Minimal pairs (attn_core.interpret.minimal_pair) against independent computations: the alignment written out by
hand for sentences whose tokenizations differ (MiniLM's WordPiece splits, a byte-level BPE's), what moved recomputed
in numpy from transformers' own ``output_attentions`` on each sentence alone, the next-token gap and each head's
ablation recomputed from transformers' own logits, the head removed from a copy of the weights (no hook of ours
involved), the JS divergence as scipy computes it. Tiny random GPT-2 and Llama-style decoders (nexttoken_tiny)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy.spatial.distance import jensenshannon
from tolerance import assert_close

from attn_core import heavy as worker
from attn_core import models
from attn_core.cli import main
from attn_core.errors import AttentionConfigError
from attn_core.interpret import minimal_pair as mp

TINY = Path(__file__).resolve().parent / "nexttoken_tiny.py"
TIRED = "The animal didn't cross the street because it was too tired."
WIDE = "The animal didn't cross the street because it was too wide."


def _tiny_module():
    spec = importlib.util.spec_from_file_location("nexttoken_tiny", TINY)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


TINY_MODULE = _tiny_module()


@pytest.fixture(scope="module")
def minilm():
    return models.load()


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def tiny(request, tmp_path_factory):
    return models.load(TINY_MODULE.build(request.param, tmp_path_factory.mktemp("minimal_pair")))


# --- the alignment ----------------------------------------------------------------------------------------------


def test_alignment_by_hand():
    a = ["[CLS]", "the", "cat", "sat", "[SEP]"]
    b = ["[CLS]", "the", "cat", "##ama", "##ran", "sat", "[SEP]"]
    al = mp.align(a, b)
    assert al.shared == ((0, 0), (1, 1), (2, 2), (3, 5), (4, 6))
    assert al.changed_a == () and al.changed_b == (3, 4)
    assert al.blocks == (("insert", 3, 3, 3, 5),)
    assert [(r["a"], r["b"], r["shared"]) for r in al.merged()] == [
        (0, 0, True),
        (1, 1, True),
        (2, 2, True),
        (None, 3, False),
        (None, 4, False),
        (3, 5, True),
        (4, 6, True),
    ]
    al = mp.align(["x", "too", "t", "ired", "."], ["x", "too", "w", "ide", "ly", "."])
    assert al.shared == ((0, 0), (1, 1), (4, 5)) and al.blocks == (("replace", 2, 4, 2, 5),)
    assert [(r["a"], r["b"]) for r in al.merged()][2:5] == [(2, 2), (3, 3), (None, 4)]


def _check_invariants(r: dict) -> None:
    """Shared tokens are the same token, in order on both sides; shared and changed cover each side once."""
    ia, ib = [i for i, _ in r["shared"]], [j for _, j in r["shared"]]
    assert ia == sorted(set(ia)) and ib == sorted(set(ib))
    assert all(r["a"]["ids"][i] == r["b"]["ids"][j] for i, j in r["shared"])
    assert sorted(ia + r["changed_a"]) == list(range(len(r["a"]["ids"])))
    assert sorted(ib + r["changed_b"]) == list(range(len(r["b"]["ids"])))


# (A, B, A's pieces, B's pieces, shared by hand, default query rows (A, B) by hand)
MINILM_CASES = [
    (
        TIRED,
        WIDE,
        None,
        None,
        [(i, i) for i in range(16) if i != 13],
        ([13], [13]),
    ),
    (  # one word against two pieces: a replace of different lengths
        "The cat sat on the mat.",
        "The pangolin sat on the mat.",
        ["[CLS]", "the", "cat", "sat", "on", "the", "mat", ".", "[SEP]"],
        ["[CLS]", "the", "pang", "##olin", "sat", "on", "the", "mat", ".", "[SEP]"],
        [(0, 0), (1, 1)] + [(i, i + 1) for i in range(3, 9)],
        ([2], [2, 3]),
    ),
    (  # pieces only inserted: an encoder's default query is the shared word after them
        "The cat sat on the mat.",
        "The catamaran sat on the mat.",
        ["[CLS]", "the", "cat", "sat", "on", "the", "mat", ".", "[SEP]"],
        ["[CLS]", "the", "cat", "##ama", "##ran", "sat", "on", "the", "mat", ".", "[SEP]"],
        [(0, 0), (1, 1), (2, 2)] + [(i, i + 2) for i in range(3, 9)],
        ([3], [5]),
    ),
]


def _own_attentions(hf, ids: list[int]) -> np.ndarray:
    with torch.no_grad():
        out = hf(input_ids=torch.tensor([ids]), output_attentions=True)
    return torch.stack(out.attentions)[:, 0].double().numpy()  # (layers, H, L, L)


def _moved_by_hand(A: np.ndarray, B: np.ndarray, rows_a, rows_b, shared) -> np.ndarray:
    """Total variation, one head at a time in loops: the query's mean row on the shared keys, plus the rest."""
    layers, heads = A.shape[:2]
    out = np.zeros((layers, heads))
    for layer in range(layers):
        for head in range(heads):
            a = np.mean([A[layer, head, r] for r in rows_a], axis=0)
            b = np.mean([B[layer, head, r] for r in rows_b], axis=0)
            diff = sum(abs(b[j] - a[i]) for i, j in shared)
            rest_a = 1.0 - sum(a[i] for i, _ in shared)
            rest_b = 1.0 - sum(b[j] for _, j in shared)
            out[layer, head] = 0.5 * (diff + abs(rest_b - rest_a))
    return out


@pytest.mark.parametrize("case", range(len(MINILM_CASES)))
def test_minilm_pair_against_transformers_own_attentions(minilm, case):
    a, b, pieces_a, pieces_b, shared, (rows_a, rows_b) = MINILM_CASES[case]
    r = mp.minimal_pair(minilm, a, b)
    if pieces_a is not None:
        assert r["a"]["labels"] == pieces_a and r["b"]["labels"] == pieces_b
    assert [tuple(p) for p in r["shared"]] == shared
    _check_invariants(r)
    q = r["queries"][r["query"]]
    assert (q["a"], q["b"]) == (rows_a, rows_b)
    A, B = _own_attentions(minilm.hf, r["a"]["ids"]), _own_attentions(minilm.hf, r["b"]["ids"])
    assert_close(np.array(r["attention_a"]), A)
    assert_close(np.array(r["attention_b"]), B)
    want = _moved_by_hand(A, B, rows_a, rows_b, shared)
    assert_close(np.array(q["moved"]), want)
    ranked = [(c["layer"], c["head"]) for c in r["ranking"]]
    assert len(ranked) == minilm.layers * minilm.heads == len(set(ranked))
    top = np.unravel_index(np.argmax(want), want.shape)
    assert ranked[0] == tuple(int(x) for x in top)
    moved = [c["moved"] for c in r["ranking"]]
    assert moved == sorted(moved, reverse=True) and 0.0 <= moved[-1] and moved[0] <= 1.0
    assert r["next_token"] is None


def test_every_query_is_measured_the_same_way(minilm):
    r = mp.minimal_pair(minilm, TIRED, WIDE)
    A, B = np.array(r["attention_a"]), np.array(r["attention_b"])
    kinds = [q["kind"] for q in r["queries"]]
    assert kinds == ["changed"] + ["shared"] * len(r["shared"]) + ["last"]
    for q in r["queries"][::4]:
        assert_close(np.array(q["moved"]), _moved_by_hand(A, B, q["a"], q["b"], r["shared"]))


def test_head_view_is_the_maps_sliced(minilm):
    r = mp.minimal_pair(minilm, "The cat sat on the mat.", "The pangolin sat on the mat.")
    v = mp.head_view(r, 2, 5)
    A, B = np.array(r["attention_a"][2][5]), np.array(r["attention_b"][2][5])
    ia, jb = [i for i, _ in r["shared"]], [j for _, j in r["shared"]]
    assert_close(np.array(v["a_shared"]), A[np.ix_(ia, ia)])
    assert_close(np.array(v["diff"]), B[np.ix_(jb, jb)] - A[np.ix_(ia, ia)])
    assert v["labels"] == [r["a"]["labels"][i] for i in ia] == [r["b"]["labels"][j] for j in jb]
    assert v["moved"] == [q["moved"][2][5] for q in r["queries"]]
    with pytest.raises(AttentionConfigError):
        mp.head_view(r, 6, 0)


def test_a_packed_pair_of_the_longest_sentences_is_small_and_reads_the_same(minilm):
    from explorer.base.cache import nbytes

    a = " ".join(["the", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog", "and", "then"] * 5)
    a = minilm.tokenizer.convert_tokens_to_string(minilm.tokenizer.tokenize(a)[: mp.MAX_PIECES - 2])
    b = a.replace("fox", "cat", 1)
    plain, packed = mp.minimal_pair(minilm, a, b), mp.minimal_pair(minilm, a, b, packed=True)
    assert len(plain["a"]["ids"]) == mp.MAX_PIECES  # the longest a side may be
    for layer, head in ((0, 0), (3, 7), (5, 11)):
        assert mp.head_view(packed, layer, head) == mp.head_view(plain, layer, head)
    assert nbytes(packed) < 2.5e6 and nbytes(plain) > 8e6  # what a job keeps in the shared cache
    assert len(json.dumps(packed)) < len(json.dumps(plain)) / 3  # what the worker's line carries


# --- decoders ---------------------------------------------------------------------------------------------------


def test_decoder_pair_alignment_and_moved(tiny):
    """Byte-level BPE: ' cat' is one token, ' dog' two (' ', 'dog') in the tiny tokenizer."""
    a, b = "the cat sat on the mat", "the dog sat on the mat"
    r = mp.minimal_pair(tiny, a, b)
    assert r["a"]["labels"] == ["the", "␣cat", "␣sat", "␣on", "␣the", "␣", "mat"]
    assert r["b"]["labels"] == ["the", "␣", "dog", "␣sat", "␣on", "␣the", "␣", "mat"]
    shared = [(0, 0)] + [(i, i + 1) for i in range(2, 7)]
    assert [tuple(p) for p in r["shared"]] == shared
    _check_invariants(r)
    q = r["queries"][r["query"]]
    assert (q["kind"], q["a"], q["b"]) == ("changed", [1], [1, 2])
    A, B = _own_attentions(tiny.hf, r["a"]["ids"]), _own_attentions(tiny.hf, r["b"]["ids"])
    assert_close(np.array(q["moved"]), _moved_by_hand(A, B, [1], [1, 2], shared))
    last = r["queries"][-1]
    assert (last["kind"], last["a"], last["b"]) == ("last", [6], [7])


def _next_probs(hf, ids: list[int]) -> np.ndarray:
    with torch.no_grad():
        logits = hf(input_ids=torch.tensor([ids])).logits[0, -1].double()
    return torch.softmax(logits, -1).numpy()


def _js(p: np.ndarray, q: np.ndarray) -> float:
    return float(jensenshannon(p, q, base=2) ** 2)


def test_next_token_and_ablation_gap_against_transformers(tiny):
    a, b = "the cat sat on the mat", "once upon a time there was a small cat"
    r = mp.minimal_pair(tiny, a, b, top_k=5)
    pa, pb = _next_probs(tiny.hf, r["a"]["ids"]), _next_probs(tiny.hf, r["b"]["ids"])
    nt = r["next_token"]
    assert_close(nt["gap"], _js(pa, pb))
    assert nt["top_a"]["id"] == int(pa.argmax()) and nt["top_b"]["id"] == int(pb.argmax())
    want_ids = set(np.argsort(-pa)[:5].tolist()) | set(np.argsort(-pb)[:5].tolist())
    assert {t["id"] for t in nt["tokens"]} == want_ids
    for t in nt["tokens"]:
        assert_close([t["a"], t["b"]], [pa[t["id"]], pb[t["id"]]])
        assert t["label"] == models.token_label(tiny.tokenizer, t["id"])
    g = mp.ablation_gap(tiny, a, b)
    assert_close(g["gap"], nt["gap"])
    want = np.zeros((tiny.layers, tiny.heads))
    for layer in range(tiny.layers):
        for head in range(tiny.heads):
            hf = TINY_MODULE.without_head(tiny, layer, head)
            want[layer, head] = _js(_next_probs(hf, r["a"]["ids"]), _next_probs(hf, r["b"]["ids"]))
    assert_close(np.array(g["gap_ablated"]), want)
    assert_close(np.array(g["closed"]), (g["gap"] - want) / g["gap"])
    closed = [c["closed"] for c in g["ranking"]]
    assert closed == sorted(closed, reverse=True) and len(closed) == tiny.layers * tiny.heads
    best = g["ranking"][0]
    assert_close(best["gap"], want[best["layer"], best["head"]])


def test_the_heavy_jobs_give_the_direct_results(tiny):
    args = {"model": tiny.path, "a": "the cat sat on the mat", "b": "the dog sat on the mat"}
    (share, part), *rest = list(worker.run(None, "minimal_pair", args))
    assert share == 1.0 and not rest
    direct = mp.minimal_pair(tiny, args["a"], args["b"])
    for side in "ab":  # the job's maps travel packed: every head the same floats
        maps = np.array(direct[f"attention_{side}"])
        assert part[f"attention_{side}"]["shape"] == list(maps.shape)
        got = [[mp.head_map(part, side, i, h) for h in range(tiny.heads)] for i in range(tiny.layers)]
        np.testing.assert_array_equal(np.array(got), maps)
    rest_of = {k: v for k, v in part.items() if not k.startswith("attention_")}
    assert worker.plain(rest_of) == worker.plain({k: v for k, v in direct.items() if not k.startswith("attention_")})
    assert mp.head_view(part, 1, 1) == mp.head_view(direct, 1, 1)
    (_, part), *_ = list(worker.run(None, "minimal_pair_ablation", args))
    assert worker.plain(part) == worker.plain(mp.ablation_gap(tiny, args["a"], args["b"]))
    json.dumps(part)  # plain: JSON as it is


# --- refusals -----------------------------------------------------------------------------------------------------


def test_refusals_name_the_side(minilm, tiny):
    cases = [
        (
            minilm,
            "动物没有过马路，因为它太累了。",
            "动物没有过马路，因为它太宽了。",
            "b",
            "pair_identical",
        ),  # [UNK] alike
        (minilm, "a cat", "x" * (mp.MAX_CHARS + 1), "b", "pair_chars"),
        (minilm, " ".join(["cat"] * 60), "a cat", "a", "pair_too_long"),
        (minilm, "   ", "a cat", "a", "empty_sentence"),
        (tiny, "the cat sat on the mat " * 8, "the cat", "a", "pair_too_long"),  # beyond the tiny model's 48
    ]
    for m, a, b, field, code in cases:
        with pytest.raises(AttentionConfigError) as err:
            mp.minimal_pair(m, a, b)
        assert (err.value.field, err.value.code) == (field, code), (a[:20], b[:20])
    with pytest.raises(AttentionConfigError) as err:
        mp.ablation_gap(minilm, TIRED, WIDE)
    assert err.value.code == "next_token_encoder"


# --- the curated pairs ------------------------------------------------------------------------------------------


def test_the_curated_pairs_cover_every_kind_in_both_languages():
    pairs = mp.curated()
    assert {(p["kind"], p["language"]) for p in pairs} == {(k, lang) for k in mp.KINDS for lang in mp.LANGUAGES}
    assert len({p["id"] for p in pairs}) == len(pairs)
    assert mp.curated("encoder") == [p for p in pairs if p["suits"] != "decoder"]
    assert all(p["suits"] != "decoder" for p in mp.curated("encoder"))


def test_every_curated_pair_differs_for_the_models_it_suits(minilm):
    decoder = models.load("fortune-gpt")
    for p in mp.curated():
        for m in {"encoder": [minilm], "decoder": [decoder], "both": [minilm, decoder]}[p["suits"]]:
            ea, eb = mp.encoded(m, p["a"], "a"), mp.encoded(m, p["b"], "b")
            assert ea.ids != eb.ids, (p["id"], m.name)
            al = mp.align(ea.ids, eb.ids)
            assert al.shared and len(al.blocks) <= 2, (p["id"], m.name)  # a word or two
            if m is minilm:  # the encoder knows every word of a pair written for it
                assert minilm.tokenizer.unk_token_id not in ea.ids + eb.ids, p["id"]


def test_the_pairs_validator_names_each_problem(tmp_path):
    good = {"id": "x1", "kind": "negation", "language": "en", "a": "A is B.", "b": "A is not B.", "suits": "both"}
    assert mp.validate_pairs({"pair": [good]}) == []
    broken = [
        ({**good, "kind": "sarcasm"}, "kind must be one of"),
        ({**good, "language": "fr"}, "language must be one of"),
        ({**good, "suits": "vision"}, "suits must be one of"),
        ({**good, "b": good["a"]}, "the same sentence"),
        ({**good, "a": " "}, "a must be a sentence"),
        ({**good, "id": "x y"}, "id must be"),
        ({k: v for k, v in good.items() if k != "suits"}, "fields must be exactly"),
    ]
    for item, said in broken:
        problems = mp.validate_pairs({"pair": [item]})
        assert len(problems) == 1 and said in problems[0], (item, problems)
    assert "id used twice" in mp.validate_pairs({"pair": [good, good]})[0]
    assert mp.validate_pairs({"pairs": []})
    path = tmp_path / "pairs.toml"
    path.write_text('[[pair]]\nid = "a"\nkind = "negation"\nlanguage = "en"\na = "x"\nb = "x"\nsuits = "both"\n')
    with pytest.raises(ValueError, match="the same sentence"):
        mp.load_pairs(path)


# --- the command ------------------------------------------------------------------------------------------------


def test_pair_command_prints_the_engine_result(tiny, capsys):
    code = main(["pair", "the cat sat on the mat", "the dog sat on the mat", "--model", tiny.path, "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    want = worker.plain(mp.minimal_pair(tiny, "the cat sat on the mat", "the dog sat on the mat"))
    assert {k: v for k, v in out.items() if k != "ablation"} == want
    assert out["ablation"] == worker.plain(mp.ablation_gap(tiny, "the cat sat on the mat", "the dog sat on the mat"))


@pytest.mark.parametrize(
    "args",
    [
        ["pair", "a", "x" * 5000, "--json"],
        ["pair", b"abc \xff".decode("utf-8", "surrogateescape"), "b", "--json"],
        ["pair", "a", "b", "--top-k", "0"],
        ["pair", "a", "b", "--top-k", "9" * 40],
        ["pair", "a", "a b", "--model", "m" * 5000],
        ["match-heads", "--a", "m" * 5000, "--b", "x"],
        ["match-heads", "--a", b"\xff".decode("utf-8", "surrogateescape"), "--b", "x"],
    ],
)
def test_hostile_values_are_one_line(args, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    code = main(args)
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in captured.err, captured.err[:300]
    assert len(captured.err) < 400 and captured.out == ""
