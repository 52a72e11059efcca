"""Inside the model on the shipped decoder: the training record's finding (an induction head formed) and its curve
with the step it formed, and, once the head roles are computed, which earlier head the induction head reads, each
against an independent reading (the record file read here; ``interpret.composition`` run here)."""

from __future__ import annotations

import json

from background import until_done

from attn_core import models
from attn_core.interpret import composition, decoder
from explorer.model import real
from explorer.model.formation import RECORD

PAGE = "pages/9_inside.py"
QUERY = {"rm_model": "fortune-gpt", "sentence": "The cat sat on the mat"}


def texts(at) -> str:
    kinds = ("markdown", "caption", "info", "success", "warning")
    return "\n".join(str(e.value) for kind in kinds for e in at.get(kind))


def test_the_record_and_the_step_the_head_formed(app):
    real.wait_for("fortune-gpt", timeout=300)
    record = json.loads(RECORD.read_text(encoding="utf-8"))
    at = app(PAGE, query=QUERY)
    shown = texts(at)
    best = max(v for row in record["scores"]["induction"] for v in row)
    assert f"formed an induction head in its training ({record['config']['steps']} steps" in shown
    assert f"best induction score on repeated random tokens is {best:.3f}" in shown
    assert f"The head formed at step **{record['formed_at_step']}**" in shown
    charts = [c.proto.spec for c in at.get("plotly_chart")]
    assert any(f'"x":{record["formed_at_step"]}' in spec.replace(" ", "") for spec in charts)


def test_which_earlier_head_the_induction_head_reads(app):
    at = app(PAGE, query=QUERY)
    at.toggle(key="in_roles_go").set_value(True).run()
    until_done(at)
    m = models.load("fortune-gpt")
    c = composition.of_roles(m, decoder.head_roles(m))
    top = c["rows"][0]
    shown = texts(at)
    assert f"The induction head **{c['layer']}:{c['head']}** (score {c['induction']:.2f})" in shown
    assert f"reads **{top['layer']}:{top['head']}** most" in shown
    assert f"falls to **{top['induction_without']:.2f}**" in shown
    assert f"K-composition is **{top['k_composition']:.2f}**" in shown
