"""Next token's "copying what came before" (explorer/nexttoken/copying.py) on the shipped decoder, in AppTest: the
section draws in both languages for every kind of repeating prompt; the numbers it prints are the engine's
(``attn_core.interpret.copying``) for the same prompt; predict-then-reveal asks which earlier token the induction head
looks at, keeps the map hidden until the answer is in, and names the head's own largest weight."""

from __future__ import annotations

import pytest
from background import until_done

from attn_core import models
from attn_core.interpret import copying as cp

PAGE = "pages/11_next_token.py"
PROMPT = "the cat sat on the mat"


def texts(at) -> str:
    kinds = ("subheader", "markdown", "caption", "info", "success", "warning")
    return "\n".join(str(e.value) for kind in kinds for e in at.get(kind))


def copy_section(at) -> str:
    whole = texts(at)
    return whole[whole.find("Copying what came before") :] if "Copying what came before" in whole else whole


@pytest.mark.parametrize("kind", cp.KINDS)
def test_the_section_prints_the_engines_numbers(app, kind):
    at = until_done(app(PAGE, query={"prompt": PROMPT, "copy": kind, "seed": "3"}))
    m = models.load("fortune-gpt")
    f = cp.copying(m, cp.repeated_prompt(m, kind, text=PROMPT, seed=3))
    section = copy_section(at)
    assert "Copying what came before" in section
    if not f["copies"]:
        assert "can be copied" in section
        return
    assert f"**{len(f['copies'])}** tokens it can copy" in section
    assert f"**{f['first_mean']:.2f}** nats the first time" in section
    assert f"**{f['second_mean']:.2f}** nats in the copy" in section
    layer, head = f["head"]
    assert f"**Layer {layer}, head {head}** puts **{f['stripe'][layer][head]:.2f}**" in section
    assert f"goes from **{f['second_mean']:.2f}** to **{f['ablated'][layer][head]:.2f}** nats" in section
    for word in ("nan", "None", "\ufffd"):
        assert word not in section


def test_chinese(app):
    query = {"prompt": PROMPT, "copy": "random", "seed": "3"}
    until_done(app(PAGE, query=query))  # the job computed once; the page in Chinese then finds it done
    at = app(PAGE, query=query | {"lang": "zh"})
    assert not at.get("progress")
    whole = texts(at)
    assert "照抄前文" in whole
    assert "Copying what came before" not in whole


def test_predict_then_reveal_asks_for_the_heads_source(app):
    at = app(PAGE, query={"prompt": PROMPT, "copy": "random", "seed": "5", "predict": "1"})
    # the page's first question (the next token) comes first: answer it
    at.radio(key="predict_pick").set_value(0).run()
    until_done(at.button(key="predict_reveal").click().run())
    assert "which earlier token will the induction head look at most" in texts(at)
    assert not [c for c in at.get("plotly_chart") if "nt_copy_map" in str(getattr(c, "key", "") or "")]
    m = models.load("fortune-gpt")
    f = cp.copying(m, cp.repeated_prompt(m, "random", seed=5))
    q = f["copies"][-1][0]
    row = f["weights"][q][: q + 1]
    truth = max(range(len(row)), key=row.__getitem__)
    at.radio(key="predict_pick_copy").set_value(truth).run()
    until_done(at.button(key="predict_reveal_copy").click().run())
    assert at.success, texts(at)
    assert f"weight {row[truth]:.2f}" in at.success[-1].value
    # the first answer is kept: the page does not ask the next-token question again
    assert "Before you see the bars" not in texts(at)
