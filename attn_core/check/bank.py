"""The concept check's item bank (``bank.toml``): read once, checked, and each item shown in one language.

``load()`` -> every ``Item`` (a ``BankError`` names the first fault of the file); ``render(item, lang, settings)``
-> the item as the check and ``python -m attn_core items --json`` show it: ``id``, ``concept``, ``question``,
``options``, ``misconceptions`` (``None`` for the correct option), ``answer`` (the correct option's index) and
``live``. A live item's options and answer come from ``attn_core.check.live`` for the settings given.

A student's answer that does not fit (an item not in the check, an option it lacks, a phase other than pre or post)
is a ``CheckError`` whose text the bank holds in both languages (``[messages]``).
"""

from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass
from importlib import resources

from ..config import Settings
from ..locales import LANGS
from .live import LIVE, LiveUnavailable

CONCEPTS = ("qkv", "scores", "softmax", "masks", "heads", "cross", "cost", "positions", "decoder", "induction")
PHASES = ("pre", "post")
ID = re.compile(r"^[a-z0-9-]{1,32}$")
MIN_ITEMS = 16
MAX_CHECK = 24  # items in one check


class BankError(ValueError):
    """The bank's file breaks a rule (the message names the item and the rule)."""


class CheckError(ValueError):
    """An answer or a list of items that does not fit the check: ``code`` (a key of ``[messages]``) and params."""

    def __init__(self, code: str, **params) -> None:
        self.code, self.params = code, params
        super().__init__(self.text("en"))

    def text(self, lang: str) -> str:
        return message(self.code, lang, **self.params)


@dataclass(frozen=True)
class Item:
    id: str
    concept: str
    question: dict  # lang -> text (a live item's with placeholders)
    options: tuple = ()  # a static item's: ({lang: text}, misconception {lang: text} or None), ...
    live: str = ""  # a live item's function in attn_core.check.live.LIVE
    templates: dict = None  # a live item's: template name -> {lang: text}
    misconceptions: dict = None  # a live item's: misconception key -> {lang: text}


def _texts(where: str, value) -> dict:
    """``{en: ..., zh: ...}``, each a non-empty string, nothing else."""
    if not isinstance(value, dict) or set(value) != set(LANGS):
        raise BankError(f"{where}: needs exactly the languages {', '.join(LANGS)}")
    for lang, text in value.items():
        if not isinstance(text, str) or not text.strip():
            raise BankError(f"{where}.{lang}: empty")
    return dict(value)


def _option(where: str, raw: dict) -> tuple[dict, dict | None]:
    extra = set(raw) - set(LANGS) - {"correct", "misconception"}
    if extra:
        raise BankError(f"{where}: unknown keys {sorted(extra)}")
    text = _texts(where, {k: raw[k] for k in LANGS if k in raw})
    correct = raw.get("correct", False)
    if correct is not True and correct is not False:
        raise BankError(f"{where}.correct: true or false")
    if correct and "misconception" in raw:
        raise BankError(f"{where}: the correct option names no misconception")
    if not correct and "misconception" not in raw:
        raise BankError(f"{where}: a distractor names the misconception it stands for")
    return text, (None if correct else _texts(f"{where}.misconception", raw["misconception"]))


def _static(where: str, raw: dict) -> tuple:
    options = tuple(_option(f"{where}.options[{i}]", o) for i, o in enumerate(raw.get("options") or []))
    if len(options) < 2:
        raise BankError(f"{where}: needs at least two options")
    n_correct = sum(m is None for _, m in options)
    if n_correct != 1:
        raise BankError(f"{where}: needs exactly one correct option, has {n_correct}")
    for lang in LANGS:
        if len({text[lang] for text, _ in options}) < len(options):
            raise BankError(f"{where}: two options read the same in {lang}")
    return options


