"""``python -m attn_core bench``: its flags and its command live with the benchmark (``attn_core.bench.cli``)."""

from __future__ import annotations


def add(sub) -> dict:
    from ..bench.cli import add_cli, cmd_bench

    add_cli(sub)
    return {"bench": cmd_bench}
