"""Every word a page writes goes through the catalogue: on the Chinese UI no chart title, axis title,
legend, hover label, table header, caption or button shows an English catalogue value or a raw
catalogue key, and on the English UI no raw key shows."""

import json
import re

import pytest

from attn_core.kernels import KERNELS
from explorer.base.i18n import STRINGS
from explorer.figures import AXES
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


def not_svg(at, page: str) -> list[str]:
    """Charts whose modebar does not download a vector SVG named after the page and the chart."""
    bad = []
    for c in at.get("plotly_chart"):
        image = json.loads(c.proto.config or "{}").get("toImageButtonOptions", {})
        if image.get("format") != "svg" or not str(image.get("filename", "")).startswith(f"{page}_"):
            bad.append(f"{c.proto.id}: {image}")
    return bad


def test_the_modebar_check_catches_a_png_button(app):
    at = app("pages/2_multihead.py", QUERY)
    assert at.get("plotly_chart") and not not_svg(at, "multihead")
    at.get("plotly_chart")[0].proto.config = json.dumps({"toImageButtonOptions": {"format": "png"}})
    assert len(not_svg(at, "multihead")) == 1
    assert len(not_svg(at, "steps")) == len(at.get("plotly_chart"))  # named after another page


@pytest.mark.parametrize("spec", PAGES, ids=[p.url_path for p in PAGES])
def test_no_english_chrome_on_the_chinese_ui(app, spec):
    at = app(spec.file, {**QUERY, "lang": "zh"})
    texts = page_texts(at)
    assert sum(map(len, texts.values())) > 3, texts  # the page drew something to look at
    assert not english_in(texts), english_in(texts)
    assert not not_svg(at, spec.url_path), not_svg(at, spec.url_path)  # every chart downloads as SVG


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


# ---------------------------------------------------------------------------- the states a learner reaches
# A page's defaults are not all it shows: a variant's own steps, the Variants page's "how it computes" text, an
# error message, the corpus tab, a sweep's slopes table and a multiselect's placeholder are drawn only in some
# states. On the Chinese UI no English word may show there: a Latin word is allowed only if the Chinese
# catalogue itself writes it (a name, a symbol: Performer, softmax, Spearman) or it is one of the sentence's.

ZH_LATIN = {
    w
    for en, zh in STRINGS.values()
    for w in re.findall(r"(?<![A-Za-z0-9_])[A-Za-z]{2,}(?![A-Za-z0-9_])", re.sub(r"\{[^}]*\}", " ", zh))
}
RAW_NAMES = {k for k in KERNELS if "_" in k}  # a kernel's key where its label belongs
SYMBOLS = {"dv", "EK", "FV", "eff"}  # d_v, K' = EK and V' = FV (Linformer's projections), α_eff: math, not English
SYMBOLS |= {"et", "al"}  # a citation's "et al." (the papers' titles are names, as the Chinese catalogue writes them)


def latin_words(text: str) -> set[str]:
    plain = re.sub(r"<[^>]+>|%\{[^}]*\}", " ", text)
    return set(re.findall(r"(?<![A-Za-z0-9_])[A-Za-z]{2,}(?![A-Za-z0-9_])", plain))


def all_texts(at) -> dict[str, list[str]]:
    """Everything a reader sees besides code: ``page_texts`` and the markdown, notices, plain text, table cells,
    the words inside LaTeX's \\text{...}, and the multiselects' placeholders."""
    texts = page_texts(at)
    texts["markdown"] = [m.value for m in at.markdown] + [m.value for m in at.get("subheader")]
    texts["notice"] = [e.value for kind in ("info", "warning", "error", "success") for e in getattr(at, kind)]
    texts["text"] = [x.value for x in at.text]
    texts["latex"] = [" ".join(re.findall(r"\\text\{([^}]*)\}", x.value)) for x in at.latex]
    texts["cell"] = [str(v) for df in at.dataframe for v in df.value.astype(str).to_numpy().ravel()]
    texts["placeholder"] = [m.proto.placeholder or "Choose options" for m in at.multiselect]  # the browser's
    return texts


def english_words(texts: dict[str, list[str]], allowed: set[str] = frozenset()) -> list[str]:
    """Each text with a Latin word the Chinese catalogue does not use (or a kernel's raw key)."""
    found = []
    for kind, items in texts.items():
        for text in items:
            text = text.replace("\\", "")  # markdown's escapes: sliding\_window
            extra = latin_words(text) - ZH_LATIN - SYMBOLS - set(allowed)
            raw = {n for n in RAW_NAMES if re.search(rf"(?<![A-Za-z0-9_.]){n}(?![A-Za-z0-9_])", text)}
            if extra or raw:
                found.append(f"{kind}: {text[:120]!r} ({sorted(extra | raw)})")
    return found


SENTENCE_WORDS = set(QUERY["sentence"].split())


