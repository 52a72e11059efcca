"""The UI's strings as data: ``attn_core/locales/<lang>.toml``, one file per language, read with ``tomllib``.

A TOML table is a family of keys (``[pc] total = ...`` is the key ``pc.total``); ``strings(lang)`` flattens a
file to dotted keys. Pure Python, no Streamlit: the engine (the notebook export, a kernel's label) reads the same
texts as the app.
The files are this package's own data (``importlib.resources``): the engine reads no folder of the UI's, and the
app (``explorer.base.i18n``) reads them through this module.
"""

from __future__ import annotations

import functools
import tomllib
from importlib import resources

FOLDER = resources.files(__name__)  # this package: <lang>.toml beside this module
LANGS = ("en", "zh")


class LocaleError(ValueError):
    """A locale file that cannot be read: a TOML error (a key defined twice among them) or a missing file."""


def path(lang: str):
    if lang not in LANGS:
        raise LocaleError(f"unknown language {lang!r}: use one of {', '.join(LANGS)}")
    return FOLDER / f"{lang}.toml"


def flatten(table: dict, prefix: str = "") -> dict[str, str]:
    """``{"pc": {"total": "Total"}}`` -> ``{"pc.total": "Total"}``; every leaf must be a string."""
    out: dict[str, str] = {}
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, name + "."))
        elif isinstance(value, str):
            out[name] = value
        else:
            raise LocaleError(f"{name} is a {type(value).__name__}, not a string: quote it")
    return out


def parse(text: str, where: str = "<text>") -> dict[str, str]:
    """The dotted keys of a locale file's text (a duplicate key is a LocaleError naming the file and line)."""
    try:
        return flatten(tomllib.loads(text))
    except tomllib.TOMLDecodeError as err:
        raise LocaleError(f"{where}: {err} (a key defined twice, or not valid TOML)") from None


@functools.cache
def strings(lang: str) -> dict[str, str]:
    """Every string of one language, by dotted key (cached: read once per process; do not mutate)."""
    file = path(lang)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as err:
        raise LocaleError(f"cannot read {file}: {err.strerror or err}") from None
    return parse(text, file.name)


def kernel_label(name: str, lang: str = "en") -> str:
    """An attention variant's name for people, in that language (English when that language has none; KeyError
    when the catalogue has none at all)."""
    key = f"kernel.{name}.label"
    return strings(lang).get(key) or strings("en")[key]
