"""Which model predicts: a decoder the server offers (``attn_core.models``), by name or directory."""

from __future__ import annotations

from .. import models
from ..models import ModelUnavailable


def decoders() -> list[str]:
    """The offered names of the decoders, in menu order (the shipped one first)."""
    return [d["name"] for d in models.offered() if d.get("causal")]


def decoder(name: str = ""):
    """``models.load(name)`` (default: the first offered decoder), refused if it does not predict the next token."""
    spec = name.strip() if isinstance(name, str) else ""
    if not spec:
        offered = decoders()
        if not offered:
            raise ModelUnavailable("nexttoken_no_decoder")
        spec = offered[0]
    m = models.load(spec)
    if not m.causal:
        offered = decoders()
        if not offered:
            raise ModelUnavailable("nexttoken_no_decoder")
        raise ModelUnavailable("nexttoken_not_decoder", spec=spec, options=", ".join(offered))
    return m