def test_the_strict_detector_finds_english_words():
    """Pointed at what the pages showed: a docstring, LaTeX text, a chart title, a legend, None, a placeholder."""
    none = {"cell": []}
    assert english_words({"text": ["Sliding-window attention: each query sees its neighbours."]})
    assert english_words({"latex": ["the pattern allows    for "]})
    assert english_words({"chart": ["pattern (5, 5)"]}) and english_words({"chart": ["half 1"]})
    assert english_words({"cell": ["None"]}) and english_words({"placeholder": ["Choose options"]})
    assert english_words({"notice": ["The sliding_window kernel 是一种模式"]})  # a raw key, even in Chinese
    assert english_words({"cell": ["SST-2 (sentiment)"]})
    assert not english_words({**none, "chart": ["模式 (5, 5)", "softmax 之后", "Performer（FAVOR+）", "d_model"]})
    assert not english_words({"caption": ["“learns”最关注“read”"]}, SENTENCE_WORDS)


def _steps_of(at) -> list[str]:
    """The step radio's values (its options are shown formatted)."""
    radio = at.radio(key="step")
    fmt = radio.format_func
    keys = [k for k in STRINGS if k.startswith("st_")] + [
        f"vs_{k[3:-6]}" for k in STRINGS if k.startswith("vs.") and k.endswith(".title")
    ]
    by_label = {fmt(k): k for k in keys}
    return [by_label[o] for o in radio.options]


VARIANTS = [k for k, spec in KERNELS.items() if spec.teaching and k != "full"]


@pytest.mark.parametrize("kernel", ["full", *VARIANTS])
def test_a_variants_own_steps_speak_chinese(app, kernel):
    """Step by step with a variant chosen (and full attention's own steps): every one of its steps (formulas'
    words, chart titles, legends)."""
    at = app("pages/1_steps.py", {**QUERY, "lang": "zh", "kernel": kernel})
    found = []
    for step in _steps_of(at):
        at.radio(key="step").set_value(step).run()
        assert not at.exception, [e.value for e in at.exception]
        found += [f"{step}: {f}" for f in english_words(all_texts(at), SENTENCE_WORDS)]
    assert not found, found


@pytest.mark.parametrize("kernel", VARIANTS)
def test_the_variants_page_explains_each_variant_in_chinese(app, kernel):
    """Variants with the variant picked: its formula's words and "how it computes" in the UI's language."""
    at = app("pages/5_variants.py", {**QUERY, "lang": "zh"})
    at.session_state["var_kernels"] = ["full", kernel]
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    texts = all_texts(at)
    assert texts["text"], "the page shows how each variant computes"
    papers = {w for k in ("full", kernel) for w in latin_words(KERNELS[k].paper)}  # a paper's title is its name
    assert not english_words(texts, SENTENCE_WORDS | papers), english_words(texts, SENTENCE_WORDS | papers)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_an_error_names_the_variant_not_its_key(app, lang):
    """Cross-attention with a variant that cannot do it: the message names the variant by its label."""
    at = app("pages/3_cross.py", {**QUERY, "lang": lang, "kernel": "sliding_window"})
    errors = [e.value.replace("\\", "") for kind in ("error", "warning") for e in getattr(at, kind)]
    assert errors, "the page says why it cannot draw"
    assert not any("sliding_window" in e for e in errors), errors
    assert any(STRINGS["kernel.sliding_window.label"][lang == "zh"] in e for e in errors), errors
    if lang == "zh":
        assert not english_words({"error": errors}), english_words({"error": errors})


def test_the_corpus_tab_speaks_chinese(app):
    """Explain's corpus tab: the published figures and the reading under the table."""
    at = app("pages/10_explain.py", {**QUERY, "lang": "zh"})
    tab = next(tab for tab in at.tabs if tab.label == STRINGS["ex_tab_table"][1])
    texts = {
        "table": [str(c) for df in tab.dataframe for c in df.value.columns],
        "cell": [str(v) for df in tab.dataframe for v in df.value.astype(str).to_numpy().ravel()],
        "markdown": [m.value for m in tab.markdown],
        "caption": [c.value for c in tab.caption],
    }
    assert texts["cell"], "the corpus tab shows its tables"
    from attn_core.explain.table import corpus

    sentences = set(corpus())  # the corpus's own sentences are English data, not chrome
    allowed = {w for s in sentences for w in latin_words(s)}
    texts["cell"] = [c for c in texts["cell"] if c not in sentences]
    assert not english_words(texts, allowed), english_words(texts, allowed)


def test_inside_placeholders_speak_chinese(app):
    at = app("pages/9_inside.py", {**QUERY, "lang": "zh"})
    placeholders = [m.proto.placeholder or "Choose options" for m in at.multiselect]  # empty: the browser's English
    assert placeholders and not english_words({"placeholder": placeholders}), placeholders
