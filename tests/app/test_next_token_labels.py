"""Every token the Next token page names is seen: no blank label, no "nan"/"None", no "�", no bare byte label
(<DF>), in English and 中文, in every text, table cell, chart label and option; the predict options are named as
their bars are (the same number, the same label).

The decoder is a tiny random GPT-2 (``nexttoken_tiny``, nothing downloads) rigged so that the tokens hardest to
show come first everywhere: its final norm's output is (almost) one direction e, and the embeddings of a newline,
a space, a tab, a lone UTF-8 byte (E5, a part of a character) and the control character NUL point along e with
decreasing lengths, so they are the five most probable next tokens at every position, in that order. The prompt
holds a newline, two spaces and 床, a character the tokenizer splits over three byte tokens."""

from __future__ import annotations

import importlib.util
import json
import math
import re
from pathlib import Path

import pytest
import torch
from background import until_done

from explorer.model import real

PAGE = "pages/11_next_token.py"
TINY = Path(__file__).resolve().parents[1] / "unit" / "nexttoken_tiny.py"
PROMPT = "the cat\n床 sat on  the mat"
FIRST = ["\n", " ", "\t", b"\xe5", "\x00"]  # the rigged model's five most probable tokens, most probable first
BAD = [
    (re.compile(r"\bnan\b", re.IGNORECASE), "nan"),
    (re.compile(r"\bNone\b"), "None"),
    (re.compile("\ufffd"), "a replacement character"),
    (re.compile(r"<(0x)?[0-9A-Fa-f]{2}>"), "a bare byte label"),
    (re.compile(r"(?<![\w'])'\s*'(?![\w'])"), "a blank quoted token"),  # '' or ' ', not ''s' (the token 's)
    (re.compile(r"[\x00-\x08\x0b-\x1f\x7f]"), "an invisible control character"),
]
NUMBERED = re.compile(r"^\d+ \S")  # a chart's token label: its number, then something to see


def stand_in(piece) -> str:
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    data = piece if isinstance(piece, bytes) else piece.encode()
    return "".join(bytes_to_unicode()[b] for b in data)


@pytest.fixture(scope="module")
def rigged(tmp_path_factory):
    spec = importlib.util.spec_from_file_location("nexttoken_tiny", TINY)
    tiny = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tiny)
    path = tiny.build("gpt2", tmp_path_factory.mktemp("nt_labels"), positions=48)
    from transformers import AutoTokenizer, GPT2LMHeadModel

    tok = AutoTokenizer.from_pretrained(path)
    model = GPT2LMHeadModel.from_pretrained(path)
    ids = tok.convert_tokens_to_ids([stand_in(p) for p in FIRST])
    assert len(set(ids)) == len(FIRST) and tok.unk_token_id not in ids
    with torch.no_grad():
        e = torch.zeros(model.config.n_embd)
        e[0] = 1.0
        model.transformer.ln_f.weight.mul_(0.01)
        model.transformer.ln_f.bias.copy_(e)
        wte = model.transformer.wte.weight  # tied: the unembedding too
        wte[:, 0] = 0.0
        for rank, i in enumerate(ids):
            wte[i, 0] = 10.0 - rank
    model.save_pretrained(path)
    return Path(path).parent  # offered as rigged/gpt2


@pytest.fixture
def page(app, rigged, monkeypatch):
    monkeypatch.setenv(real.MODELS_ENV, f"rigged={rigged}")
    real.wait_for("rigged/gpt2", timeout=300)  # the server's loader, as a page asks it (the page never waits)

    def make(**query):
        at = app(PAGE, query={"model": "rigged/gpt2", "prompt": PROMPT} | {k: str(v) for k, v in query.items()})
        assert any("rigged/gpt2" in c.value for c in at.caption), "the rigged decoder must be the one shown"
        return until_done(at)

    return make


