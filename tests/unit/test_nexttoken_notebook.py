"""The Next token page's take-home notebook (attn_core/notebook/nexttoken_nb.py), run as a learner would: its
code cells in a fresh Python without this project (``-I``, another directory), on tiny random decoders of both
families. The forward pass in plain torch must give transformers' own logits, and the seeded draw the token the
app chose; the last cell must find the app's values equal."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch
from nexttoken_tiny import build
from tolerance import assert_close

from attn_core import models
from attn_core import nexttoken as nt
from attn_core.notebook.nexttoken_nb import nexttoken_notebook

PROMPT = "the cat sat on the mat, 猫坐在垫子上"
HARNESS = r"""
import contextlib, io, json, sys
results = {}
for name, code in json.load(sys.stdin).items():  # each job in a fresh namespace
    ns = {"__name__": "__main__"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for n, cell in enumerate(code):
            exec(compile(cell, f"<{name} cell {n}>", "exec"), ns)
    r = ns["recomputed"]
    results[name] = {"logits": r["logits"].tolist(), "chosen": r["chosen"], "ids": r["ids"], "out": out.getvalue()}
print(json.dumps(results))
"""
CASES = [(kind, greedy) for kind in ("gpt2", "llama") for greedy in (False, True)]
TYPED = '\'); import os; os._exit(3) #\n""" ] } 猫'


@pytest.fixture(scope="module")
def decoders(tmp_path_factory):
    folder = tmp_path_factory.mktemp("nb_decoders")
    return {kind: models.load(build(kind, folder)) for kind in ("gpt2", "llama")}


def run_cells(jobs: dict[str, list[str]], tmp_path) -> dict:
    """Each job's cells, in order, in one isolated Python started in ``tmp_path`` (no import of this project)."""
    done = subprocess.run(
        [sys.executable, "-I", "-c", HARNESS],
        input=json.dumps(jobs),
        check=False,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def settings(m, **kw) -> nt.Sampling:
    return nt.sampling(vocab=m.vocab, **({"temperature": 1.3, "top_k": 40, "top_p": 0.9, "seed": 11} | kw))


def code(nb) -> list[str]:
    return [c.source for c in nb.cells if c.kind == "code"]


@pytest.fixture(scope="module")
def ran(decoders, tmp_path_factory):
    """Every case's notebook (and the Chinese script, and a hostile prompt's notebook) run once, together."""
    jobs, made = {}, {}
    for kind, greedy in CASES:
        m = decoders[kind]
        p = nt.predict(m, PROMPT, settings(m, greedy=greedy))
        made[(kind, greedy)] = p
        jobs[f"{kind}-{greedy}"] = code(nexttoken_notebook(m, p, prompt=PROMPT, lang="en"))
    m = decoders["gpt2"]
    p = nt.predict(m, PROMPT, settings(m))
    script = nexttoken_notebook(m, p, prompt=PROMPT, lang="zh").script("zh")
    assert "纯 torch 的前向计算" in script and "带种子的采样" in script
    jobs["script-zh"], made["script-zh"] = [script], p
    p = nt.predict(m, TYPED, settings(m))
    jobs["typed"], made["typed"] = code(nexttoken_notebook(m, p, prompt=TYPED, lang="en")), p
    return made, run_cells(jobs, tmp_path_factory.mktemp("nb_run"))


@pytest.mark.parametrize(("kind", "greedy"), CASES)
def test_the_notebook_recomputes_the_logits_and_draws_the_apps_token(decoders, ran, kind, greedy):
    m = decoders[kind]
    made, results = ran
    p, got = made[(kind, greedy)], results[f"{kind}-{greedy}"]
    with torch.inference_mode():  # the reference: transformers' own forward, not the notebook's
        want = m.hf(input_ids=torch.tensor([list(p.prompt.ids)])).logits[0, -1].double()
    assert got["ids"] == list(p.prompt.ids)
    assert_close(torch.tensor(got["logits"]), want)
    assert got["chosen"] == p.distribution.chosen
    if greedy:
        assert got["chosen"] == int(want.argmax())
    assert "ok" in got["out"].split("logits:")[-1] and "the same" in got["out"]


def test_the_script_runs_on_its_own_in_chinese(ran):
    made, results = ran
    assert results["script-zh"]["chosen"] == made["script-zh"].distribution.chosen


def test_a_typed_prompt_reaches_the_code_only_as_a_literal(ran):
    made, results = ran
    p, got = made["typed"], results["typed"]
    assert got["ids"] == list(p.prompt.ids) and got["chosen"] == p.distribution.chosen
