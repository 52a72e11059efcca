"""Moved: ``python -m attn_core interpret`` and ``heads`` live in ``attn_core.cli.interpret`` (this name still
works)."""

from ..cli.interpret import add_cli, cmd_heads, cmd_interpret

__all__ = ["add_cli", "cmd_heads", "cmd_interpret"]
