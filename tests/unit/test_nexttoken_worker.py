"""The Next token page's generation and branches as the background worker computes them (``attn_core.heavy``'s
``next_token_generation`` and ``next_token_branches``, through ``attn_core.nexttoken.plain``): plain values that
equal the engine's own generation and branches, the model loaded from its directory; a bad setting is the engine's
error."""

from __future__ import annotations

import pytest
from nexttoken_tiny import build
from tolerance import assert_close

from attn_core import heavy as worker
from attn_core import models
from attn_core import nexttoken as nt
from attn_core.nexttoken import SamplingError

PROMPT = "the cat sat on the mat"
SETTINGS = {"temperature": 1.3, "top_k": 40, "top_p": 0.9, "seed": 7, "greedy": False}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return str(build("gpt2", tmp_path_factory.mktemp("nt_worker")))


def parts(kind: str, args: dict) -> list[dict]:
    """What the worker sends for one request, as JSON has it."""
    return [worker.plain(part) for _, part in worker.run(None, kind, args)]


def test_the_workers_generation_is_the_engines(folder):
    m = models.load(folder)
    (got,) = parts("next_token_generation", {"model": folder, "prompt": PROMPT, "max_new": 6} | SETTINGS)
    gen = nt.generate(m, PROMPT, nt.sampling(vocab=m.vocab, **SETTINGS), 6)
    assert got["ids"] == list(gen.ids) and got["prompt_ids"] == list(gen.prompt.ids)
    assert got["pieces"] == list(gen.pieces) and got["stopped"] == gen.stopped
    assert [s["chosen"] for s in got["steps"]] == [s.chosen for s in gen.steps]
    for mine, theirs in zip(got["steps"], gen.steps, strict=True):
        assert mine["cache_shape"] == list(theirs.cache_shape) and mine["cache_bytes"] == theirs.cache_bytes
        assert_close(mine["attention"], theirs.attention.tolist())
    assert got["check"]["ok"] and got["check"]["positions"] == 6


def test_the_workers_branches_are_the_engines(folder):
    m = models.load(folder)
    args = {"model": folder, "prompt": PROMPT, "max_new": 6, "step": 2, "n_new": 4} | SETTINGS
    (got,) = parts("next_token_branches", args)
    gen = nt.generate(m, PROMPT, nt.sampling(vocab=m.vocab, **SETTINGS), 6)
    want = worker.plain(nt.branches(m, gen, 2, 4))
    assert [b["ids"] for b in got["branches"]] == [b["ids"] for b in want]
    assert [b["chosen"] for b in got["branches"]] == [b["chosen"] for b in want]
    assert sum(b["chosen"] for b in want) <= 1
    assert_close([b["prob"] for b in got["branches"]], [b["prob"] for b in want])


@pytest.mark.parametrize(("bad", "field"), [({"temperature": 0.0}, "temperature"), ({"max_new": 999}, "max_new")])
def test_a_bad_setting_is_the_engines_error(folder, bad, field):
    args = {"model": folder, "prompt": PROMPT, "max_new": 6} | SETTINGS | bad
    with pytest.raises(SamplingError) as err:
        parts("next_token_generation", args)
    assert err.value.field == field
