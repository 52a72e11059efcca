"""Typed errors the UI and the CLI can show as they are.

Every error names the setting at fault (``field``, keyed like the CLI flags) and says how
to fix it, so a page can put the message next to the control and keep everything else working.
"""

from __future__ import annotations


class AttentionConfigError(ValueError):
    """A setting, or a combination of settings, that cannot work.

    ``str(err)`` is one human sentence: what is wrong and what to change.
    """

    def __init__(self, field: str, message: str, fix: str = "") -> None:
        self.field = field
        self.message = message
        self.fix = fix
        super().__init__(f"{message} {fix}".strip())


class EmptyTextError(AttentionConfigError):
    """The text has no word or character left after dropping punctuation."""


class TooManyTokensError(AttentionConfigError):
    """More tokens than the live limit."""
