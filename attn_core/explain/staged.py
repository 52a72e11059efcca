"""``explain(..., shapley=False, layers=True)`` in stages, cheapest first, for a page that draws each
part as it arrives (``attn_core.heavy``, the Explain page):

    cheap(pre, text, removal)            tokens, words, notices, raw attention, rollout and norms per
                                         layer: one forward pass and a few small matrix products (ms)
    stages(pre, text, removal, steps)    yields (share done, the keys that just arrived); merged over
                                         every stage, the dict ``explain.explain`` returns

    stages(..., part="references")       the first part, then leave-one-out and integrated gradients
                                         with their curves and specials
    stages(..., part="attention")        the methods read from attention and values: every layer of
                                         them (flow and value zeroing included), their curves and specials
    joined(pre, text, refs, att, r)      the two last parts as one: what ``stages`` ends with

The last three let one sentence use two workers at once (their times are about even at 31 pieces):
``joined`` adds the correlations, which need both halves.

The values are the same functions' on the same inputs as ``explain.explain`` (a unit test holds the
merged stages to it, whole and split).
"""

from __future__ import annotations

from collections.abc import Iterator

from . import correlation as C
from . import faithfulness, internals, methods, references
from .explain import correlations, head_mean, header, notices
from .sentence import check_removal, is_decoder, make_item

# the share of a typical sentence's time spent up to the end of each stage (measured at 20 pieces)
SHARES = {"loo": 0.15, "ig": 0.35, "flow": 0.85, "end": 1.0}
ORDER = ("raw", "rollout", "flow", "norm", "value_zeroing", "loo", "ig")  # the methods, then the references
NESTED = ("layers", "methods", "curves", "correlation", "specials")  # the last part's dicts keyed by method
PARTS = ("all", "references", "attention")


def _cheap(pre, item, passed, text: str, removal: str) -> dict:
    W = head_mean(passed)
    last = is_decoder(pre)
    rolled = methods.rollout_matrices(W)
    layers = {
        "raw": [methods.raw(W, layer, last).tolist() for layer in range(len(W))],
        "rollout": [methods.per_token(rolled[layer], last).tolist() for layer in range(len(W))],
        "norm": internals.norms(pre, passed).tolist(),
    }
    return {
        **header(pre, text, removal, item, passed),
        "notices": notices(item),
        "layers": layers,
    }


def cheap(pre, text: str, removal: str = "attention") -> dict:
    """What one forward pass gives at once (raises AttentionConfigError for a sentence that cannot be explained)."""
    item = make_item(pre, text)
    return _cheap(pre, item, references.full(pre, item), text, removal)


def _flow_layers(W, last: bool) -> Iterator[tuple[float, list | None]]:
    """Flow up to each layer, one at a time (None: above FLOW_MAX pieces, computed for no layer)."""
    if W.shape[-1] > methods.FLOW_MAX:
        yield 1.0, None
        return
    for layer in range(len(W)):
        yield (layer + 1) / len(W), methods.flow(W, layer, last).tolist()


def _attention_only(pre, item, passed, target, removal: str) -> Iterator[tuple[float, dict]]:
    layers = dict(_cheap(pre, item, passed, "", removal)["layers"])
    layers["value_zeroing"] = internals.value_zeroing(pre, passed).tolist()
    yield 0.15, {}
    flow: list | None = []
    for share, values in _flow_layers(head_mean(passed), is_decoder(pre)):
        if values is None:
            flow = None
        else:
            flow.append(values)
        yield 0.15 + 0.7 * share, {}
    layers["flow"] = flow
    order = ("raw", "rollout", "flow", "norm", "value_zeroing")
    values = {k: None if layers[k] is None else layers[k][-1] for k in order}
    rankings = {k: v for k, v in values.items() if v is not None}
    yield (
        SHARES["end"],
        {
            "layers": {k: layers[k] for k in order},
            "methods": values,
            "curves": faithfulness.curves(pre, item, rankings, removal, target),
            "specials": {k: C.specials(v) for k, v in rankings.items()},
        },
    )


