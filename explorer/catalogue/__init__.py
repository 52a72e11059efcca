"""A bridge for feature modules written before the catalogue became data: a module here may still hold
``STRINGS`` (key -> (English, 简体中文)) and ``ERRORS_ZH`` (an engine error code -> its Chinese message and fix);
``explorer.i18n`` merges them after explorer/locales/<lang>.toml, and a key defined twice is an error. New strings
belong in the locale files; this package holds none today."""

from __future__ import annotations

import importlib
import pkgutil


def merged(strings: dict, errors_zh: dict) -> None:
    """Add every feature module's strings and Chinese error texts to ``strings`` and ``errors_zh``."""
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for ours, theirs in ((strings, getattr(module, "STRINGS", {})), (errors_zh, getattr(module, "ERRORS_ZH", {}))):
            twice = set(ours) & set(theirs)
            if twice:
                raise KeyError(f"catalogue keys defined twice ({info.name}): {sorted(twice)}")
            ours.update(theirs)
