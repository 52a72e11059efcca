"""The burst benchmark's own readings (``benchmarks/explain_burst.py``): the queue position it reads off a page is
the one the page's catalogue writes, in both languages, and its learners' sentences are all different."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))), "benchmarks"))

import explain_burst as eb

from explorer.base.i18n import t


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("n", [1, 7, 29])
def test_the_position_read_is_the_one_the_page_wrote(language, n):
    shown = [t("heavy_running", language=language), t("heavy_ahead", n=n, language=language)]
    assert eb.ahead_of(shown) == n  # the last line drawn counts
    assert eb.ahead_of(shown[:1]) == 0  # computing now: nobody ahead
    assert eb.ahead_of([]) is None  # nothing drawn: no position


def test_every_learner_types_a_sentence_of_its_own_and_the_same_ones_again_for_a_seed():
    thirty = eb.sentences(30, seed=0)
    assert len(set(thirty)) == 30
    assert all(7 <= len(s.split()) <= 11 for s in thirty if s.isascii())  # a sentence, not a word
    assert all(len(s) >= 12 for s in thirty if not s.isascii())
    assert thirty == eb.sentences(30, seed=0) and thirty != eb.sentences(30, seed=1)
    assert sum(not s.isascii() for s in thirty) == 3  # every tenth in Chinese
