"""The Next token page's settings: its controls (each one a URL parameter, drawn and checked like every other
control, ``explorer.controls``) and the messages for a link's values that could not be used.

The link's ``prompt``, ``temp``, ``top_k``, ``top_p``, ``greedy``, ``max_new``, ``gen_step`` and the head's
``nt_layer``/``nt_head`` are this page's; the model is the four model pages' one picker's ``model``
(``explorer.model.pick``); the seed is the sidebar's ``seed`` (one ``?seed=`` per link: the same link samples the
same token). A value that cannot be used is dropped from the link and named in the
sidebar's notice, as everywhere; this page also says *why*, in the engine's words (``attn_core.nexttoken``'s
``SamplingError``/``PromptError`` messages, in the UI's language), for as long as the notice shows.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from attn_core import AttentionConfigError
from attn_core import nexttoken as nt
from attn_core.models import ModelUnavailable
from attn_core.nexttoken.sampling import SEED_MAX, T_HIGH, T_LOW, whole
from explorer.base import session
from explorer.base.i18n import error_text, t
from explorer.base.safe import md
from explorer.controls import Control, draw
from explorer.model import pick

DEFAULT_PROMPT = "Once upon a time, there was a"
SEED_HIGH = min(2**31 - 1, SEED_MAX)  # the sidebar's seed control's own bound
RAW_SHOWN = 16  # characters of a refused link value quoted in its message

PROMPT = Control("prompt", "area", DEFAULT_PROMPT, title="nt_prompt")
TEMP = Control("temp", "float", 1.0, low=T_LOW, high=T_HIGH, step=0.1, title="nt_temp")
TOP_K = Control("top_k", "int", 0, low=0, high=10**7, title="nt_top_k")  # high: the model's vocabulary
TOP_P = Control("top_p", "float", 1.0, low=0.01, high=1.0, step=0.05, title="nt_top_p")
GREEDY = Control("greedy", "switch", False, title="nt_greedy")
MAX_NEW = Control("max_new", "int", 8, low=1, high=nt.MAX_NEW, title="nt_max_new")
LAYER = Control("nt_layer", "int", 0, low=0, high=63, title="rm_layer")
HEAD = Control("nt_head", "int", 0, low=0, high=63, title="head")
CONTROLS = (PROMPT, TEMP, TOP_K, TOP_P, GREEDY, MAX_NEW, LAYER, HEAD)
WHY = "_nt_link_why"  # session: {parameter: (message, fix)} of the link's refused values


@dataclass(frozen=True)
class Choice:
    """What the learner chose, as plain values (the cache keys of every result on the page)."""

    model: str
    prompt: str
    temperature: float
    top_k: int
    top_p: float
    seed: int
    greedy: bool

    def sampling(self, vocab: int) -> nt.Sampling:
        return nt.sampling(
            vocab=vocab,
            temperature=self.temperature,
            top_k=self.top_k,
            top_p=self.top_p,
            seed=self.seed,
            greedy=self.greedy,
        )

    def key(self) -> tuple:
        return (self.model, self.prompt, self.temperature, self.top_k, self.top_p, self.seed, self.greedy)


def refusal(name: str, raw: str, vocab: int, max_new: int) -> AttentionConfigError | None:
    """Why the link's ``raw`` value for ``name`` cannot be used (None: it can), in the engine's words."""
    c = {x.name: x for x in CONTROLS}[name]
    high = {TOP_K.name: vocab, MAX_NEW.name: max_new}.get(name)
    if c.parse(raw, high=high) is not None:
        return None
    shown = raw[:RAW_SHOWN]
    try:
        if name == MAX_NEW.name:
            whole("max_new", shown, 1, max_new)
        elif name in (TEMP.name, TOP_K.name, TOP_P.name):
            field = {TEMP.name: "temperature", TOP_K.name: "top_k", TOP_P.name: "top_p"}[name]
            nt.sampling(vocab=vocab, **{field: shown})
        elif name == GREEDY.name:
            return AttentionConfigError("greedy", "unknown_choice", value=shown, options="1, true, 0, false")
    except AttentionConfigError as err:
        return err
    if c.low is None:
        return None
    return AttentionConfigError(name, "out_of_range", value=shown, low=c.low, high=high if high else c.high)


def read_link(vocab: int, max_new: int) -> None:
    """Before the controls are drawn: the reason for each of the link's values that cannot be used, kept in the
    session (the control then drops the value, with the sidebar's notice)."""
    why = dict(session.get(WHY) or {})
    for name in (TEMP.name, TOP_K.name, TOP_P.name, GREEDY.name, MAX_NEW.name):
        raw = session.url(name)
        err = refusal(name, raw, vocab, max_new) if raw is not None else None
        if err is not None:
            why[name] = error_text(err)
    session.put(WHY, why)


def link_messages() -> list[tuple[str, str]]:
    """(message, fix) for each refused value of the link while the sidebar's notice names it; the seed's from
    the sidebar's notice (a seed is a whole number 0 to 2³¹−1)."""
    shown = set(session.notices_to_show())
    why = dict(session.get(WHY) or {})
    out = [why[name] for name in why if name in shown]
    if "seed" in shown:
        out.append(error_text(AttentionConfigError("seed", "whole_number", low=0, high=SEED_HIGH)))
    return out


def draw_sampling(container, vocab: int) -> tuple[float, int, float, bool]:
    """Temperature, top-k, top-p and greedy, in one row of ``container``."""
    a, b, c, d = container.columns([1, 1, 1, 1], vertical_alignment="bottom")
    temperature = draw(TEMP, a)
    top_k = draw(TOP_K, b, high=vocab)
    top_p = draw(TOP_P, c)
    greedy = draw(GREEDY, d)
    return float(temperature), int(top_k), float(top_p), bool(greedy)


def not_decoder(name: str, decoders: list[str]) -> ModelUnavailable:
    """Why the model ``name`` cannot be used here: an encoder predicts no next token; the decoders offered."""
    return ModelUnavailable("nexttoken_not_decoder", spec=name, options=", ".join(decoders))


def offer_decoders(name: str, decoders: list[str]) -> None:
    """The model picked (on this page or another) is an encoder: why it cannot be used here, in the UI's language,
    and a button for each decoder that picks it (the pick is the learner's: it is never replaced behind them)."""
    message, fix = error_text(not_decoder(name, decoders))
    st.warning(f"{md(message)} {md(fix)}", icon=":material/swap_horiz:")
    cols = st.columns(min(len(decoders), 4))
    for i, decoder in enumerate(decoders):
        label = f"{t('nt_model')} · {md(decoder)}"  # "Decoder · fortune-gpt"
        cols[i % len(cols)].button(label, key=f"nt_use_{i}", on_click=pick.use, args=(decoder,))
