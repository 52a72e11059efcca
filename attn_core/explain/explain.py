"""One sentence explained every way, as plain values (lists, floats, None): what the CLI prints
and what the page caches. An encoder's mean-pooled embedding is explained; a decoder's (``pre.causal``)
log-probability of its top next token, ``next_token`` in the header (see ``decoder``).

    explain(pre, text, removal=..., shapley=...) -> dict   tokens, methods, layers, references,
                                                           ig_completeness_error, curves, correlation
"""

from __future__ import annotations

import numpy as np

from . import correlation as C
from . import faithfulness, internals, methods, references
from .sentence import Item, check_removal, is_decoder, make_item

METHODS = ("raw", "rollout", "flow", "norm", "value_zeroing")
REFERENCES = ("loo", "ig", "shapley")
UNK_NOTICE = 0.2


def head_mean(passed) -> np.ndarray:
    """(layers, n, n): each layer's attention averaged over its heads."""
    return np.stack([a[0].mean(0).double().numpy() for a in passed.attentions])


def per_layer(pre, passed) -> dict[str, list | None]:
    """Every method's value per piece at each layer (rollout, flow and value zeroing up to that layer)."""
    W = head_mean(passed)
    L = len(W)
    last = is_decoder(pre)
    rolled = methods.rollout_matrices(W)
    flow = None
    if W.shape[-1] <= methods.FLOW_MAX:
        flow = [methods.flow(W, layer, last).tolist() for layer in range(L)]
    return {
        "raw": [methods.raw(W, layer, last).tolist() for layer in range(L)],
        "rollout": [methods.per_token(rolled[layer], last).tolist() for layer in range(L)],
        "flow": flow,
        "norm": internals.norms(pre, passed).tolist(),
        "value_zeroing": internals.value_zeroing(pre, passed).tolist(),
    }


def last_only(pre, passed) -> dict[str, list | None]:
    """Every method at the last layer only (flow computed once, not per layer)."""
    W = head_mean(passed)
    last = is_decoder(pre)
    f = methods.flow(W, last=last)
    return {
        "raw": methods.raw(W, last=last).tolist(),
        "rollout": methods.rollout(W, last=last).tolist(),
        "flow": None if f is None else f.tolist(),
        "norm": internals.norms(pre, passed)[-1].tolist(),
        "value_zeroing": internals.value_zeroing(pre, passed)[-1].tolist(),
    }


def header(pre, text: str, removal: str, item, passed) -> dict:
    """What every explanation starts with: the model, the text, the removal and the sentence's pieces (a
    decoder: and the next token whose log-probability is explained)."""
    out = {
        "model": pre.name,
        "text": text,
        "removal": removal,
        "tokens": list(item.pieces),
        "words": list(item.words),
        "word_texts": word_texts(item),
    }
    if is_decoder(pre):
        target = passed.target
        out["next_token"] = {"id": target.token, "text": target.text, "logp": target.logp}
        out["baseline"] = ig_baseline(pre, item)
    return out


def ig_baseline(pre, item) -> dict:
    """A decoder's integrated-gradients baseline, as ``decoder.integrated_gradients`` builds it: the token whose
    embedding stands in every ordinary piece's place, and the prompt's special pieces it keeps (a BOS token)."""
    from ..models import display_pieces
    from .decoder import baseline_token

    tok = pre.tokenizer
    specials = set(tok.all_special_ids)
    kept = [item.pieces[i] for i, t in enumerate(item.ids) if t in specials]
    return {"token": display_pieces(tok, [baseline_token(tok)])[0][0], "kept": kept}


def word_texts(item: Item) -> list[str]:
    if item.texts:
        return list(item.texts)
    out = []
    for w in range(item.n_words):
        out.append("".join(item.pieces[i].removeprefix("##") for i in item.pieces_of(w)))
    return out


