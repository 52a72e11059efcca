"""The trained encoder's names as the pages first knew them: everything now lives in ``attn_core.models``
(one module per architecture family behind one interface). Import ``attn_core.models`` in new code."""

from __future__ import annotations

from .models import *  # this module is that interface under its old name
from .models import __all__ as _models_all
from .models.locate import _hub_reachable, _import_transformers  # noqa: F401 - the old private names


def _self_attention(model, layer: int):
    """A BERT encoder's self-attention module of ``layer`` (what the tests hook)."""
    return model.encoder.layer[layer].attention.self


__all__ = list(_models_all)
