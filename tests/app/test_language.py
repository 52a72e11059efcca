"""Every word a page writes goes through the catalogue: on the Chinese UI no chart title, axis title,
legend, hover label, table header, caption or button shows an English catalogue value or a raw
catalogue key, and on the English UI no raw key shows."""

import json
import re

import pytest

from explorer.figures import AXES
from explorer.i18n import STRINGS
from explorer.pages import PAGES

ENGLISH = {en.strip() for en, zh in STRINGS.values() if en.strip() != zh.strip()}
AXIS_WORDS = {STRINGS[key][0] for key in AXES.values()}
# a key with an underscore or a dot is not a word of running text (unless it is a symbol shown as such: d_model)
KEYS = {k for k in STRINGS if ("_" in k or "." in k) and k not in STRINGS[k][0]}
WORD = r"[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*"  # a dotted key is one word


def _chart_texts(spec: dict) -> list[str]:
    layout = spec.get("layout", {})
    out = [layout.get("title", {}).get("text", "")]
    for axis in (v for k, v in layout.items() if k.startswith(("xaxis", "yaxis")) and isinstance(v, dict)):
        out.append(axis.get("title", {}).get("text", ""))
    for trace in spec.get("data", []):
        out += [trace.get("name") or "", trace.get("hovertemplate") or ""]
    out += [a.get("text", "") for a in layout.get("annotations", [])]
    return [s for s in out if s]


def page_texts(at) -> dict[str, list[str]]:
    """What a reader sees besides the typed sentence, by kind."""
    texts = {"chart": [], "table": [], "caption": [], "button": []}
    for c in at.get("plotly_chart"):
        texts["chart"] += _chart_texts(json.loads(c.proto.spec))
    for df in at.dataframe:
        texts["table"] += [str(c) for c in df.value.columns if str(c)]
    texts["caption"] += [c.value for c in at.caption]
    texts["button"] += [b.label for b in at.button] + [d.proto.label for d in at.get("download_button")]
    return texts


def english_in(texts: dict[str, list[str]]) -> list[str]:
    """Chrome that is an English catalogue value, an English axis word, or a raw catalogue key."""
    found = []
    for kind, items in texts.items():
        for text in items:
            plain = re.sub(r"<[^>]+>|%\{[^}]*\}", " ", text)
            words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", plain)) | set(re.findall(WORD, plain))
            if kind in ("chart", "table", "button") and text.strip() in ENGLISH:
                found.append(f"{kind}: {text!r}")
            elif kind == "chart" and words & AXIS_WORDS:
                found.append(f"{kind}: {text!r} ({sorted(words & AXIS_WORDS)})")
            elif words & KEYS:
                found.append(f"{kind}: {text!r} (key {sorted(words & KEYS)})")
    return found


def raw_keys_in(texts: dict[str, list[str]]) -> list[str]:
    return [
        t
        for items in texts.values()
        for t in items
        if set(re.findall(r"[A-Za-z0-9_]+", t) + re.findall(WORD, t)) & KEYS
    ]


QUERY = {"heads": "2", "sentence": "Attention learns what to read"}


@pytest.mark.parametrize("spec", PAGES, ids=[p.url_path for p in PAGES])
def test_no_english_chrome_on_the_chinese_ui(app, spec):
    at = app(spec.file, {**QUERY, "lang": "zh"})
    texts = page_texts(at)
    assert sum(map(len, texts.values())) > 3, texts  # the page drew something to look at
    assert not english_in(texts), english_in(texts)


@pytest.mark.parametrize("spec", PAGES, ids=[p.url_path for p in PAGES])
def test_no_raw_key_on_the_english_ui(app, spec):
    at = app(spec.file, {**QUERY, "lang": "en"})
    assert not raw_keys_in(page_texts(at)), raw_keys_in(page_texts(at))


def test_the_detector_finds_english_and_keys():
    """Pointed at what the pages showed before: English axis words, an English title, a raw key."""
    none = {"chart": [], "table": [], "caption": [], "button": []}
    assert english_in({**none, "chart": ["query %{y}<br>key %{x}<br>value %{z:.6g}"]})
    assert english_in({**none, "chart": [STRINGS["tut_heads_title"][0]]})
    assert english_in({**none, "table": [STRINGS["pc.total"][0]]})
    assert english_in({**none, "caption": ["kernel.linear_elu.label"]}) and raw_keys_in({"table": ["pc.total"]})
    assert not english_in({**none, "chart": ["查询 %{y}<br>键 %{x}"], "table": ["合计", "4·d_model²"]})
