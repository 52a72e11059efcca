"""How the shipped decoder's induction head formed, read from its training record
(``benchmarks/results/decoder_train.json``, written by ``scripts/train_decoder.py``): the best induction and
previous-token scores and the second copy's loss against the first's, every probe of the run, the step where the
head formed marked as the Lab marks its phase change."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import streamlit as st

from attn_core import models as pt
from explorer import charts
from explorer import figures as fig
from explorer.base.i18n import t
from explorer.charts.views import chart
from explorer.model import real

LOW = 0.2  # an induction score below this: no head yet (the phase change's span starts at the last such probe)
RECORD = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "decoder_train.json"


@functools.lru_cache(maxsize=4)
def _read(path: str, mtime: float) -> dict | None:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def shipped_record(name: str, record: Path = RECORD) -> dict | None:
    """The training record of the offered model ``name`` when it is the shipped decoder (None otherwise): its
    directory is the loaded model's own (``explorer.model.real``)."""
    pre = real.model(name)
    path = pre.path if pre is not None else None
    if not path or Path(path).parent != pt.BUNDLED_DIR:
        return None
    try:
        d = _read(str(record), record.stat().st_mtime)
    except OSError:
        return None
    return d if isinstance(d, dict) and d.get("name") == Path(path).name else None


def curve_chart(d: dict):
    """The probe's three numbers over the run; a dashed line where the head formed."""
    curve = [p for p in d.get("curve", []) if isinstance(p, dict) and "step" in p]
    steps = [p["step"] for p in curve]
    series = {
        t("dec.form_induction"): [p.get("induction_max") for p in curve],
        t("dec.form_previous"): [p.get("previous_token_max") for p in curve],
        t("dec.form_ratio"): [p.get("copy_ratio") for p in curve],
    }
    figure = charts.line(steps, series, title=t("dec.form_title"), x_title=t("dec.form_step"))
    at = d.get("formed_at_step")
    if at is not None:
        figure.add_vline(x=at, line=dict(dash="dash", color=fig.run_style().colour("accent")))
        figure.add_annotation(x=at, y=1.0, yref="paper", text=t("dec.form_mark", step=at), showarrow=False)
    text = next((p["step"] for p in curve if p.get("stage") == "text"), None)
    if text is not None:
        figure.add_vline(x=text, line=dict(dash="dot", color="#888888"))
    return figure, at, text


def formation_ui(name: str) -> None:
    """The chart and its sentence, for the shipped decoder only (another model has no record)."""
    d = shipped_record(name)
    if not d or not d.get("curve"):
        return
    figure, at, text = curve_chart(d)
    st.markdown(f"**{t('dec.form_heading')}**")
    chart(figure, "dec_formation")
    if at is not None:
        p = d["probe"]
        before = [q["step"] for q in d["curve"] if q["step"] < at and (q.get("induction_max") or 0) < LOW]
        facts = dict(step=at, text=text, ind=f"{p['induction_max']:.2f}", prev=f"{p['previous_token_max']:.2f}")
        facts["span"] = at - (before[-1] if before else 0)
        st.caption(t("dec.form_sentence", ratio=f"{p['copy_ratio']:.3f}", **facts))
