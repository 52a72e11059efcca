"""The UI's catalogue, walked structurally from its files (attn_core/locales/<lang>.toml): both languages have
the same keys and placeholders; every key the code uses exists and every key is used, either literally or as a
table whose dotted prefix the code builds a key from; a key defined twice is a clear error; every engine error
code has its Chinese text."""

import re
import string
from pathlib import Path

import pytest

from attn_core import locales
from attn_core.errors import MESSAGES, AttentionConfigError
from attn_core.kernels import KERNELS
from explorer.base.i18n import ERRORS_ZH, STRINGS, t

ROOT = Path(__file__).resolve().parents[2]
EN, ZH = locales.strings("en"), locales.strings("zh")
ERRORS = "error."  # zh.toml's [error.<code>] tables: the Chinese of attn_core/messages.py's MESSAGES


def fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def source(*folders: str) -> str:
    """The code of these folders and app.py."""
    files = [ROOT / "app.py"] + [p for f in folders for p in sorted((ROOT / f).rglob("*.py"))]
    return "\n".join(p.read_text() for p in files)


CODE = source("explorer", "pages", "attn_core")
LITERAL = re.compile(r"""(?<![\w.])f?(["'])([a-z][a-z0-9_]*\.[^"'\n]*)\1""")  # a string with a dot: "pc.total"


def templates(code: str) -> dict[str, re.Pattern]:
    """The keys the code builds, as patterns: f"pc.{k}" -> pc\\.[a-z0-9_]+, "kernel.{}.label" (a format pattern),
    "opt." (a prefix that ``label()`` appends a value to)."""
    out = {}
    for _, text in LITERAL.findall(code):
        parts = re.split(r"\{[^{}]*\}", text)
        if len(parts) == 1 and not text.endswith("."):
            continue  # a literal, not a family
        if len(parts) == 1:
            parts = [text, ""]
        out[text] = re.compile(r"[a-z0-9_]+".join(re.escape(p) for p in parts))
    return out


def unused(keys, code: str) -> list[str]:
    """Keys neither quoted in the code nor built by one of its templates."""
    made = list(templates(code).values())
    return [k for k in keys if f'"{k}"' not in code and f"'{k}'" not in code and not any(p.fullmatch(k) for p in made)]


def test_both_languages_have_the_same_keys():
    zh = {k for k in ZH if not k.startswith(ERRORS)}
    assert set(EN) == zh, (sorted(set(EN) - zh), sorted(zh - set(EN)))


def test_every_string_has_the_same_placeholders_in_both_languages():
    for key, (en, zh) in STRINGS.items():  # the locale files' strings
        assert en.strip() and zh.strip(), key
        assert fields(en) == fields(zh), key


def test_a_chinese_text_equal_to_its_english_is_a_symbol_or_a_name():
    for key, en in EN.items():
        if ZH[key] == en:
            assert not re.search(r"[A-Za-z]{2,} [A-Za-z]{2,}", en), (key, en)  # English words left untranslated


def test_every_key_the_code_uses_exists():
    used = set(re.findall(r"""\bt\(\s*["']([a-z0-9_.]+)["']""", CODE))
    assert used and not used - set(STRINGS), sorted(used - set(STRINGS))
    built = {
        text: p for text, p in templates(CODE).items() if re.search(rf"""\bt\(\s*f?["']{re.escape(text)}""", CODE)
    }
    assert {"pc.{k}", "cx_col.{c}", "tour.{key}.q"} <= set(built), sorted(built)
    empty = [text for text, p in built.items() if not any(p.fullmatch(k) for k in STRINGS)]
    assert not empty, empty  # a family the code builds keys of, with no table in the catalogue


def test_no_key_is_unused():
    assert not unused(STRINGS, CODE), unused(STRINGS, CODE)  # the locale files' keys


def test_a_key_the_chinese_file_lacks_shows_in_english(monkeypatch):
    from explorer.base import i18n

    files = {
        "en": {"only_en": "Only {n}", "both": "Both"},
        "zh": {"both": "都有", "error.x.message": "消息", "error.x.fix": "修复"},
    }
    monkeypatch.setattr(locales, "strings", files.get)
    strings, errors = i18n._catalogue()
    assert strings == {"only_en": ("Only {n}", "Only {n}"), "both": ("Both", "都有")} and errors == {
        "x": ("消息", "修复")
    }


