"""The numbers two pages show, against an independent computation from the trace's own Q, K, V:
Cross-attention's heatmap is softmax(Q Kᵀ/√d_k) over the first sentence, and the Variants page's
errors are the distances between outputs computed here by hand (dense masked softmax, the uniform
average), not read back from the code that drew them."""

import json

import torch

from attn_core import Settings, run_trace
from explorer.controls.state import DEFAULT_SOURCE


def charts(at) -> dict[str, dict]:
    return {c.proto.id: json.loads(c.proto.spec) for c in at.get("plotly_chart")}


def heatmap_z(at, title_start: str) -> torch.Tensor:
    for spec in charts(at).values():
        if (
            spec["layout"].get("title", {}).get("text", "").startswith(title_start)
            and spec["data"][0]["type"] == "heatmap"
        ):
            return torch.tensor(spec["data"][0]["z"], dtype=torch.float64)
    raise AssertionError(f"no heatmap titled {title_start!r}")


SENTENCE = "Life is short, eat dessert first"


def test_cross_attention_heatmap_is_softmax_of_the_second_sentences_queries_over_the_first(app):
    at = app("pages/3_cross.py", {"sentence": SENTENCE, "heads": "2", "cross_head": "1"})
    shown = heatmap_z(at, "Attention weights")
    tr = run_trace(Settings(sentence=DEFAULT_SOURCE, source=SENTENCE, heads=2))
    q, k = tr.Q[1].double(), tr.K[1].double()
    expected = torch.softmax(q @ k.T / q.shape[-1] ** 0.5, dim=-1)  # L (2nd sentence) x S (1st)
    assert shown.shape == (len(tr.tokens.words), len(SENTENCE.replace(",", "").split()))
    assert torch.allclose(shown, expected, atol=1e-5), (shown - expected).abs().max()


def _metric(at, label: str) -> list[float]:
    return [float(m.value) for m in at.metric if m.label == label]


def test_variants_errors_are_distances_computed_here_by_hand(app):
    at = app(
        "pages/5_variants.py",
        {"sentence": SENTENCE},
    )
    at.multiselect(key="var_kernels").set_value(["full", "sliding_window"]).run()
    at.number_input(key="var_window").set_value(1).run()
    assert not at.exception, [e.value for e in at.exception]
    full_err, window_err = _metric(at, "max |Δ output|")
    # head 0 of the same trace, single head, scaled dot (what the page says it compares)
    tr = run_trace(Settings(sentence=SENTENCE, heads=1, layout="tutorial"))
    q, k, v = tr.Q[0].double(), tr.K[0].double(), tr.V[0].double()
    scores = q @ k.T / q.shape[-1] ** 0.5
    full = torch.softmax(scores, -1) @ v
    i = torch.arange(len(q))
    band = (i[:, None] - i[None, :]).abs() <= 1
    window = torch.softmax(scores.masked_fill(~band, float("-inf")), -1) @ v
    uniform = v.mean(0, keepdim=True).expand_as(v)
    assert abs(full_err) < 1e-5  # full attention against itself
    assert abs(window_err - float((window - full).abs().max())) < 1e-3 * max(1.0, window_err)
    beside = [c.value for c in at.caption if c.value.startswith("Uniform attention")]
    assert len(beside) == 2  # under each kernel
    assert all(abs(float(text.rsplit(" ", 1)[-1]) - float((uniform - full).abs().max())) < 1e-3 for text in beside)


def test_real_model_overview_outlines_the_head_taken_apart(app):
    at = app("pages/7_model.py", {"sentence": SENTENCE, "rm_layer": "4", "rm_head": "9"})
    grid = next(
        s
        for s in charts(at).values()
        if s["layout"].get("shapes")
        and s["data"][0]["type"] == "heatmap"
        and len(s["layout"]["yaxis"].get("tickvals", [])) == 6
    )
    (rect,) = grid["layout"]["shapes"]
    n = len(at.dataframe[0].value)  # the pieces, [CLS] and [SEP] included
    L = S = n  # a panel is the sentence's pieces, one apart
    assert (rect["x0"], rect["y0"]) == (9 * (S + 1) - 0.5, 4 * (L + 1) - 0.5) and rect["x1"] - rect["x0"] == S


def test_the_padding_step_says_when_nothing_is_padded(app):
    long_first = app("pages/1_steps.py", {"mask": "padding", "step": "st_mask", "source": "a b"})
    assert any("Nothing is padded" in i.value for i in long_first.info)
    short_first = app("pages/1_steps.py", {"mask": "padding", "step": "st_mask", "source": "a b c d e f g h i j"})
    assert not any("Nothing is padded" in i.value for i in short_first.info)
    assert any("may attend" in c.value and not c.value.startswith("60 of 60") for c in short_first.caption)
