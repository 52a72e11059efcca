"""``python -m attn_core generate`` and ``lens`` (a contract), on tiny random decoders built in the test: the same
seed gives the same tokens in two processes, every number checked against the model's own forward."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from nexttoken_tiny import build

from attn_core import models
from attn_core import nexttoken as nt
from attn_core.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROMPT = "once upon a time the cat"


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli_decoders")
    return {kind: build(kind, folder) for kind in ("gpt2", "llama")}


def cli(capsys, *argv) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def full_logits(m, ids) -> torch.Tensor:
    with torch.inference_mode():
        return m.hf(input_ids=torch.tensor([list(ids)]), use_cache=False).logits[0].double()


def test_generate_gives_the_same_tokens_in_two_processes_and_in_this_one(dirs):
    argv = ["generate", PROMPT, "--model", dirs["llama"], "--max-new", "6", "--temperature", "1.4", "--seed", "9"]
    env = {**os.environ, "PYTHONPATH": ROOT}
    command = [sys.executable, "-m", "attn_core", *argv, "--json"]
    outs = [subprocess.run(command, capture_output=True, text=True, env=env, check=False) for _ in range(2)]
    assert all(o.returncode == 0 for o in outs), [o.stderr[-500:] for o in outs]
    a, b = (json.loads(o.stdout) for o in outs)
    assert a["new_ids"] == b["new_ids"] and a["text"] == b["text"] and len(a["new_ids"]) == 6
    m = models.load(dirs["llama"])
    here = nt.generate(m, PROMPT, nt.sampling(vocab=m.vocab, temperature=1.4, seed=9), 6)
    assert list(here.new_ids) == a["new_ids"]


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
def test_generate_json_steps_are_the_models_numbers_after_the_filters(dirs, capsys, kind):
    m = models.load(dirs[kind])
    out = cli(capsys, "generate", PROMPT, "--model", dirs[kind], "--max-new", "4", "--top-k", "12", "--json")
    assert set(out) >= {"tokens", "steps", "text"} and out["ids"] == list(nt.encode(m, PROMPT).ids)
    assert out["tokens"] == list(nt.encode(m, PROMPT).pieces)
    full = full_logits(m, out["ids"] + out["new_ids"])
    n = len(out["ids"])
    for i, step in enumerate(out["steps"]):
        row = full[n - 1 + i].numpy()
        assert step["id"] == out["new_ids"][i] and step["chosen"] == nt.piece(m.tokenizer, step["id"])
        assert abs(step["logit"] - row[step["id"]]) <= 1e-5 * np.abs(row).max() + 1e-6
        top12 = sorted(range(len(row)), key=lambda j: (-row[j], j))[:12]  # top-k from its definition
        p = np.exp(row[top12] - row[top12].max())
        p /= p.sum()
        assert [t for t, _ in step["top"]] == [nt.piece(m.tokenizer, j) for j in top12[:10]]
        np.testing.assert_allclose([q for _, q in step["top"]], p[:10], rtol=1e-5)
        assert step["cache"]["shape"] == [m.layers, 2, m.kv_heads, n + i, m.d_head]
    assert out["cache_check"]["ok"]


def test_generate_greedy_is_the_argmax(dirs, capsys):
    m = models.load(dirs["gpt2"])
    out = cli(capsys, "generate", PROMPT, "--model", dirs["gpt2"], "--max-new", "5", "--greedy", "--json")
    seq = list(out["ids"])
    for token in out["new_ids"]:
        assert token == int(full_logits(m, seq)[-1].argmax())
        seq.append(token)
    assert all(s["is_top"] and s["rank"] == 1 and s["u"] is None for s in out["steps"])


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
def test_lens_json_rows_positions_and_decided_at(dirs, capsys, kind):
    m = models.load(dirs[kind])
    out = cli(capsys, "lens", PROMPT, "--model", dirs[kind], "--json")
    L = len(out["tokens"])
    assert len(out["layers"]) == m.layers + 1 and all(len(row) == L for row in out["layers"])
    probs = torch.softmax(full_logits(m, out["ids"]), -1)
    assert [c["id"] for c in out["layers"][-1]] == probs.argmax(-1).tolist()
    np.testing.assert_allclose([c["prob"] for c in out["layers"][-1]], probs.max(-1).values.numpy(), rtol=1e-5)
    for p in range(L):  # decided_at from its definition, on the printed cells
        column = [row[p]["id"] for row in out["layers"]]
        first = min(r for r in range(len(column)) if all(c == column[-1] for c in column[r:]))
        assert out["decided_at"][p] == first
    assert all(set(c) >= {"token", "id", "prob"} for row in out["layers"] for c in row)


BAD = [
    (["generate", "", "--model", "{gpt2}"], "prompt is empty"),
    (["generate", "hi", "--model", "{gpt2}", "--temperature", "0"], "temperature of 0"),
    (["generate", "hi", "--model", "{gpt2}", "--temperature", "-2"], "temperature of -2"),
    (["generate", "hi", "--model", "{gpt2}", "--top-p", "0"], "top-p = 0"),
    (["generate", "hi", "--model", "{gpt2}", "--top-p", "1.01"], "top-p = 1.01"),
    (["generate", "hi", "--model", "{gpt2}", "--top-k", "100000"], "top_k = 100000"),
    (["generate", "hi", "--model", "{gpt2}", "--seed", "x1"], "seed must be a whole number"),
    (["generate", "hi", "--model", "{gpt2}", "--max-new", "1000"], "max_new = 1000"),
    (["lens", "  ", "--model", "{llama}"], "prompt is empty"),
    (["lens", "hi", "--model", "/no/such/dir"], "no model directory"),
]


@pytest.mark.parametrize("argv, says", BAD)
def test_bad_arguments_exit_2_with_one_line(dirs, capsys, argv, says):
    assert main([a.format(**dirs) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and says in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_an_encoder_is_refused_with_the_decoders_named(dirs, capsys, tmp_path, monkeypatch):
    from transformers import BertConfig, BertModel

    enc = tmp_path / "encoder"
    BertModel(BertConfig(vocab_size=400, hidden_size=16, num_hidden_layers=1, num_attention_heads=2)).save_pretrained(
        enc
    )
    models.load(dirs["gpt2"]).tokenizer.save_pretrained(enc)
    from attn_core.models import locate

    monkeypatch.setattr(locate, "BUNDLED_DIR", tmp_path / "no_bundled")  # only the encoder and "tiny" are offered
    monkeypatch.setenv(models.MODELS_ENV, f"tiny={dirs['gpt2']}")
    assert nt.decoders() == ["tiny"]
    assert main(["lens", "hi", "--model", str(enc)]) == 2
    err = capsys.readouterr().err
    assert "is an encoder" in err and "tiny" in err
    out = cli(capsys, "lens", "the cat", "--json")  # no --model: the first offered decoder
    assert out["model"] == "tiny"
