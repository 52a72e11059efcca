"""Every UI string, in English and Simplified Chinese, from attn_core/locales/<lang>.toml (the engine's package
data, read through ``attn_core.locales``). Option values stay language-neutral; labels go through ``label()`` in a
``format_func``."""

from __future__ import annotations

import re

from attn_core import locales
from explorer.base import session

LANGS = {"en": "English", "zh": "简体中文"}


def _catalogue() -> tuple[dict[str, tuple[str, str]], dict[str, tuple[str, str]]]:
    """(key -> (English, 简体中文), engine error code -> its Chinese (message, fix)) from attn_core/locales/*.toml;
    a key the Chinese file lacks shows in English."""
    en, zh = locales.strings("en"), locales.strings("zh")
    strings = {key: (text, zh.get(key, text)) for key, text in en.items()}
    codes = {key.split(".")[1] for key in zh if key.startswith("error.")}
    errors = {code: (zh[f"error.{code}.message"], zh[f"error.{code}.fix"]) for code in sorted(codes)}
    return strings, errors


STRINGS, ERRORS_ZH = _catalogue()


RANGE_CODES = ("whole_number", "out_of_range", "at_least_one", "not_negative")  # {field} names the control


def error_text(err) -> tuple[str, str]:
    """(what is wrong, how to fix it) of an engine error, in the UI's language; a variant the error names
    by its key (``sliding_window``) is named by its label."""
    from attn_core.kernels import KERNELS

    params = dict(getattr(err, "params", {}) or {})
    kernel = params.get("kernel")
    labelled = {"kernel": kernel_label(kernel)} if isinstance(kernel, str) and kernel in KERNELS else {}
    field = params.get("field")
    if getattr(err, "code", None) in RANGE_CODES and isinstance(field, str) and field in STRINGS:
        labelled["field"] = t(field)  # the control's own noun: "Choose a value between 1 and 8 for Heads."
    zh = ERRORS_ZH.get(getattr(err, "code", ""))
    if lang() == "zh" and zh:
        return zh[0].format(**{**params, **labelled}), zh[1].format(**{**params, **labelled})
    from attn_core.errors import MESSAGES

    if labelled and getattr(err, "code", None) in MESSAGES:
        message, fix = MESSAGES[err.code]
        return message.format(**{**params, **labelled}), fix.format(**{**params, **labelled})
    return err.message, err.fix


def tex(formula: str) -> str:
    """A LaTeX formula with the words of its ``\\text{...}`` in the UI's language (the catalogue's ``tex.``
    table: the engine writes them in English, the UI shows them translated), each definition after a top-level
    ``,\\ `` on a line of its own (``stacked``)."""
    return stacked(_translated_tex(formula))


def stacked(formula: str) -> str:
    """``formula`` with what follows each ``,\\ `` outside every brace and bracket on a line of its own (a
    ``gathered`` block): a formula with its definition after it (linear attention's φ(x) = elu(x) + 1) was one
    line, and a narrow column (Variants' side by side, presenter mode's half) cut it at its edge."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(formula):
        c = formula[i]
        if c == "\\":  # a command or an escaped character (\{, \ ): never a brace that counts
            i += 2
            continue
        depth += (c in "{([") - (c in "})]")
        if depth == 0 and formula.startswith(",\\ ", i):
            parts.append(formula[start : i + 1])
            i = start = i + 3
            continue
        i += 1
    if not parts:
        return formula
    return "\\begin{gathered}" + " \\\\ ".join([*parts, formula[start:]]) + "\\end{gathered}"


def _translated_tex(formula: str) -> str:
    if lang() == "en" or "\\text{" not in formula:
        return formula
    words = {en.strip(): zh.strip() for key, (en, zh) in STRINGS.items() if key.startswith("tex.")}

    def swap(m) -> str:
        inner = m.group(1)
        core = inner.strip()
        if core not in words:
            return m.group(0)
        lead, trail = inner[: len(inner) - len(inner.lstrip())], inner[len(inner.rstrip()) :]
        return "\\text{" + lead + words[core] + trail + "}"

    return re.sub(r"\\text\{([^{}]*)\}", swap, formula)


def begin_run() -> str:
    """Read the language once for this script run (app.py calls it first): ``t()`` is called
    a hundred times a run, and each read of session state takes a lock."""
    ctx = session.begin_run()  # the run context (explorer.base.session): its language, read once
    ctx.lang = lang()
    return ctx.lang


def lang() -> str:
    """The language: the switch's value once drawn, else the URL's ?lang=, else English."""
    cached = session.run_context().lang
    if cached:
        return cached
    value = session.lang_choice()
    return value if isinstance(value, str) and value in LANGS else "en"  # the session's value is the browser's


def t(key: str, *, language: str | None = None, **fmt) -> str:
    en, zh = STRINGS[key]
    text = zh if (language or lang()) == "zh" else en
    return text.format(**fmt) if fmt else text


def kernel_label(name: str) -> str:
    """A variant's name in the UI's language (its spec's own label when the catalogue has none)."""
    from attn_core.kernels import KERNELS

    key = f"kernel.{name}.label"
    return t(key) if key in STRINGS else KERNELS[name].label


def step_key(step: str) -> str:
    """The catalogue key of a step's title: a variant's own step ``vs_<stage>`` is ``vs.<stage>.title``."""
    return f"vs.{step[3:]}.title" if step.startswith("vs_") else step


def step_label(steps):
    """A ``format_func`` numbering the steps in order ("3 Pattern"), whatever their catalogue labels start with."""
    language = lang()
    order = {step: i + 1 for i, step in enumerate(steps)}

    def fmt(step) -> str:
        text = t(step_key(step), language=language)
        text = text.split(" ", 1)[1] if text[:1].isdigit() else text
        return f"{order.get(step, '')} {text}"

    return fmt


def label(prefix: str = "opt."):
    """A ``format_func`` that shows an option value through the catalogue (key ``prefix + value``, or
    ``prefix.format(value)`` for a pattern such as ``"kernel.{}.label"``), in the language of the run that drew
    the widget (a widget's labels must not change after it is drawn)."""
    language = lang()

    def fmt(value) -> str:
        key = prefix.format(value) if "{}" in prefix else f"{prefix}{value}"
        return t(key, language=language) if key in STRINGS else str(value)

    return fmt