def test_the_checks_catch_a_broken_catalogue():
    """Each detector above, pointed once at a broken input."""
    assert unused(["pc.total", "pc.gone", "nobody_uses_this"], 't(f"pc.{k}")\nt("pc.total")') == ["nobody_uses_this"]
    assert unused(["opt.rope", "opt.layout.rope"], 'label("opt.")') == ["opt.layout.rope"]  # one level per prefix
    assert unused(["kernel.full.label"], 'fmt="kernel.{}.label"') == []
    assert fields("{n} of {total}") != fields("共 {n} 个")
    with pytest.raises(locales.LocaleError, match="en.toml: .*line 4"):
        locales.parse('a = "x"\n[pc]\ntotal = "y"\ntotal = "z"\n', "en.toml")  # a key defined twice
    with pytest.raises(locales.LocaleError, match="pc.total is a int"):
        locales.parse("[pc]\ntotal = 3\n")


def test_every_kernel_label_is_a_registered_kernel_and_has_both_languages():
    labels = {k.split(".")[1] for k in EN if k.startswith("kernel.")}
    assert labels and labels <= set(KERNELS), sorted(labels - set(KERNELS))
    for name in labels:
        assert locales.kernel_label(name, "en") and locales.kernel_label(name, "zh")


def variant_stages() -> list:
    """Every stage every variant shows, from the variants themselves (causal and not)."""
    import torch

    q = torch.randn(2, 6, 4)
    opts = {"window": 1, "dilation": 2, "global_tokens": 1, "block": 2, "features": 4, "proj_k": 3, "seed": 0}
    found = []
    for kern in KERNELS.values():
        if kern.explain is None:
            continue
        for causal in (False, True) if kern.check is not None else (False,):
            mine = {o: opts[o] for o in kern.options if o in opts}
            try:
                kern.check(6, 6, causal=causal, cross=False, **mine)
            except AttentionConfigError:  # this variant cannot do that (e.g. Linformer causal)
                continue
            found += kern.explain(q, q, q, causal=causal or kern.always_causal, scale=0.5, **mine).stages
    return found


def test_every_variant_step_has_a_title_and_a_note_that_its_numbers_fill():
    stages = variant_stages()
    assert {"pattern", "features", "prefix_state", "projections", "random_features"} <= {s.key for s in stages}
    for stage in stages:
        for language in ("en", "zh"):
            assert t(f"vs.{stage.key}.title", language=language)
            assert t(f"vs.{stage.key}.note", language=language, **stage.facts)


def test_every_engine_error_has_its_chinese_text_with_the_same_placeholders():
    assert set(ERRORS_ZH) == set(MESSAGES)
    assert {k for k in ZH if k.startswith(ERRORS)} == {
        f"{ERRORS}{c}.{p}" for c in MESSAGES for p in ("message", "fix")
    }
    for code, (message, fix) in MESSAGES.items():
        zh_message, zh_fix = ERRORS_ZH[code]
        assert fields(message) | fields(fix) == fields(zh_message) | fields(zh_fix), code


def test_every_error_code_raised_exists_and_every_code_is_raised():
    engine = source("attn_core", "explorer")
    raised = set(re.findall(r'(?:Error|Unavailable)\(\s*(?:[a-z_]+|"[a-z_]+"),\s*"([a-z0-9_]+)"', engine))
    raised |= set(re.findall(r'ModelUnavailable\(\s*"([a-z0-9_]+)"', engine))
    raised |= set(re.findall(r'"(too_much_memory(?:_additive)?)"', engine))
    raised |= set(re.findall(r'\bcode="([a-z0-9_]+)"', engine))  # a dimension's own code (attn_core/dimensions.py)
    assert raised and not raised - set(MESSAGES), sorted(raised - set(MESSAGES))
    assert not set(MESSAGES) - raised, sorted(set(MESSAGES) - raised)


def test_an_error_shows_in_chinese_on_the_chinese_ui():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["lang"] = "zh"
    at.query_params["layout"] = "standard"
    at.query_params["heads"] = "3"
    at.run()
    shown = " ".join(e.value for e in at.sidebar.error).replace("\\", "")
    assert "标准布局把 d_model = 16 平均分给 3 个头" in shown and "standard layout" not in shown
