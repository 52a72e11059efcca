"""The UI's catalogue: every string in both languages with the same placeholders; every key the
code uses exists; no key is unused; every engine error code has its Chinese text."""

import re
import string
from pathlib import Path

from attn_core.config import INITS, LAYOUTS, POSITIONS, SCORES
from attn_core.errors import MESSAGES, AttentionConfigError
from attn_core.kernels import KERNELS
from attn_core.masks import MASK_MODES
from explorer.i18n import ERRORS_ZH, STRINGS, t
from explorer.pages import PAGES

ROOT = Path(__file__).resolve().parents[2]


def fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def source(*folders: str) -> str:
    """The code of these folders (and app.py), the catalogue itself left out."""
    files = [ROOT / "app.py"] + [
        p for f in folders for p in (ROOT / f).rglob("*.py") if p.name != "i18n.py" and "catalogue" not in p.parts
    ]
    return "\n".join(p.read_text() for p in files)


def test_every_string_exists_in_both_languages_with_the_same_placeholders():
    for key, (en, zh) in STRINGS.items():
        assert en.strip() and zh.strip(), key
        assert fields(en) == fields(zh), key


def test_every_key_the_code_uses_exists():
    used = set(re.findall(r"""\bt\(\s*["']([a-z0-9_]+)["']""", source("explorer", "pages")))
    assert used and not used - set(STRINGS), sorted(used - set(STRINGS))


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
            assert t(f"vs_{stage.key}", language=language)
            assert t(f"vs_{stage.key}_note", language=language, **stage.facts)


def _control_titles() -> set[str]:
    """A control's label is its name (or its ``title``) in the catalogue."""
    from explorer.controls import PAGE, SIDEBAR

    return {c.title or c.name for c in (*SIDEBAR, *PAGE.values())}


def test_no_key_is_unused():
    code = source("explorer", "pages")
    dynamic = {f"opt_{v}" for v in (*SCORES, *MASK_MODES, *POSITIONS, *INITS)} | {f"opt_layout_{v}" for v in LAYOUTS}
    dynamic |= {f"vs_{s.key}{end}" for s in variant_stages() for end in ("", "_note")}
    from attn_core.lab import POSITIONS as LAB_POS
    from attn_core.lab import PRESETS, TASKS

    dynamic |= {f"lab_b_{p}" for p in ("off", *PRESETS)} | {
        f"lab_{k}_{p}" for p in PRESETS for k in ("preset", "title")
    }
    from explorer.controls import PAGE, PALETTE

    dynamic |= {f"{PALETTE.fmt}{k}" for k in PALETTE.options}
    dynamic |= {f"present_{step}" for step in PAGE["step"].options}  # a narration per step
    dynamic |= {f"lab_task_{k}" for k in TASKS} | {f"lab_pos_{k}" for k in LAB_POS}
    dynamic |= {f"lab_state_{k}" for k in ("queued", "running", "paused", "done", "diverged", "stopped", "failed")}
    dynamic |= {name for name in STRINGS if name.startswith("lab_") and name in _control_titles()}
    from explorer.tour import TOUR

    dynamic |= {f"tour_{lesson.key}{end}" for lesson in TOUR for end in ("", "_q")}
    dynamic |= {f"{prefix}_{p.key}" for p in PAGES for prefix in ("page", "home")} | {f"kernel_{k}" for k in KERNELS}
    from attn_core.bench import CSV_COLUMNS
    from attn_core.config import Settings
    from attn_core.trace import param_count

    dynamic |= {f"pc_{k}" for k in param_count(Settings())} | {f"cx_col_{c}" for c in CSV_COLUMNS}
    unused = [k for k in STRINGS if k not in dynamic and f'"{k}"' not in code and f"'{k}'" not in code]
    assert not unused, unused


def test_every_engine_error_has_its_chinese_text_with_the_same_placeholders():
    assert set(ERRORS_ZH) == set(MESSAGES)
    for code, (message, fix) in MESSAGES.items():
        zh_message, zh_fix = ERRORS_ZH[code]
        assert fields(message) | fields(fix) == fields(zh_message) | fields(zh_fix), code


def test_every_error_code_raised_exists_and_every_code_is_raised():
    engine = source("attn_core", "explorer")
    raised = set(re.findall(r'(?:Error|Unavailable)\(\s*(?:[a-z_]+|"[a-z_]+"),\s*"([a-z0-9_]+)"', engine))
    raised |= set(re.findall(r'ModelUnavailable\(\s*"([a-z0-9_]+)"', engine))
    raised |= set(re.findall(r'"(too_much_memory(?:_additive)?)"', engine))
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
