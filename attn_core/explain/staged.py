"""``explain(..., shapley=False, layers=True)`` in stages, cheapest first, for a page that draws each
part as it arrives (``attn_core.heavy``, the Explain page):

    cheap(pre, text, removal)            tokens, words, notices, raw attention, rollout and norms per
                                         layer: one forward pass and a few small matrix products (ms)
    stages(pre, text, removal, steps)    yields (share done, the keys that just arrived); merged over
                                         every stage, the dict ``explain.explain`` returns

The values are the same functions' on the same inputs as ``explain.explain`` (a unit test holds the
merged stages to it).
"""

from __future__ import annotations

from collections.abc import Iterator

from . import correlation as C
from . import faithfulness, internals, methods, references
from .explain import correlations, head_mean, notices, word_texts
from .sentence import make_item

# the share of a typical sentence's time spent up to the end of each stage (measured at 20 pieces)
SHARES = {"loo": 0.15, "ig": 0.35, "flow": 0.85, "end": 1.0}


def _cheap(pre, item, passed, text: str, removal: str) -> dict:
    W = head_mean(passed)
    rolled = methods.rollout_matrices(W)
    layers = {
        "raw": [methods.raw(W, layer).tolist() for layer in range(len(W))],
        "rollout": [methods.per_token(rolled[layer]).tolist() for layer in range(len(W))],
        "norm": internals.norms(pre, passed).tolist(),
    }
    return {
        "model": pre.name,
        "text": text,
        "removal": removal,
        "tokens": list(item.pieces),
        "words": list(item.words),
        "word_texts": word_texts(item),
        "notices": notices(item),
        "layers": layers,
    }


def cheap(pre, text: str, removal: str = "attention") -> dict:
    """What one forward pass gives at once (raises AttentionConfigError for a sentence that cannot be explained)."""
    item = make_item(pre, text)
    return _cheap(pre, item, references.full(pre, item), text, removal)


def stages(
    pre, text: str, removal: str = "attention", steps: int = references.IG_STEPS
) -> Iterator[tuple[float, dict]]:
    item = make_item(pre, text)
    passed = references.full(pre, item)
    target = passed.pooled[0]
    first = _cheap(pre, item, passed, text, removal)
    yield 0.02, first
    layers = dict(first["layers"])
    layers["value_zeroing"] = internals.value_zeroing(pre, passed).tolist()
    loo = references.loo(pre, item, removal, passed).tolist()
    yield SHARES["loo"], {}
    ig = references.integrated_gradients(pre, item.ids, target, steps)
    refs = {"loo": loo, "ig": ig["attr"].tolist(), "loo_direct": references.direct_share(passed).tolist()}
    yield (  # value zeroing, leave-one-out and IG as one part: each part is one redraw of the page
        SHARES["ig"],
        {
            "layers": dict(layers),
            "references": dict(refs),
            "ig_completeness_error": ig["error"],
            "ig_delta": ig["delta"],
            "ig_sum": ig["sum"],
            "ig_steps": steps,
        },
    )
    W = head_mean(passed)
    flow = None
    if W.shape[-1] <= methods.FLOW_MAX:
        flow = []
        for layer in range(len(W)):
            flow.append(methods.flow(W, layer).tolist())
            share = SHARES["ig"] + (SHARES["flow"] - SHARES["ig"]) * (layer + 1) / len(W)
            yield share, {}
    layers["flow"] = flow
    order = ("raw", "rollout", "flow", "norm", "value_zeroing")
    values = {k: None if layers[k] is None else layers[k][-1] for k in order}
    layers = {k: layers[k] for k in order}
    rankings = {**values, "loo": refs["loo"], "ig": refs["ig"]}
    yield (
        SHARES["end"],
        {
            "layers": layers,
            "methods": values,
            "shapley_check": None,
            "curves": faithfulness.curves(pre, item, rankings, removal, target),
            "ks": list(faithfulness.KS),
            "correlation": correlations(item, values, dict(refs)),
            "specials": {k: C.specials(v) for k, v in rankings.items() if v is not None},
        },
    )


def merged(pre, text: str, removal: str = "attention", steps: int = references.IG_STEPS) -> dict:
    """Every stage merged: what ``explain.explain(pre, text, removal=..., shapley=False, layers=True)`` returns."""
    out: dict = {}
    for _, part in stages(pre, text, removal, steps):
        out.update(part)
    return out