def charts(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def strings(value) -> list[str]:
    """Every string inside a chart's JSON (a typed array's base64 is no text: skipped)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() if k not in ("bdata", "dtype", "shape") for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def everything(at) -> list[tuple[str, str]]:
    """(where, text) for every text, widget label and option, table cell and chart string the page shows."""
    kinds = ("title", "header", "subheader", "markdown", "caption", "text", "info", "success", "warning", "error")
    out = [(kind, str(e.value)) for kind in kinds for e in at.get(kind)]
    for kind in ("radio", "selectbox", "toggle", "checkbox", "number_input", "text_area", "slider", "button"):
        for w in at.get(kind):
            out.append((kind, str(w.label)))
            out += [(f"{kind} option", str(o)) for o in getattr(w, "options", [])]
    for df in at.dataframe:
        for column in df.value.columns:
            out.append(("table header", str(column)))
            for cell in df.value[column].tolist():
                if cell is None or (isinstance(cell, float) and math.isnan(cell)):
                    out.append((f"table {column}", "None"))
                elif isinstance(cell, str) and not cell.strip():
                    out.append((f"table {column}", "''  (a blank cell)"))
                else:
                    out.append((f"table {column}", str(cell)))
    for spec in charts(at):
        out += [("chart", s) for s in strings(spec.get("data", [])) + strings(spec.get("layout", {}).get("title", {}))]
    return out


def token_axes(at) -> list[str]:
    """The labels of every chart axis or bar that names tokens (the bars, the query row's keys, the lens)."""
    out = []
    for spec in charts(at):
        for trace in spec["data"]:
            if trace.get("type") in ("bar", "heatmap") and any(not str(x).isdigit() for x in trace.get("x", [])):
                out += [str(x) for x in trace["x"]]
    return out


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_token_shows_blank_as_nan_none_or_a_bare_byte(page, lang):
    at = page(lang=lang, seed=1, max_new=3)
    assert not at.exception, [e.value for e in at.exception]
    found = [(where, text, why) for where, text in everything(at) for pattern, why in BAD if pattern.search(text)]
    assert not found, found[:12]
    labels = token_axes(at)
    assert labels and all(NUMBERED.match(x) for x in labels), [x for x in labels if not NUMBERED.match(x)]
    assert bar_labels(at)[:5] == ["1 ↵", "2 ␣", "3 ⇥", "4 ⟨E5⟩", "5 ␀"]  # the rigged order, each one seen
    prompt = next(c.value for c in at.caption if "床" in c.value and "·" in c.value).replace("\\", "")
    assert "床 (1/3) · 床 (2/3) · 床 (3/3)" in prompt and "cat · ↵ · 床" in prompt.replace("␣", ""), prompt
    lens = next(s for s in charts(at) if s["data"][0]["type"] == "heatmap" and "texttemplate" in s["data"][0])
    assert lens["data"][0]["x"][:3] == ["1 the", "2 ␣cat", "3 ↵"], lens["data"][0]["x"]  # positions from 1
    cache = next(
        s for s in charts(at) if s["data"][0]["type"] == "bar" and all(x.isdigit() for x in s["data"][0]["x"])
    )
    sizes = [float(y) for y in cache["data"][0]["y"]]  # KiB
    assert cache["data"][0]["text"] == [f"{y:.1f}".removesuffix(".0") for y in sizes]  # '20', '20.5': not '20.0000'


def bar_labels(at) -> list[str]:
    bars = next(c for c in charts(at) if c["data"][0]["type"] == "bar" and "customdata" in c["data"][0])
    return [str(x) for x in bars["data"][0]["x"]]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_predict_option_is_named_as_its_bar_is(page, lang):
    at = page(lang=lang, predict="true", seed=1)
    pick = at.radio(key="predict_pick")
    options = [str(o) for o in pick.options]
    assert not charts(at) and len(options) == 5  # the bars wait for the answer
    pick.set_value(1).run()  # the second option: a wrong answer, the truth is the first bar
    at.button(key="predict_reveal").click().run()  # the bars come first: the generation below may still compute
    assert not at.exception, [e.value for e in at.exception]
    bars = bar_labels(at)
    assert options == bars[: len(options)]  # the same number and the same label, from 1
    assert options[0].startswith("1 ") and options[0] == "1 ↵" and options[1] == "2 ␣"
    said = " ".join(w.value for w in at.warning)
    assert options[1] in said and bars[0] in said, said  # "You chose 2 ␣; … the most probable token is 1 ↵"
