"""The long-lived heap, kept out of every garbage-collector pass (see ``explorer.server``).

A leaf module: the server freezes the heap once its heavy modules are imported, and the model
loader again once a model's weights are in; neither needs the other to do it.
"""

from __future__ import annotations

import gc


def freeze_heap() -> None:
    """Collect once, then move every object alive into the permanent generation."""
    gc.collect()
    gc.freeze()
