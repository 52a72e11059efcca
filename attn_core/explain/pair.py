"""Why two sentences are similar: cos(e(a), e(b)) and who carries it.

tokens     integrated gradients of cos(e(a'), e(b)) over a's pieces (b's target fixed), and the
           same for b; completeness: Σ = cos(e(a), e(b)) − cos(e(baseline of a), e(b))
shapley    (on request, at most 10 words each) v(S) = cos(e(a with only S), e(b))
pairs      the exact split of the cosine over piece pairs: with h the final vectors,
           cos = Σ_i Σ_j h^a_i · h^b_j / (n_a n_b ‖e(a)‖ ‖e(b)‖)  (mean pooling is linear)
attention  what attention alone would say: each sentence's rollout per piece
"""

from __future__ import annotations

import numpy as np

from ..errors import AttentionConfigError
from . import correlation as C
from . import encoder as E
from . import methods, references
from .explain import head_mean
from .sentence import is_decoder, make_item

EXAMPLES = {  # known failures of sentence encoders
    "negation": ("I like this film", "I do not like this film"),
    "roles": ("the dog bit the man", "the man bit the dog"),
    "predicates": ("The chef cooked the fish in the kitchen", "The chef threw the fish out of the kitchen"),
}


def token_pairs(passed_a, passed_b) -> np.ndarray:
    """(n_a, n_b) the cosine split over piece pairs; it sums to cos(e(a), e(b)) exactly."""
    ha, hb = passed_a.hidden[-1][0].double(), passed_b.hidden[-1][0].double()
    ea, eb = ha.mean(0), hb.mean(0)
    return ((ha @ hb.T) / (ha.shape[0] * hb.shape[0] * ea.norm() * eb.norm())).numpy()


def items(pre, a: str, b: str):
    if is_decoder(pre):  # a decoder predicts a next token; it has no sentence embedding to compare
        raise AttentionConfigError("second", "explain_pair_decoder", model=pre.name)
    if not isinstance(b, str) or not b.strip():
        raise AttentionConfigError("second", "explain_second_empty")
    return make_item(pre, a), make_item(pre, b, field="second")


def pair(pre, a: str, b: str, *, steps: int = references.IG_STEPS) -> dict:
    ia, ib = items(pre, a, b)
    pa, pb = references.full(pre, ia), references.full(pre, ib)
    cos = float(E.cosine(pa.pooled[0].double(), pb.pooled[0].double()))
    ig_a = references.integrated_gradients(pre, ia.ids, pb.pooled[0], steps)
    ig_b = references.integrated_gradients(pre, ib.ids, pa.pooled[0], steps)
    ra, rb = methods.rollout(head_mean(pa)), methods.rollout(head_mean(pb))
    notes = [{"code": "identical"}] if " ".join(a.split()) == " ".join(b.split()) else []
    return {
        "tokens_a": list(ia.pieces),
        "tokens_b": list(ib.pieces),
        "pair_cosine": cos,
        "pair_attribution": {
            "method": "ig",
            "steps": steps,
            "a": ig_a["attr"].tolist(),
            "b": ig_b["attr"].tolist(),
            "delta_a": ig_a["delta"],
            "delta_b": ig_b["delta"],
            "completeness_error": {"a": ig_a["error"], "b": ig_b["error"]},
        },
        "token_pairs": token_pairs(pa, pb).tolist(),
        "attention_alone": {"a": ra.tolist(), "b": rb.tolist()},
        "agreement": {  # does attention alone rank the pieces as the attributions do?
            "a": C.correlate(ra[ia.inner], ig_a["attr"][ia.inner]),
            "b": C.correlate(rb[ib.inner], ig_b["attr"][ib.inner]),
        },
        "notices": notes,
    }


def pair_shapley(pre, a: str, b: str, removal: str = "attention") -> dict:
    """Exact Shapley values of each sentence's words for the cosine to the other (≤ 10 words each)."""
    ia, ib = items(pre, a, b)
    pa, pb = references.full(pre, ia), references.full(pre, ib)
    sa = references.shapley(pre, ia, removal, pb.pooled[0])
    sb = references.shapley(pre, ib, removal, pa.pooled[0])
    from .explain import word_texts

    def plain(s, item):
        if s is None:
            return None
        return {"words": word_texts(item), "values": s["words"].tolist(), "v_all": s["v_all"], "v_none": s["v_none"]}

    return {"a": plain(sa, ia), "b": plain(sb, ib), "removal": removal}
