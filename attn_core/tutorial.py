"""The source tutorial ("attention from theory to code"), step by step, computed by the engine.

``walkthrough()`` returns every number and shape the tutorial prints, in its order, so the
Tutorial page and the tests read them from one place. The tutorial seeds 123 before the
embedding and, as its printed numbers require, again before drawing W_q, W_k, W_v; the
3-head weights and the second sequence of the cross-attention example continue that stream.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from . import steps
from .config import TUTORIAL_SENTENCE, Settings
from .tokenize import tokenize
from .trace import Trace, run_trace

SEED = 123
FOCUS = 1  # the query "is", the tutorial's x_2
PRINTED = {  # what the tutorial prints, to 4 decimals
    "vocab": {"Life": 0, "dessert": 1, "eat": 2, "first": 3, "is": 4, "short": 5},
    "ids": [0, 4, 5, 2, 1, 3],
    "omega_2": [8.5808, -7.6597, 3.2558, 1.0395, 11.1466, -0.4800],
    "attention_weights_2": [0.2912, 0.0106, 0.0982, 0.0625, 0.4917, 0.0458],
    "shapes": {
        "embedded_sentence": (6, 16),
        "query_2": (24,),
        "keys": (6, 24),
        "values": (6, 28),
        "context_vector_2": (28,),
        "multihead_query_2": (3, 24),
        "multihead_keys": (3, 6, 24),
        "multihead_values": (3, 6, 28),
        "final_context": (84,),
        "cross_context": (28,),
    },
}


def preset() -> Settings:
    """The tutorial's single-head setting: d_model 16, d_q = d_k = 24, d_v = 28, scaled dot."""
    return Settings(
        sentence=TUTORIAL_SENTENCE,
        seed=SEED,
        init="tutorial",
        d_model=16,
        d_q=24,
        d_k=24,
        d_v=28,
        heads=1,
        layout="tutorial",
        score="scaled_dot",
    )


@dataclass(frozen=True)
class Walkthrough:
    trace: Trace  # the single-head example, every intermediate
    query_2: torch.Tensor  # (24,)
    omega_2: torch.Tensor  # (6,)
    attention_weights_2: torch.Tensor  # (6,)
    context_vector_2: torch.Tensor  # (28,)
    multihead_query_2: torch.Tensor  # (3, 24)
    multihead_keys: torch.Tensor  # (3, 6, 24)
    multihead_values: torch.Tensor  # (3, 6, 28)
    multihead_weights_2: torch.Tensor  # (3, 6)
    final_context: torch.Tensor  # (84,)
    embedded_sentence_2: torch.Tensor  # (8, 16) the cross-attention example's target sequence
    cross_weights: torch.Tensor  # (6,) its second token over the source's 6 tokens
    cross_context: torch.Tensor  # (28,)

    def matches(self, name: str, *, atol: float = 5e-5) -> bool:
        """Whether a printed vector ("omega_2", "attention_weights_2") is reproduced to its 4 decimals."""
        return bool(torch.allclose(getattr(self, name), torch.tensor(PRINTED[name]), atol=atol))

    def shapes(self) -> dict[str, tuple[int, ...]]:
        t = self.trace
        return {
            "embedded_sentence": tuple(t.x.shape),
            "query_2": tuple(self.query_2.shape),
            "keys": tuple(t.K[0].shape),
            "values": tuple(t.V[0].shape),
            "context_vector_2": tuple(self.context_vector_2.shape),
            "multihead_query_2": tuple(self.multihead_query_2.shape),
            "multihead_keys": tuple(self.multihead_keys.shape),
            "multihead_values": tuple(self.multihead_values.shape),
            "final_context": tuple(self.final_context.shape),
            "cross_context": tuple(self.cross_context.shape),
        }


def walkthrough() -> Walkthrough:
    t = run_trace(preset())
    x, d_k = t.x, t.settings.d_k
    scale = steps.score_scale("scaled_dot", d_k)
    # the tutorial's stream after seeding: W_q, W_k, W_v (single head), then the 3-head weights, then rand(8, 16)
    g = torch.Generator().manual_seed(SEED)
    for shape in [(24, 16), (24, 16), (28, 16)]:
        torch.rand(*shape, generator=g)
    W_q3, W_k3, W_v3 = (
        torch.rand(3, 24, 16, generator=g),
        torch.rand(3, 24, 16, generator=g),
        torch.rand(3, 28, 16, generator=g),
    )
    target = torch.rand(8, 16, generator=g)

    q3 = steps.project(x[FOCUS : FOCUS + 1], W_q3)[:, 0]  # (3, 24)
    k3, v3 = steps.project(x, W_k3), steps.project(x, W_v3)  # (3, 6, 24), (3, 6, 28)
    everywhere = torch.ones(1, 6, dtype=torch.bool)
    w3 = steps.staged_softmax(torch.einsum("hd,hsd->hs", q3, k3).unsqueeze(1) * scale, everywhere).weights[:, 0]
    ctx3 = torch.einsum("hs,hsd->hd", w3, v3)

    W = t.weights
    q_cross = target[1] @ W.W_q[0].T  # (24,)
    cross_w = steps.staged_softmax((q_cross @ t.K[0].T * scale).unsqueeze(0), everywhere).weights[0]
    return Walkthrough(
        trace=t,
        query_2=t.Q[0, FOCUS],
        omega_2=t.scores[0, FOCUS],
        attention_weights_2=t.softmax.weights[0, FOCUS],
        context_vector_2=t.context[0, FOCUS],
        multihead_query_2=q3,
        multihead_keys=k3,
        multihead_values=v3,
        multihead_weights_2=w3,
        final_context=ctx3.reshape(-1),
        embedded_sentence_2=target,
        cross_weights=cross_w,
        cross_context=cross_w @ t.V[0],
    )


def vocab_and_ids() -> tuple[dict[str, int], list[int]]:
    tok = tokenize(TUTORIAL_SENTENCE)
    return tok.vocab, list(tok.ids)
