"""Moved: ``python -m attn_core explain`` and ``explain-table`` live in ``attn_core.cli.explain`` (this name still
works)."""

from ..cli.explain import add_cli, cmd_explain, cmd_table, payload

__all__ = ["add_cli", "cmd_explain", "cmd_table", "payload"]
