"""Two traces compared: A (pinned) and B (the settings now). Pure PyTorch; the app and the CLI show these numbers.

``diff(a, b)`` is the ``diff`` object of ``python -m attn_core compare``: ``weights`` (per head, B − A, when the
weights' shapes (H, L, S) agree, else null), ``max_abs`` and ``entropy`` (per head and query, for A and for B: the
largest weight of each row and the entropy of each row in nats), which can be compared whatever the shapes.
``changed_most(a, b, head)`` names what moved most, in numbers; ``words(change, lang)`` says it in the catalogue's
language. ``step_matrices(a, b, step, head)``: one step's main matrix for A and for B, and B − A where they agree.
Shapes: H heads, L queries, S keys.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from . import notebook_text

# the step whose main matrix a comparison shows -> (the trace's tensor, its rows, its columns); a variant's own step
# shows the weights it amounts to
MAIN = {
    "st_tokens": ("x", "query", "dim"),
    "st_qkv": ("Q", "query", "dim"),
    "st_scores": ("scaled_scores", "query", "key"),
    "st_mask": ("mask", "query", "key"),
    "st_softmax": ("attn", "query", "key"),
    "st_output": ("context", "query", "dim"),
}
VARIANT_MAIN = ("attn", "query", "key")


def entropy(attn: torch.Tensor) -> torch.Tensor:
    """Each row's entropy in nats, −Σ w log w with 0 log 0 = 0 (an empty row: 0).  (H, L, S) -> (H, L)"""
    w = attn.double().clamp_min(0)
    return -(w * torch.where(w > 0, w.log(), torch.zeros_like(w))).sum(-1) + 0.0  # + 0.0: no -0.0


def _plain(t: torch.Tensor) -> list:
    return t.detach().cpu().tolist()


def shapes_agree(a, b) -> bool:
    return tuple(a.attn.shape) == tuple(b.attn.shape)


def diff(a, b) -> dict:
    """The ``diff`` object of ``compare --json`` for traces ``a`` and ``b`` (anything with ``attn`` (H, L, S))."""
    agree = shapes_agree(a, b)
    return {
        "shapes_agree": agree,
        "weights": [_plain(b.attn[h] - a.attn[h]) for h in range(a.attn.shape[0])] if agree else None,
        "max_abs": {"a": _plain(a.attn.abs().amax(-1)), "b": _plain(b.attn.abs().amax(-1))},  # (H, L) each
        "entropy": {"a": _plain(entropy(a.attn)), "b": _plain(entropy(b.attn))},  # (H, L) each
    }


@dataclass(frozen=True)
class Change:
    """What changed most for one head: the query whose weights moved most (when the shapes agree), its strongest key
    in A and in B with their weights, and the mean entropy per query before and after."""

    agree: bool
    entropy_a: float
    entropy_b: float
    query: int | None = None
    query_word: str = ""
    key_a: int | None = None
    key_a_word: str = ""
    weight_a: float = 0.0
    key_b: int | None = None
    key_b_word: str = ""
    weight_b: float = 0.0
    moved: float = 0.0  # the largest |B − A| of that query's row


def changed_most(a, b, head: int = 0) -> Change:
    """What changed most between ``a`` and ``b`` for head ``head`` (clamped to each trace's heads)."""
    ha, hb = min(head, a.attn.shape[0] - 1), min(head, b.attn.shape[0] - 1)
    A, B = a.attn[ha].double(), b.attn[hb].double()  # (L, S) each
    ent_a, ent_b = float(entropy(A[None])[0].mean()), float(entropy(B[None])[0].mean())
    if A.shape != B.shape:
        return Change(False, ent_a, ent_b)
    moved = (B - A).abs().amax(-1)  # (L,)
    q = int(moved.argmax())
    ka, kb = int(A[q].argmax()), int(B[q].argmax())
    words_a, words_b = list(a.key_tokens.words), list(b.key_tokens.words)
    return Change(
        True,
        ent_a,
        ent_b,
        query=q,
        query_word=list(b.tokens.words)[q],
        key_a=ka,
        key_a_word=words_a[ka],
        weight_a=float(A[q, ka]),
        key_b=kb,
        key_b_word=words_b[kb],
        weight_b=float(B[q, kb]),
        moved=float(moved[q]),
    )


def words(change: Change, lang: str = "en") -> str:
    """``change`` as one line of plain words in ``lang`` (the catalogue's ``pair.*`` texts)."""
    trend = "pair.entropy_same"
    if abs(change.entropy_b - change.entropy_a) >= 0.005:
        trend = "pair.entropy_fell" if change.entropy_b < change.entropy_a else "pair.entropy_rose"
    said = notebook_text.text(trend, lang, a=f"{change.entropy_a:.2f}", b=f"{change.entropy_b:.2f}")
    gap = "" if lang == "zh" else " "  # Chinese sentences follow each other without a space
    if not change.agree:
        return notebook_text.text("pair.shapes_differ", lang) + gap + said
    if change.moved < 0.005:
        return notebook_text.text("pair.no_move", lang) + gap + said
    params = dict(
        q=change.query_word,
        ka=change.key_a_word,
        wa=f"{change.weight_a:.2f}",
        kb=change.key_b_word,
        wb=f"{change.weight_b:.2f}",
    )
    key = "pair.moved_same" if change.key_a == change.key_b else "pair.moved"
    return notebook_text.text(key, lang, **params) + gap + said


@dataclass(frozen=True)
class StepPair:
    """One step's main matrix for A and for B (2-D, as float), and B − A when their shapes agree."""

    name: str  # the trace's tensor
    rows: str  # what the rows are: "query"
    cols: str  # what the columns are: "key" or "dim"
    a: torch.Tensor
    b: torch.Tensor
    diff: torch.Tensor | None

    @property
    def bounds(self) -> tuple[float, float]:
        """One colour scale for A and B: the smallest and largest finite value of both."""
        both = torch.cat([self.a.flatten(), self.b.flatten()])
        both = both[torch.isfinite(both)]
        return (0.0, 0.0) if both.numel() == 0 else (float(both.min()), float(both.max()))


def _matrix(trace, name: str, head: int) -> torch.Tensor:
    t = getattr(trace, name)
    if t.dim() == 3:
        t = t[min(head, t.shape[0] - 1)]
    return t.detach().double()


def step_matrices(a, b, step: str, head: int = 0) -> StepPair:
    """The main matrix of step ``step`` (a key of ``MAIN``, or a variant's own step) for A and B, head ``head``."""
    name, rows, cols = MAIN.get(step, VARIANT_MAIN)
    ma, mb = _matrix(a, name, head), _matrix(b, name, head)
    return StepPair(name, rows, cols, ma, mb, mb - ma if ma.shape == mb.shape else None)
