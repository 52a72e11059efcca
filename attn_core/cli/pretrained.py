"""``python -m attn_core pretrained``: one head of a trained encoder recomputed (``attn_core.pretrained``)."""

from __future__ import annotations


def add(sub) -> dict:
    try:
        from .. import pretrained
    except ImportError:  # without transformers there is no trained model: the other commands still work
        return {}
    pretrained.add_cli(sub)
    return {"pretrained": pretrained.cmd_pretrained}
