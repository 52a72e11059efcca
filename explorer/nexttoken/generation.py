"""Generation token by token on the Next token page: Step, Play and Back move through the generated tokens (the
``gen_step`` control, in the link too); at each step, the new token's query row over the cached keys, the KV
cache drawn growing (its shape layers × 2 × kv_heads × length × d_head and its bytes), the check that cached
generation equals recomputing the whole sequence, and the top 3 alternatives at that step continued greedily.

The tokens are generated once per settings by a background worker (``explorer.jobs.heavy``: one job for every
session that asks for the same settings, the seed making them the same on every run), as plain values; the page
shows them one step at a time, and a step is a plain int in the session."""

from __future__ import annotations

import streamlit as st

from attn_core.models import display_pieces, numbered, visible
from explorer import charts
from explorer.base import session
from explorer.base.i18n import t
from explorer.base.safe import md, plot
from explorer.charts.views import chart
from explorer.controls import Control, draw, present
from explorer.jobs import waiting
from explorer.nexttoken import runs
from explorer.nexttoken.settings import Choice
from explorer.nexttoken.views import narrate, shown

STEP = Control("gen_step", "int", 1, low=1, high=64, title="nt_gen_step")
PLAYING = "_nt_playing"  # session: whether Play is on (a plain bool)
ADVANCE = "_nt_advance"  # session: Play's timer asks for the next step
TICKED = "_nt_ticked"  # session: the timer has drawn once since the last step
PLAY_S = 1.0  # seconds between two steps while playing
JOBS = "next_token"  # the background jobs this page's session waits for (explorer.jobs.waiting)


def _move(to: int) -> None:
    session.put(STEP.name, to)


def _play(on: bool) -> None:
    session.put(PLAYING, on)


def stepper(n: int) -> int:
    """Back, Step and Play, and the step number itself (1..n); returns the step shown."""
    a, b, c, d = st.columns([2, 1, 1, 1], vertical_alignment="bottom")
    if session.pop(ADVANCE) and bool(session.get(PLAYING)):  # Play's next step, before the control is drawn
        _move(int(session.get(STEP.name) or 1) + 1)
    at = int(draw(STEP, a, high=n, label_visibility="collapsed" if present.on() else "visible"))  # presenting: short
    b.button(t("nt_back"), key="nt_back", on_click=_move, args=(at - 1,), disabled=at <= 1, width="stretch")
    c.button(t("nt_step"), key="nt_step", on_click=_move, args=(at + 1,), disabled=at >= n, type="primary")
    playing = bool(session.get(PLAYING)) and at < n
    d.button(
        t("nt_pause") if playing else t("nt_play"),
        key="nt_play",
        on_click=_play,
        args=(not playing,),
        disabled=at >= n and not playing,
        width="stretch",
    )
    return at


def kib(size: int) -> str:
    """Bytes as KiB for a sentence or a bar: whole when whole ('20', not '20.0000'), else one decimal ('20.5')."""
    text = f"{size / 1024:.1f}"
    return text.removesuffix(".0")


def query_row(gen: dict, at: int) -> None:
    """The step's new query attending over the keys in the cache: one row per layer and head. Its title, a
    sentence that names the token, is written above the chart (it wraps there; a chart's title would be cut)."""
    att = gen["steps"][at - 1]["attention"]  # layers × heads × length
    if att is None:
        return
    layers, heads, length = len(att), len(att[0]), len(att[0][0])
    keys = [plot(x) for x in numbered(gen["labels"][:length])]
    rows = [f"L{layer} H{head}" for layer in range(layers) for head in range(heads)]
    z = [row for layer in att for row in layer]
    new = gen["labels"][min(length, len(gen["labels"]) - 1)]  # the token this query predicted, after its keys
    presenting = present.on()  # the narration names the token and the keys; the chart fits the first screen
    if not presenting:
        st.markdown(f"**{t('nt_query_title', tok=shown(new), n=length)}**")
    figure = charts.heatmap(
        z,
        keys,
        rows,
        x_title="key",
        y_title=t("nt_layer_head"),
        zrange=(0.0, 1.0),
        height=220 if presenting else None,
    )
    chart(figure, "nt_query_row")


