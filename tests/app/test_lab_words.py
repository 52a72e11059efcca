"""The Lab speaks of its settings and its measurements as a learner reads them: B's difference from A named as the
controls name it, in the UI's language (it once read "B is A with pos = sinusoidal" on the Chinese page too), and
the presets' measured claims dated in words, with no file name a learner cannot open."""

import re

import pytest

from explorer.base.i18n import t

PAGE = "pages/8_lab.py"


def captions(at) -> list[str]:
    """The captions as a browser shows them: markdown's escapes (``d\\_k``) read as the characters they escape."""
    return [re.sub(r"\\(.)", r"\1", c.value) for c in at.caption]


@pytest.mark.parametrize(
    "lang,preset,said",
    [
        ("en", "positions", "B is A with Positional encoding = sinusoidal."),
        ("zh", "positions", "B 与 A 相同，只是位置编码为正弦。"),
        ("en", "heads", "B is A with Heads = 4, d_k = 8, d_v = 8."),
        ("zh", "linear", "B 与 A 相同，只是注意力变体为线性注意力（elu+1）。"),
    ],
)
def test_b_is_named_by_the_controls_labels_in_the_ui_language(app, lang, preset, said):
    at = app(PAGE, {"lab_b": preset, "lang": lang})
    shown = captions(at)
    assert said in shown, [c for c in shown if c.startswith(said[:4])]
    assert not [c for c in shown if "pos =" in c or "kernel =" in c or "heads =" in c]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_presets_measurements_are_dated_in_words(app, lang):
    at = app(PAGE, {"lang": lang})
    shown = captions(at)
    opening = t("lab_measured", language=lang).split("{")[0]  # "Measured on seeds "
    measured = [c for c in shown if c.startswith(opening)]
    assert measured, shown
    assert not [c for c in shown if ".txt" in c or "benchmarks/" in c]
    when = t("lab_record_when", date="", language=lang).rstrip(", ")
    assert all(when in c for c in measured), measured