def _item(i: int, raw: dict) -> Item:
    where = f"items[{i}]"
    if not isinstance(raw, dict):
        raise BankError(f"{where}: not a table")
    allowed = {"id", "concept", "question", "options", "live", "templates", "misconceptions"}
    if set(raw) - allowed:
        raise BankError(f"{where}: unknown keys {sorted(set(raw) - allowed)}")
    item_id = raw.get("id")
    if not isinstance(item_id, str) or not ID.match(item_id):
        raise BankError(f"{where}.id: lowercase letters, digits and '-', 1 to 32")
    where = f"item {item_id}"
    if raw.get("concept") not in CONCEPTS:
        raise BankError(f"{where}.concept: one of {', '.join(CONCEPTS)}")
    question = _texts(f"{where}.question", raw.get("question"))
    if "live" not in raw:
        if "templates" in raw or "misconceptions" in raw:
            raise BankError(f"{where}: templates and misconceptions belong to a live item")
        return Item(item_id, raw["concept"], question, options=_static(where, raw))
    if raw["live"] not in LIVE:
        raise BankError(f"{where}.live: one of {', '.join(LIVE)}")
    if "options" in raw:
        raise BankError(f"{where}: a live item's options are computed, not listed")
    templates = {k: _texts(f"{where}.templates.{k}", v) for k, v in (raw.get("templates") or {}).items()}
    wrong = {k: _texts(f"{where}.misconceptions.{k}", v) for k, v in (raw.get("misconceptions") or {}).items()}
    if not templates or not wrong:
        raise BankError(f"{where}: a live item needs templates and misconceptions")
    return Item(item_id, raw["concept"], question, live=raw["live"], templates=templates, misconceptions=wrong)


def parse(data: dict) -> tuple[Item, ...]:
    """Every item of a bank read from TOML, checked (``BankError`` at the first fault)."""
    if set(data) != {"messages", "items"}:
        raise BankError("the bank has exactly the tables [messages] and [[items]]")
    for code, texts in data["messages"].items():
        _texts(f"messages.{code}", texts)
    items = tuple(_item(i, raw) for i, raw in enumerate(data["items"]))
    ids = [item.id for item in items]
    if len(set(ids)) != len(ids):
        raise BankError(f"item ids used twice: {sorted({i for i in ids if ids.count(i) > 1})}")
    if len(items) < MIN_ITEMS:
        raise BankError(f"the bank needs at least {MIN_ITEMS} items, has {len(items)}")
    missing = set(CONCEPTS) - {item.concept for item in items}
    if missing:
        raise BankError(f"no item for the concepts {sorted(missing)}")
    return items


@functools.cache
def _data() -> dict:
    with resources.files(__package__).joinpath("bank.toml").open("rb") as f:
        return tomllib.load(f)


@functools.cache
def load() -> tuple[Item, ...]:
    return parse(_data())


def by_id() -> dict[str, Item]:
    return {item.id: item for item in load()}


def message(key: str, lang: str, /, **params) -> str:
    texts = _data()["messages"][key]
    return texts.get(lang, texts["en"]).format(**params)


def render(item: Item, lang: str, settings: Settings | None = None, focus: int | None = None) -> dict:
    """The item in ``lang``; a live one computed for ``settings`` (default ``Settings()``): ``LiveUnavailable``
    when they give no single correct option, ``AttentionConfigError`` when they are not valid settings."""
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}")
    if not item.live:
        options = [text[lang] for text, _ in item.options]
        wrong = [None if m is None else m[lang] for _, m in item.options]
        question = item.question[lang]
    else:
        live = LIVE[item.live](settings or Settings(), focus)
        options = [item.templates[o.template][lang].format(**o.params) for o in live.options]
        wrong = [None if o.misconception is None else item.misconceptions[o.misconception][lang] for o in live.options]
        question = item.question[lang].format(**live.params)
    answer = wrong.index(None)
    return {
        "id": item.id,
        "concept": item.concept,
        "question": question,
        "options": options,
        "misconceptions": wrong,
        "answer": answer,
        "live": bool(item.live),
    }


def parse_ids(text: str | None) -> tuple[str, ...]:
    """A check's items from a link or a flag (``ID,ID,…``): known ids, each once, 1 to ``MAX_CHECK``."""
    known = by_id()
    ids = tuple(p.strip() for p in (text or "").split(","))
    if not ids or len(ids) > MAX_CHECK or len(set(ids)) < len(ids) or any(i not in known for i in ids):
        raise CheckError("items", value=str(text)[:80], n=MAX_CHECK)
    return ids


def check_items(
    lang: str, settings: Settings | None = None, focus: int | None = None, ids: tuple[str, ...] | None = None
) -> tuple[list[dict], list[str]]:
    """The items of a check (``ids``, default the whole bank) rendered in ``lang``, and the texts of the live items
    these settings leave out (ties, a single option)."""
    known = by_id()
    shown, left_out = [], []
    for item_id in ids or tuple(known):
        try:
            shown.append(render(known[item_id], lang, settings, focus))
        except LiveUnavailable as why:
            reason = message(f"reason_{why.code}", lang, **why.params)
            left_out.append(message("live", lang, item=item_id, reason=reason))
    return shown, left_out
