"""The shipped corpus table: its inputs are the shipped corpus, its cells are the mean ± s.d. of its
own per-sentence rows, and a few of those rows match a recomputation now."""

import json

import numpy as np
import pytest

from attn_core import models as pt
from attn_core.explain import table as T
from attn_core.explain.sentence import make_item


@pytest.fixture(scope="module")
def stored():
    return json.loads(T.TABLE.read_text(encoding="utf-8"))


def test_the_table_was_computed_from_the_shipped_corpus(stored):
    sentences = T.corpus()
    assert len(sentences) >= 100 and len(set(sentences)) == len(sentences)
    assert stored["sentences"] == sentences
    assert stored["removal"] == T.REMOVAL and stored["references"] == list(T.TABLE_REFERENCES)


def test_every_cell_is_the_mean_and_sd_of_its_rows(stored):
    rows = stored["per_sentence"]
    for method in stored["methods"]:
        for ref in stored["references"]:
            for layer in range(stored["layers"]):
                got = [r[method][ref][layer] for r in rows if r[method][ref] is not None]
                got = np.array([g for g in got if g is not None])
                cell = stored["table"][method][ref][layer]
                assert cell["n"] == len(got)
                assert cell["mean"] == pytest.approx(got.mean(), abs=1e-12)
                assert cell["sd"] == pytest.approx(got.std(ddof=1), abs=1e-12)
                assert -1 <= cell["mean"] <= 1


@pytest.mark.parametrize("index", [0, 57, 110])
def test_a_few_rows_match_a_recomputation(stored, index):
    pre = pt.load()
    text = stored["sentences"][index]
    assert make_item(pre, text).n_words <= 10
    fresh = T.sentence_rows(pre, text)
    old = stored["per_sentence"][index]
    for method in stored["methods"]:
        for ref in stored["references"]:
            a, b = fresh[method][ref], old[method][ref]
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_allclose(np.array(a, dtype=float), np.array(b, dtype=float), atol=1e-6, rtol=1e-5)


def test_the_reading_is_written_from_the_numbers(stored):
    f = T.facts(stored)
    last = stored["layers"] - 1
    means = {
        m: np.mean([stored["table"][m][r][last]["mean"] for r in stored["references"]]) for m in stored["methods"]
    }
    assert f["best"] == max(means, key=means.get) and f["worst"] == min(means, key=means.get)
    assert f["best_rho"] == pytest.approx(means[f["best"]])
    changed = json.loads(json.dumps(stored))
    for r in changed["references"]:
        changed["table"]["rollout"][r][last]["mean"] = 0.99  # another table reads differently
    assert T.facts(changed)["best"] == "rollout"


def test_the_published_rows_carry_their_models_and_tasks(stored):
    for row in stored["published"]:
        assert row["model"] and row["task"] and row["source"] and row["spearman"]
    figures = {row["spearman"] for row in stored["published"]}
    assert figures == {"≈ 0.1 (all three)", "−0.03", "0.4–0.7"}  # only what the issue quotes
