"""The ``Control`` type: one setting a user can change, how a link's value is read and written for it."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from explorer.base.urlcheck import switch

MAX_TEXT = 1000  # characters of a sentence (it travels in the URL; 1000 CJK characters are ~9 KB)


@dataclass(frozen=True)
class Control:
    """One setting. ``kind``: int, float, switch, text, area (a multi-line text), choice, radio, slider."""

    name: str
    kind: str
    default: Any
    section: str = ""  # the catalogue key of the sidebar heading it sits under
    low: float | None = None
    high: float | None = None
    step: float = 1
    options: tuple = ()
    fmt: str = "opt."  # a choice's labels: the catalogue key prefix of each option
    shown: Callable[[dict], bool] | None = None  # given the values drawn before it; None = always
    row: str = ""  # consecutive controls with the same row share one line of columns
    title: str = ""  # the catalogue key of its label, when not its name

    def parse(self, raw: str, options=None, high=None) -> Any:
        """A URL value as this control's value, or None when it cannot be used."""
        if self.kind in ("int", "float", "slider"):
            try:
                value = float(raw)
            except (TypeError, ValueError, OverflowError):
                return None
            if not math.isfinite(value) or not self.low <= value <= (self.high if high is None else high):
                return None
            if self.kind == "int":
                return int(value) if value == int(value) else None
            return value
        if self.kind == "switch":  # 1/true/yes/on, 0/false/no/off: one reading for every switch in a link
            return switch(raw)
        if self.kind in ("text", "area"):
            return raw[:MAX_TEXT]
        return next((o for o in (self.options if options is None else options) if str(o) == raw), None)

    def to_url(self, value: Any) -> str:
        if self.kind == "switch":
            return "true" if value else "false"
        return repr(float(value)) if self.kind in ("float", "slider") else str(value)
