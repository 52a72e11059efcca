"""Typed errors the UI and the CLI can show as they are.

Every error names the setting at fault (``field``, keyed like the CLI flags), carries a ``code``
and its ``params``, and says how to fix it, so a page can put the message next to the control, in
the UI's language (the app's catalogue translates ``code`` with the same params), and keep
everything else working. ``messages.MESSAGES`` is the English text of every code: what the CLI prints.
"""

from __future__ import annotations

from .messages import MESSAGES

__all__ = ["MESSAGES", "AttentionConfigError", "EmptyTextError", "TooManyTokensError"]


class AttentionConfigError(ValueError):
    """A setting, or a combination of settings, that cannot work.

    ``AttentionConfigError(field, code, **params)``; ``str(err)`` is one English sentence: what is
    wrong and what to change.
    """

    def __init__(self, field: str, code: str, /, **params) -> None:
        message, fix = MESSAGES[code]
        self.field = field
        self.code = code
        self.params = {"field": field, **params}
        self.message = message.format(**self.params)
        self.fix = fix.format(**self.params)
        super().__init__(f"{self.message} {self.fix}".strip())


class EmptyTextError(AttentionConfigError):
    """The text has no word or character left after dropping punctuation."""


class TooManyTokensError(AttentionConfigError):
    """More tokens than the live limit."""
