"""Inside the model on a decoder: what is measured is the next-token prediction. One intervention (two passes)
is computed here and cached on plain values; the 72-or-so-head maps and the head roles are requests for the
background jobs (``explorer.jobs.heavy``, run by ``attn_core.heavy``), which load the offered model by its
name. Never tensors in a session."""

from __future__ import annotations

from attn_core import models as pt
from attn_core.interpret import ablate
from explorer.base.cache import bounded
from explorer.model import real


def _pre(name: str):
    pre = real.wait_for(name)
    assert pre is not None
    return pre


def piece(pre, token: int) -> str:
    """One token as the pages show it (a byte piece as <E4>, never "\ufffd")."""
    return pt.display_pieces(pre.tokenizer, [token])[0][0]


def check_pair(pre, a: str, b: str) -> tuple[str, str]:
    """The two named tokens, each one token of the vocabulary; else the engine's error (``next_token_one``),
    which says how many tokens it is and which pieces."""
    ablate.token_id(pre, a)
    ablate.token_id(pre, b)
    return a, b


@bounded(max_mib=16)
def intervention(name: str, sentence: str, heads: tuple, mode: str, masked: tuple, pair: tuple | None) -> dict:
    """The next token before and after ablating ``heads`` / masking ``masked``, as plain values."""
    pre = _pre(name)
    r = ablate.next_token(pre, sentence, heads, mode, masked, pair)
    out = {k: r[k] for k in ("logprob", "logprob_original", "top_token")}
    out["top_piece"] = piece(pre, r["top_token"])
    if pair is not None:
        out |= {"logit_diff": r["logit_diff"], "logit_diff_original": r["logit_diff_original"]}
    return out


def importance(name: str, sentence: str, mode: str, masked: tuple, pair) -> tuple[str, dict]:
    """The request for the ablation map on the next token: each head ablated alone."""
    args = {"model": name, "sentence": sentence, "mode": mode, "masked": list(masked)}
    return "next_token_importance", args | {"pair": None if pair is None else list(pair)}


def patching(name: str, clean: str, corrupted: str, pair) -> tuple[str, dict]:
    args = {"model": name, "clean": clean, "corrupted": corrupted}
    return "next_token_patching", args | {"pair": None if pair is None else list(pair)}


def roles(name: str) -> tuple[str, dict]:
    """Once per server and model: the held-out set is the engine's own."""
    return "decoder_roles", {"model": name}