def stages(
    pre, text: str, removal: str = "attention", steps: int = references.IG_STEPS, part: str = "all"
) -> Iterator[tuple[float, dict]]:
    if part not in PARTS:
        raise ValueError(f"unknown part {part!r}")
    item = make_item(pre, text)
    check_removal(pre, removal)
    passed = references.full(pre, item)
    target = passed.target
    if part == "attention":
        yield from _attention_only(pre, item, passed, target, removal)
        return
    first = _cheap(pre, item, passed, text, removal)
    yield 0.02, first
    layers = dict(first["layers"])
    if part == "all":
        layers["value_zeroing"] = internals.value_zeroing(pre, passed).tolist()
    refs = yield from _references(pre, item, passed, removal, steps, layers if part == "all" else None)
    if part == "references":
        rankings = {"loo": refs["loo"], "ig": refs["ig"]}
        yield (
            SHARES["end"],
            {
                "shapley_check": None,
                "curves": faithfulness.curves(pre, item, rankings, removal, target),
                "ks": list(faithfulness.KS),
                "specials": {k: C.specials(v) for k, v in rankings.items()},
            },
        )
        return
    yield from _flow_and_end(pre, item, passed, layers, refs, removal)


def _references(pre, item, passed, removal: str, steps: int, layers: dict | None):
    """Leave-one-out and integrated gradients (and value zeroing, in ``layers`` when given) as one part: each
    part is one redraw of the page. Returns the references."""
    loo = references.loo(pre, item, removal, passed).tolist()
    yield SHARES["loo"], {}
    ig = references.integrated_gradients(pre, item.ids, passed.target, steps)
    refs = {"loo": loo, "ig": ig["attr"].tolist()}
    direct = references.direct_share(passed)
    if direct is not None:
        refs["loo_direct"] = direct.tolist()
    yield (
        SHARES["ig"],
        {
            **({"layers": dict(layers)} if layers is not None else {}),
            "references": dict(refs),
            "ig_completeness_error": ig["error"],
            "ig_delta": ig["delta"],
            "ig_sum": ig["sum"],
            "ig_steps": steps,
        },
    )
    return refs


def _flow_and_end(pre, item, passed, layers: dict, refs: dict, removal: str):
    """Attention flow layer by layer (its progress), then every method's last layer, their curves and their
    correlations with the references."""
    W = head_mean(passed)
    flow: list | None = []
    for share, values in _flow_layers(W, is_decoder(pre)):
        if values is None:
            flow = None
        else:
            flow.append(values)
        yield SHARES["ig"] + (SHARES["flow"] - SHARES["ig"]) * share, {}
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
            "curves": faithfulness.curves(pre, item, rankings, removal, passed.target),
            "ks": list(faithfulness.KS),
            "correlation": correlations(item, values, dict(refs)),
            "specials": {k: C.specials(v) for k, v in rankings.items() if v is not None},
        },
    )


def _ordered(d: dict) -> dict:
    return {k: d[k] for k in sorted(d, key=lambda k: ORDER.index(k) if k in ORDER else len(ORDER))}


def joined(pre, text: str, refs: dict, att: dict, references_: dict) -> dict:
    """The last parts of ``stages(part="references")`` and ``stages(part="attention")`` as the one
    ``stages`` ends with, with the correlations of every method with the references (``references_``:
    the "references" of the first half's parts), in the same order."""
    item = make_item(pre, text)
    return {
        "layers": att["layers"],
        "methods": att["methods"],
        "shapley_check": refs["shapley_check"],
        "curves": _ordered({**att["curves"], **refs["curves"]}),
        "ks": refs["ks"],
        "correlation": correlations(item, att["methods"], dict(references_)),
        "specials": _ordered({**att["specials"], **refs["specials"]}),
    }


def merged(pre, text: str, removal: str = "attention", steps: int = references.IG_STEPS) -> dict:
    """Every stage merged: what ``explain.explain(pre, text, removal=..., shapley=False, layers=True)`` returns."""
    out: dict = {}
    for _, part in stages(pre, text, removal, steps):
        out.update(part)
    return out


def merged_split(pre, text: str, removal: str = "attention", steps: int = references.IG_STEPS) -> dict:
    """The same from the two parts and ``joined``, as two workers give it (computed here one after the other)."""
    out: dict = {}
    refs_parts = list(stages(pre, text, removal, steps, part="references"))
    att_last = list(stages(pre, text, removal, steps, part="attention"))[-1][1]
    for _, part in refs_parts[:-1]:
        out.update(part)
    out.update(joined(pre, text, refs_parts[-1][1], att_last, out["references"]))
    return out
