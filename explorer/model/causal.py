"""The Real model page on a decoder: its causal pattern drawn as masked, and each family's own code for one head
(written in its module, ``attn_core/models/<family>.py``).

A decoder's query may not look at later keys; the model's weight there is exactly 0, but drawn as 0 it reads
as "looked and found nothing". So those cells are drawn blank (NaN: a gap in the heatmap, no hover), and the
page says that the blank upper triangle is the causal mask.
"""

from __future__ import annotations

import torch

from attn_core.models import family


def blank_future(weights: torch.Tensor) -> torch.Tensor:
    """``weights`` (..., L, L) with every key after its query set to NaN (drawn blank: masked)."""
    L = weights.shape[-1]
    future = torch.ones(L, L, dtype=torch.bool).triu(1)
    return weights.float().masked_fill(future, float("nan"))


def shown(weights: torch.Tensor, causal: bool) -> torch.Tensor:
    """What a heatmap of attention weights draws: a decoder's with the masked upper triangle blank."""
    return blank_future(weights) if causal else weights


def projection_code(pre, layer: int, head: int, shapes: dict) -> str:
    """How this family's own module holds the head's query weights (the first step of taking it apart): the
    family's own code text (``projection_code`` of ``attn_core.models.family``). ``shapes``: the tuples of W_q, x
    and Q, for the comments."""
    return family.of(pre).projection_code(pre, layer, head, shapes)


def apart_intro(pre, weights, layer: int, head: int) -> str:
    """What taking a decoder's head apart starts from, true of its family: the normalised residual stream as x,
    biases only where the model has them, rotary positions only where it turns its queries and keys."""
    from explorer.base.i18n import t

    parts = [t("dec.apart_intro", h=head, l=layer, norm=family.of(pre).ATTN_NORM or t("dec.apart_norm"))]
    if weights.b_q is not None:
        parts.append(t("dec.apart_bias"))
    if getattr(weights, "inv_freq", None) is not None:
        parts.append(t("dec.apart_rotary"))
    return " ".join(parts)


CAUSAL_LATEX = (
    r"\tilde e_{ij} = \begin{cases} e_{ij} & j \le i \text{ (a key at or before the query)} \\"
    r" -\infty & j > i\end{cases}"
)


def causal_code(L: int) -> str:
    return (
        f"mask = torch.ones({L}, {L}, dtype=torch.bool).tril()   # True = may attend: keys up to the query\n"
        "scaled = scaled.masked_fill(~mask, float('-inf'))   # a later key gets weight exactly 0"
    )
