"""``python -m attn_core train``: a Lab run. Its flags and its command live with the Lab (``attn_core.lab``)."""

from __future__ import annotations


def add(sub) -> dict:
    try:
        from ..lab.cli import add_cli, cmd_train
    except ImportError:  # the Lab as one module
        from ..lab import add_cli, cmd_train

    add_cli(sub)
    return {"train": cmd_train}
