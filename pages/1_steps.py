"""Step by step: tokens -> embeddings -> Q, K, V -> scores -> scaling -> mask -> softmax -> context."""

import streamlit as st

from attn_core.export import to_json
from attn_core.stages import step_stages
from explorer import charts
from explorer import figures as fig
from explorer.base import tables
from explorer.base.i18n import kernel_label, step_label, t
from explorer.base.safe import md
from explorer.boot import run_through_app
from explorer.charts.views import chart, focus_select
from explorer.classroom import takehome
from explorer.controls import PAGE, draw, later, present
from explorer.controls.state import current_settings, current_trace
from explorer.poll.view import predict_then_reveal
from explorer.steps import pair_predict, pin, qk_view
from explorer.steps.step_views import VIEWS, StepContext, stage_view

run_through_app()  # before anything is drawn; see explorer/boot.py

presenting = present.on()
if presenting:  # the walk's own row names the page's step and holds the way out
    walk_row = st.container()
else:
    title, toggle = st.columns([5, 1], vertical_alignment="bottom")
    title.title(t("page.steps"))
    with toggle:
        present.toggle()  # ?present=1: large type, Back / Next with the arrow keys, a narration per step
settings = current_settings()
if not presenting:
    st.caption(t("steps_intro"))
    st.caption(t("your_sentence"))
    st.text(settings.sentence)
trace = current_trace(settings)
if trace is None:
    st.stop()

s = trace.settings
q_words, k_words = list(trace.tokens.words), list(trace.key_tokens.words)
q_labels, k_labels = fig.labels(q_words), fig.labels(k_words)

if presenting:  # Back / Next walk the steps; the controls, the formula and the code fold away beside each other
    left, right = st.columns(2)
    box, explain = left.expander(t("present_controls")), right.expander(t("present_formula"))
else:
    box, explain = st.container(), st  # the formula and the code where each step draws them
first = present.FIRST if presenting else None  # presenting starts at step 1 unless the link names a step
c1, c2, c3 = box.columns([2, 1, 3])
focus = focus_select(c1, q_labels)
head = draw(PAGE["head_steps"], c2, high=s.heads - 1) if s.heads > 1 else 0
variant = trace.variant
stages = step_stages(trace, head, focus)  # every step a Stage from the engine, by its step key
if variant is not None:  # the variant's own steps between Q, K, V and the output
    steps = tuple(stages)
    step = draw(PAGE["step"], c3, options=steps, format_func=step_label(steps), horizontal=True, default=first)
    # presenting: with the controls it is about, folded away (drawn on every step, it pushed the chart down)
    (box if presenting else st).info(t("variant_steps", name=kernel_label(s.kernel)), icon=":material/alt_route:")
else:
    steps = PAGE["step"].options
    step = draw(PAGE["step"], c3, horizontal=True, default=first)
predicting = draw(PAGE["predict"], c1)  # predict, then reveal (with a live class poll under ?lesson=)
if presenting:  # a narration may name the answer: with predict on, it waits for the prediction
    with walk_row:
        said = present.walk(
            list(steps), step, step_label(steps), None if predicting else present.narration(step, trace, head, focus)
        )
pinned = pin.pinned()  # A's settings from the link's a=, or None
if predicting:  # stops until answered
    if pinned is not None:  # a comparison in the link: A's row shown, B's predicted (stops until answered)
        pair_predict.ask_then_reveal("steps", pinned, settings, head, focus)
    else:
        question = ("steps", s.key(), head, focus)
        predict_then_reveal(trace.attn[head, focus].tolist(), question, q_words[focus], k_words)
    if presenting:
        said.markdown(present.narration(step, trace, head, focus))
pin.pin_ui(box, pinned is not None)
if pinned is not None:  # A beside B on one colour scale, B − A, and what changed most
    pin.compare_section(pinned, settings, step, head)
VIEWS.get(step, stage_view)(StepContext(trace, head, focus, q_words, k_words, presenting, explain), stages[step])


def below_the_step() -> None:
    """The focus row's weights, the query-key map, the context vector's numbers and the downloads: under the step's
    charts (``later``: on a tab's first run, once the step's charts are on screen)."""
    tok = q_words[focus]

    if bool(trace.empty_rows.any()):
        st.warning(t("empty_rows", n=int(trace.empty_rows[head].sum())))
    chart(
        charts.bars(
            trace.attn[head, focus].tolist(),
            k_labels,
            title=t("focus_row", tok=tok),
            highlight=int(trace.attn[head, focus].argmax()),
        ),
        "chart_focus",
    )
    qk_view.section(trace, head, focus, q_labels, k_labels, PAGE["qk_colour"])  # drawn only while its expander is open
    with st.expander(t("focus_context", tok=md(tok))):
        tables.dataframe(
            {fig.axis_name("dim"): list(range(trace.context.shape[-1])), "z": trace.context[head, focus].tolist()},
            hide_index=True,
        )
    st.download_button(
        t("download_json"),
        lambda: to_json(trace),
        "attention_trace.json",
        "application/json",
        key="dl_json",
        on_click="ignore",
    )  # the JSON is built only when clicked
    takehome.offer("steps", settings, head=head, focus=focus)  # the view as a notebook, built when clicked


later.below_first_screen("steps", below_the_step)
