"""``check_settings`` (what app.py runs on every page instead of computing the trace) raises exactly what
``run_trace`` raises, and nothing where ``run_trace`` computes: the oracle is ``run_trace`` itself, on
settings drawn at random around and beyond every limit."""

from __future__ import annotations

import random

import pytest

from attn_core import AttentionConfigError, Settings, run_trace
from attn_core.kernels import KERNELS
from attn_core.knobs import INITS, LAYOUTS, POSITIONS, SCORES
from attn_core.masks import MASK_MODES
from attn_core.trace import check_settings

SENTENCES = ["Life is short, eat dessert first", "我爱自然语言处理", "a", "!!!", "", "the cat " * 40]


def drawn(rng: random.Random) -> Settings:
    """Plausible values, and now and then (one field in 25) one beyond a limit."""

    def some(good, bad):
        return rng.choice(bad) if rng.random() < 0.04 else rng.choice(good)

    d = some([4, 8, 16], [0, -1, 5000, 3])
    return Settings(
        sentence=some(SENTENCES[:2], SENTENCES[2:]),
        source=some([None, None, "the dog sat"], [""]),
        d_model=some([8, 16, 24], [12, 0, 5000]),
        d_q=d,
        d_k=some([d, d, 4], [0]),
        d_v=some([4, 8], [0, 3]),
        heads=some([1, 2, 4], [3, 0, 64]),
        layout=some(list(LAYOUTS), ["nope"]),
        score=some(list(SCORES), ["nope"]),
        temperature=some([1.0, 0.5], [0.0, -1.0, float("nan")]),
        pos=some(list(POSITIONS), ["nope"]),
        init=some(list(INITS), ["nope"]),
        mask=some(list(MASK_MODES), ["nope"]),
        causal=rng.random() < 0.3,
        window=some([1, 2], [0, -3]),
        dilation=some([1, 2], [0]),
        global_tokens=some([0, 1], [-1]),
        block=some([1, 2], [0]),
        kernel=some(list(KERNELS), ["nope"]),
        features=some([1, 4], [0]),
        proj_k=some([1, 3], [40, 0]),
        dropout=some([0.0, 0.1], [1.5]),
        residual_norm=rng.random() < 0.3,
        max_bytes=some([192 * 2**20], [20_000, 200_000]),  # a small budget: the memory check refuses
    )


def outcome(fn, s: Settings):
    try:
        fn(s)
    except AttentionConfigError as err:
        return err.field, err.code
    return None


@pytest.mark.parametrize("seed", range(4))
def test_check_settings_raises_what_run_trace_raises_and_nothing_else(seed):
    rng = random.Random(seed)
    seen = {"ok": 0, "error": 0}
    for _ in range(150):
        s = drawn(rng)
        expected = outcome(run_trace, s)
        assert outcome(check_settings, s) == expected, s
        seen["ok" if expected is None else "error"] += 1
    assert seen["ok"] > 5 and seen["error"] > 5, seen  # both sides of the check were exercised
