"""What the model predicts at every position, and at every layer: the logit lens.

A decoder predicts the next token at every position (that is how it is trained: each position's target is the
token after it), not only at the last. The logit lens (nostalgebraist 2020) reads the residual stream after each
block through the model's own final norm and unembedding, as if the model stopped there: row 0 reads the
embeddings, row l the stream after block l, and the last row, after every block, is the model's own logits.
``decided_at`` of a position is the first row from which the final top token stays on top at every later row.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .. import models
from .prompt import Prompt, encode, label, labels, piece


@dataclass(frozen=True)
class Lens:
    prompt: Prompt
    top: torch.Tensor  # (layers + 1, L) long: the top token of each row and position
    prob: torch.Tensor  # (layers + 1, L): its probability
    final_prob: torch.Tensor  # (layers + 1, L): the probability of the final top token at that row
    decided_at: tuple[int, ...]  # per position, a row index 0..layers
    last_diff: float  # max |last row's logits - the model's logits|

    def cells(self, tokenizer) -> list[list[dict]]:
        """One list per row, first to last, of one ``{"token", "label", "id", "prob"}`` per position (``label``: the
        token as a page names it, ``prompt.label``)."""
        names: dict[int, tuple[str, str]] = {}
        out = []
        for row_ids, row_p in zip(self.top.tolist(), self.prob.tolist()):
            row = []
            for i, p in zip(row_ids, row_p):
                if i not in names:
                    names[i] = piece(tokenizer, i), label(tokenizer, i)
                row.append({"token": names[i][0], "label": names[i][1], "id": i, "prob": p})
            out.append(row)
        return out


def read(m, resid: torch.Tensor) -> torch.Tensor:
    """(..., vocab) logits of residual vectors (..., d_model) through the final norm and the unembedding."""
    W_U, b_U = models.unembed(m)
    with torch.inference_mode():
        logits = models.final_norm(m)(resid.to(W_U.dtype)) @ W_U.T
    return logits if b_U is None else logits + b_U


def decided(top: torch.Tensor) -> tuple[int, ...]:
    """Per position, the first row from which the last row's top token stays on top."""
    same = top == top[-1:]  # (rows, L)
    rows = top.shape[0]
    out = []
    for p in range(top.shape[1]):
        r = rows - 1
        while r > 0 and bool(same[r - 1, p]):
            r -= 1
        out.append(r)
    return tuple(out)


def lens_of(m, run, prompt: Prompt) -> Lens:
    """The lens of a ``models.forward`` run (its ``resid``: layers + 1 rows, before the final norm)."""
    rows = run.resid.shape[0]
    top = torch.empty(rows, run.resid.shape[1], dtype=torch.long)
    prob, final_prob = torch.empty(top.shape), torch.empty(top.shape)
    last_logits = None
    for r in range(rows - 1, -1, -1):  # the last row first: the others are compared with its top token
        logits = read(m, run.resid[r])
        p = torch.softmax(logits.double(), -1)
        top[r] = p.argmax(-1)
        prob[r] = p.gather(-1, top[r][:, None])[:, 0].float()
        final_prob[r] = p.gather(-1, top[-1][:, None])[:, 0].float()
        if r == rows - 1:
            last_logits = logits
    diff = float((last_logits - run.logits).abs().max())
    return Lens(prompt, top, prob, final_prob, decided(top), diff)


def lens(m, text: str) -> Lens:
    """The logit lens of a prompt (cut to the context from the start)."""
    prompt = encode(m, text)
    return lens_of(m, models.forward(m, list(prompt.ids)), prompt)


def positions(m, logits: torch.Tensor, prompt: Prompt) -> list[dict]:
    """Each position's top prediction (L, vocab logits), beside the token that actually follows it; each token
    also by its label (``label``, ``top_label``, ``next_label``: ``prompt.labels``, the rule every page names a
    token by)."""
    p = torch.softmax(logits.double(), -1)
    named = labels(m.tokenizer, prompt.ids)
    out = []
    for i, ids in enumerate(prompt.ids):
        top = int(p[i].argmax())
        cell = {"position": i, "token": prompt.pieces[i], "top": top, "top_piece": piece(m.tokenizer, top)}
        cell |= {"label": named[i], "top_label": label(m.tokenizer, top), "top_prob": float(p[i, top])}
        if i + 1 < len(prompt.ids):
            nxt = prompt.ids[i + 1]
            cell |= {"next": nxt, "next_prob": float(p[i, nxt]), "next_rank": int((p[i] > p[i, nxt]).sum()) + 1}
            cell["next_label"] = named[i + 1]
            cell["hit"] = top == nxt
        out.append(cell)
    return out
