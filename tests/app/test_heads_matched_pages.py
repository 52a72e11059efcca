"""Heads matched across two models (Inside the model: explorer.model.match_view) and two Lab checkpoints compared
(explorer.lab.checkpoints), under AppTest: the table is the engine's matching (``head_match.match_models`` run here
on two tiny decoders that share a tokenizer), a server offering no second model with the same tokenizer says why;
the Lab's two snapshots are drawn with B − A as their weights' difference, the head that changed most first, and
their heads matched as scipy's Jensen–Shannon distance and a brute-force matching find them."""

from __future__ import annotations

import itertools
import json
import time

import numpy as np
import pytest
from background import until_done
from scipy.spatial.distance import jensenshannon
from tolerance import assert_close

from attn_core import models
from attn_core.interpret import head_match
from explorer.lab.runs import RUNS

INSIDE, LAB = "pages/9_inside.py", "pages/8_lab.py"


@pytest.fixture(scope="module")
def twins(tmp_path_factory):
    """Two tiny GPT-2s with the same tokenizer and different weights (seeds 0 and 1), offered as twin-a and twin-b."""
    from tiny_decoders import build

    from explorer.jobs.heavy import HEAVY
    from explorer.model import real

    a = build(tmp_path_factory.mktemp("twin_a"), seed=0)
    b = build(tmp_path_factory.mktemp("twin_b"), seed=1)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(real.MODELS_ENV, f"twin-a={a};twin-b={b}")  # offered as an operator would, before a start:
        while (worker := HEAVY.workers.take()) is not None:  # idle workers started under another table end
            worker.terminate()
            worker.wait(60)
        real.wait_for("twin-a", timeout=300)
        real.wait_for("twin-b", timeout=300)
        yield a, b


def texts(at) -> str:
    kinds = ("subheader", "markdown", "caption", "info", "warning", "error")
    return "\n".join(str(e.value) for kind in kinds for e in at.get(kind))


def table(at, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_inside_matches_two_models_that_share_a_tokenizer(app, twins):
    at = until_done(app(INSIDE, query={"model": "twin-a"}))
    assert at.selectbox(key="mp_match_other").options == ["twin-b"]  # the only other with the same tokenizer
    assert not any(d for d in at.dataframe if "distance" in d.value.columns)  # nothing computed before asked
    at.toggle(key="mp_match_go").set_value(True).run()
    until_done(at)
    want = head_match.match_models(models.load("twin-a"), models.load("twin-b"))
    frame = table(at, "distance")
    assert list(frame["head of twin-a"]) == [f"{p['a'][0]}:{p['a'][1]}" for p in want["pairs"]]
    assert list(frame["head of twin-b"]) == [f"{p['b'][0]}:{p['b'][1]}" for p in want["pairs"]]
    assert_close(np.asarray(frame["distance"], dtype=float), np.round([p["distance"] for p in want["pairs"]], 3))
    assert list(frame["distance"]) == sorted(frame["distance"])  # the closest pair first
    assert f"their mean distance is **{want['mean']:.3f}**" in texts(at)


@pytest.mark.parametrize(("lang", "needle"), [("en", "No other model offered here"), ("zh", "都不与")])
def test_inside_says_why_heads_cannot_be_matched(app, lang, needle):
    at = app(INSIDE, query={"lang": lang})  # the bundled encoder: the shipped decoder cuts text otherwise
    assert not at.exception and needle in texts(at)
    assert not [s for s in at.selectbox if s.key == "mp_match_other"]


def wait_done(at, timeout=600):
    start = time.time()
    while time.time() - start < timeout:
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        if "done" in " ".join(m.value for m in at.markdown):
            return at
        time.sleep(0.5)
    raise AssertionError("the run did not finish")


def wait_for_table(at, timeout=600):
    """Rerun the Lab until the matched heads' table (the ``match_lab`` background job) has arrived."""
    start = time.time()
    while time.time() - start < timeout:
        if any("distance" in d.value.columns for d in at.dataframe):
            return at
        time.sleep(0.5)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
    raise AssertionError("the matched heads never arrived")


@pytest.fixture
def _stop_runs():
    yield
    for run in list(RUNS.runs.values()):
        RUNS.stop(run)


def rows_js(wa: np.ndarray, wb: np.ndarray) -> float:
    """The mean over query rows of scipy's Jensen–Shannon distance (base 2) between two heads' maps."""
    return float(np.mean([jensenshannon(x, y, base=2) for x, y in zip(wa, wb, strict=True)]))


def test_the_lab_compares_two_checkpoints(app, _stop_runs):
    at = app(LAB, query={"lab_task": "shift", "lab_steps": "60", "seed": "3", "heads": "2"})
    at.button(key="lab_play").click().run()
    wait_done(at)
    wait_for_table(at)  # (until_done cannot tell: the Lab draws every run's training progress as a bar)
    run = next(r for r in RUNS.runs.values() if r.cfg.task == "shift" and r.cfg.steps == 60 and r.cfg.seed == 3)
    snaps = [s for s in run.snaps if s.weights]
    first, last = snaps[0], snaps[-1]
    assert at.selectbox(key="lab_ck_a").value == f"A:{first.step}" and at.selectbox(key="lab_ck_b").value == "A:60"
    wa = [w.numpy().astype(float) for w in first.weights]
    wb = [w.numpy().astype(float) for w in last.weights]
    change = {f"0:{h}": 0.5 * np.abs(wb[0][h] - wa[0][h]).sum(-1).mean() for h in range(2)}
    top = max(change, key=change.get)
    assert at.selectbox(key="lab_ck_head").value == top  # the head whose map changed most
    drawn = {}
    for c in at.get("plotly_chart"):
        spec = json.loads(c.proto.spec)
        drawn[spec["layout"].get("title", {}).get("text", "")] = spec
    diff = np.asarray(drawn[f"second − first, head {top}"]["data"][0]["z"], dtype=float)
    assert_close(diff, wb[0][int(top[-1])] - wa[0][int(top[-1])])
    assert drawn[f"second − first, head {top}"]["data"][0]["zmid"] == 0  # B − A: a scale centred on 0
    # the matching, independently: scipy's distance for every pair of heads, the best of both assignments
    d = np.array([[rows_js(wa[0][i], wb[0][j]) for j in range(2)] for i in range(2)])
    best = min(itertools.permutations(range(2)), key=lambda p: sum(d[i, p[i]] for i in range(2)))
    want = sorted((d[i, best[i]], i, best[i]) for i in range(2))
    frame = table(at, "distance")
    assert list(frame[f"head of A:{first.step}"]) == [f"0:{i}" for _, i, _ in want]
    assert list(frame["head of A:60"]) == [f"0:{j}" for _, _, j in want]
    assert_close(np.asarray(frame["distance"], dtype=float), [x for x, _, _ in want], atol=5.1e-4)  # shown to 3 places