def cache_ui(gen: dict, at: int) -> None:
    """The cache's shape and bytes at every step so far: it grows by one position a step."""
    s = gen["steps"][at - 1]
    if s["cache_shape"] is None:
        st.caption(t("nt_cache_none"))
        return
    layers, two, kv, length, d = s["cache_shape"]
    st.markdown(t("nt_cache_shape", layers=layers, two=two, kv=kv, length=length, d=d, kib=kib(s["cache_bytes"])))
    steps = gen["steps"][:at]
    sizes = [x["cache_bytes"] / 1024 for x in steps]
    names = [str(x["cache_shape"][3]) for x in steps]
    figure = charts.bars(sizes, names, title=t("nt_cache_title"), y_title="KiB")
    figure.update_traces(text=[kib(x["cache_bytes"]) for x in steps])  # '20', not fig.bars' '20.0000'
    chart(figure, "nt_cache_bars")


def check_ui(check: dict) -> None:
    facts = dict(d=f"{check['max_abs_diff']:.2g}", allowed=f"{check['allowed']:.2g}", n=check["positions"])
    if check["ok"]:
        st.success(t("nt_cache_check", **facts), icon=":material/check_circle:")
    else:
        st.error(t("nt_cache_check_bad", **facts), icon=":material/warning:")


def branches_ui(found: list[dict] | None, at: int) -> None:
    """The top 3 tokens at this step, each continued a few greedy tokens, side by side (None: still computing)."""
    st.markdown(f"**{t('nt_branches', step=at)}**")
    if found is None:
        return
    for col, b in zip(st.columns(len(found)), found):
        with col.container(border=True):
            mark = " ✓" if b["chosen"] else ""
            st.markdown(f"**{shown(b['label'])}**{mark} · p = {b['prob']:.3f}")
            st.text(b["text"])
    st.caption(t("nt_branches_note", n=runs.N_NEW_BRANCH))


def so_far(choice: Choice, gen: dict, last: int) -> str:
    """The text up to token ``last``, the generated tokens highlighted, their spaces and new lines seen (␣ ↵: a
    highlighted blank says nothing); a character split over several byte tokens written once
    (``models.display_pieces``: each of its tokens shows the whole character)."""
    shown, group = display_pieces(runs.decoder(choice.model).tokenizer, gen["ids"][: last + 1])
    n = len(gen["prompt_ids"])
    parts = [(md(visible(p) if i >= n else p), i >= n) for i, (p, g) in enumerate(zip(shown, group)) if g == i]
    return "".join(f":orange-background[{p}]" if new else p for p, new in parts)


def generation_ui(choice: Choice, max_new: int, limit: int) -> None:
    """The whole section; a fragment of the page (Step and Back rerun only it). ``limit``: the most new tokens."""
    st.subheader(t("nt_generate"))
    st.caption(t("nt_generate_intro", limit=limit))
    wanted = runs.generation(choice, max_new)
    job = waiting.ask(JOBS, {"gen": wanted})["gen"]
    if not waiting.status(job):
        waiting.pending()
        return
    gen = job.result
    n = len(gen["steps"])
    at = stepper(n)
    found = waiting.ask(JOBS, {"gen": wanted, "branches": runs.branches(choice, max_new, at - 1)})["branches"]
    new_at = len(gen["prompt_ids"]) + at - 1
    st.markdown(so_far(choice, gen, new_at))
    step = gen["steps"][at - 1]
    narrate("generate", step=at, tok=shown(gen["labels"][new_at]), n=new_at, kib=kib(step["cache_bytes"]))
    if gen["stopped"] == "eos" and at == n:
        st.caption(t("nt_eos"))
    query_row(gen, at)
    cache_ui(gen, at)
    check_ui(gen["check"])
    done = waiting.status(found)
    branches_ui(found.result["branches"] if done else None, at)
    if not done:
        waiting.pending()
    if session.get(PLAYING) and at < n:
        _advance_later()


def _advance_later() -> None:
    """While playing: one more step after ``PLAY_S`` seconds (a fragment that reruns the page once)."""

    @st.fragment(run_every=PLAY_S)
    def tick() -> None:
        if session.get(TICKED):  # the timer's own rerun, PLAY_S after the step was drawn
            session.put(TICKED, False)
            session.put(ADVANCE, True)
            st.rerun()
        session.put(TICKED, True)

    tick()