def notices(item: Item) -> list[dict]:
    found = []
    if len(item.inner) < C.MIN_PIECES:
        found.append({"code": "few_pieces", "n": len(item.inner), "min": C.MIN_PIECES})
    if item.unk and item.unk / max(len(item.inner), 1) >= UNK_NOTICE:
        found.append({"code": "many_unk", "unk": item.unk, "n": len(item.inner)})
    if item.n > methods.FLOW_MAX:
        found.append({"code": "flow_capped", "n": item.n, "limit": methods.FLOW_MAX})
    if item.n_words > references.SHAPLEY_MAX:
        words = word_texts(item)  # the players: the words a reader counts, punctuation apart ("didn't" is one)
        found.append({"code": "shapley_words", "n": len(words), "limit": references.SHAPLEY_MAX, "words": words})
    return found


def correlations(item: Item, values: dict, refs: dict) -> dict:
    """method × reference: ρ, τ and the interval over the sentence's own pieces (Shapley: per word)."""
    inner = item.inner
    out: dict = {}
    for name, vals in values.items():
        row = out.setdefault(name, {})
        for ref, rvals in refs.items():
            if vals is None or rvals is None or ref == "loo_direct":
                continue
            if ref == "shapley":
                row[ref] = C.correlate(C.words_sum(np.asarray(vals), item.words, item.n_words), rvals)
            else:
                row[ref] = C.correlate(np.asarray(vals)[inner], np.asarray(rvals)[inner])
    return out


def explain(
    pre,
    text: str,
    *,
    removal: str = "attention",
    shapley: bool = True,
    steps: int = references.IG_STEPS,
    layers: bool = False,
) -> dict:
    item = make_item(pre, text)
    check_removal(pre, removal)
    passed = references.full(pre, item)
    target = passed.target
    every = per_layer(pre, passed) if layers else None
    values = last_only(pre, passed) if every is None else {k: None if v is None else v[-1] for k, v in every.items()}
    ig = references.integrated_gradients(pre, item.ids, target, steps)
    refs = {"loo": references.loo(pre, item, removal, passed).tolist(), "ig": ig["attr"].tolist()}
    direct = references.direct_share(passed)
    if direct is not None:
        refs["loo_direct"] = direct.tolist()
    shap = references.shapley(pre, item, removal, target) if shapley else None
    if shap is not None:
        refs["shapley"] = shap["words"].tolist()
    rankings = {**values, "loo": refs["loo"], "ig": refs["ig"]}
    out = {
        **header(pre, text, removal, item, passed),
        "methods": values,
        "references": refs,
        "ig_completeness_error": ig["error"],
        "ig_delta": ig["delta"],
        "ig_sum": ig["sum"],
        "ig_steps": steps,
        "shapley_check": None if shap is None else {k: shap[k] for k in ("v_all", "v_none", "sum")},
        "curves": faithfulness.curves(pre, item, rankings, removal, target),
        "ks": list(faithfulness.KS),
        "correlation": correlations(item, values, {k: v for k, v in refs.items()}),
        "specials": {
            k: C.specials(v) for k, v in {**values, "loo": refs["loo"], "ig": refs["ig"]}.items() if v is not None
        },
        "notices": notices(item),
    }
    if every is not None:
        out["layers"] = every
    return out


def spearman_table(result: dict) -> dict:
    """The CLI's ``correlation``: method × reference, Spearman's ρ only (None with its reason)."""
    return {m: {r: c["spearman"] for r, c in row.items()} for m, row in result["correlation"].items()}


def with_shapley(pre, text: str, removal: str = "attention") -> dict | None:
    """Shapley values of the words (None above SHAPLEY_MAX words), their check, and ρ with each method."""
    item = make_item(pre, text)
    check_removal(pre, removal)
    passed = references.full(pre, item)
    shap = references.shapley(pre, item, removal, passed.target)
    if shap is None:
        return None
    values = last_only(pre, passed)
    corr = correlations(item, values, {"shapley": shap["words"].tolist()})
    return {
        "words": word_texts(item),
        "values": shap["words"].tolist(),
        "check": {k: shap[k] for k in ("v_all", "v_none", "sum")},
        "correlation": {m: row.get("shapley") for m, row in corr.items()},
    }
