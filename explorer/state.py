"""Sidebar controls (drawn once, in app.py) and the cached trace every page reads.

Widgets -> a plain ``Settings`` -> ``attn_core.run_trace`` (cached on plain values) -> figures.
Only plain values live in ``st.session_state``; tensors stay in the resource cache.
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from attn_core import AttentionConfigError, Settings, Trace, run_trace
from attn_core.config import (
    INITS,
    LAYOUTS,
    LIMITS,
    POSITIONS,
    SCORES,
    TUTORIAL_SENTENCE,
)
from attn_core.masks import MASK_MODES
from attn_core.tokenize import split_words

from .cache import bounded
from .i18n import LANGS, error_text, label, lang, t
from .safe import md
from .urlcheck import MAX_TEXT, reject_choice

DEFAULT_SOURCE = "Das Leben ist kurz, iss zuerst den Nachtisch"
DEFAULTS = Settings()
BIND = dict(bind="query-params")


def _number(key: str, *, low: int | None = None, high: int | None = None, container=st.sidebar) -> int:
    low = LIMITS[key][0] if low is None and key in LIMITS else low
    high = LIMITS[key][1] if high is None and key in LIMITS else high
    return int(
        container.number_input(
            t(key), min_value=low, max_value=high, value=WIDGET_DEFAULTS[key], step=1, key=key, **BIND
        )
    )


def choice(widget, title: str, options, key: str, *, default, format_func, variant: str = "", **kwargs):
    """A select box or radio whose language-neutral value lives in ``st.session_state[key]``
    and in the URL (``?key=value``).

    The widget itself is keyed per language (``key__en``, ``key__zh``): its labels change with
    the language, and a fresh widget starting from the stored value keeps the setting across
    a switch. (``bind="query-params"`` would put the translated label in the URL.) Options may
    be strings or numbers; the URL holds their text. ``variant`` starts a fresh widget when the
    options change meaning (a new sentence for a token selector).
    """
    options = list(options)
    by_text = {str(o): o for o in options}
    # .get, not `in`: session_state has no __contains__, so `in` copies the whole state.
    stored = st.session_state.get(key)
    if stored is None:
        stored = st.query_params.get(key, default)
        if str(stored) not in by_text:
            reject_choice(key)  # a link with a value this control does not offer
    stored = by_text.get(str(stored), default)
    value = widget(
        title, options, index=options.index(stored), format_func=format_func, key=f"{key}__{variant}{lang()}", **kwargs
    )
    st.session_state[key] = value
    _sync_url(key, str(value), str(default))
    return value


def _sync_url(key: str, value: str, default: str) -> None:
    """``?key=value`` for a non-default value, nothing for the default; written only on change
    (every write to st.query_params is a message to the browser)."""
    current = st.query_params.get(key)
    if value == default and current is not None:
        del st.query_params[key]
    elif value != default and current != value:
        st.query_params[key] = value


# The sidebar's widgets bound to the URL, and the values they start from.
WIDGET_DEFAULTS = {
    "sentence": TUTORIAL_SENTENCE,
    "source": DEFAULT_SOURCE,
    "heads": DEFAULTS.heads,
    "d_model": DEFAULTS.d_model,
    "d_q": DEFAULTS.d_q,
    "d_k": DEFAULTS.d_k,
    "d_v": DEFAULTS.d_v,
    "temperature": DEFAULTS.temperature,
    "causal": DEFAULTS.causal,
    "window": DEFAULTS.window,
    "dilation": DEFAULTS.dilation,
    "global_tokens": DEFAULTS.global_tokens,
    "block": DEFAULTS.block,
    "seed": DEFAULTS.seed,
    "dropout_on": False,
    "dropout": 0.1,
    "residual_norm": DEFAULTS.residual_norm,
}
CHOICE_DEFAULTS = {
    "layout": DEFAULTS.layout,
    "score": DEFAULTS.score,
    "mask": DEFAULTS.mask,
    "pos": DEFAULTS.pos,
    "init": DEFAULTS.init,
}


def reset_to_defaults() -> None:
    """Back to the tutorial's settings, in the session and in the URL.

    A widget bound to the URL owns its query parameter, so it is reset through its value (and
    Streamlit drops the parameter); the choices are plain keys, reset with their URL entry."""
    for key in [k for k in st.session_state if "__" in k]:
        st.session_state.pop(key, None)
    for key, default in WIDGET_DEFAULTS.items():
        if st.session_state.get(key) is not None:  # drawn in the last run
            st.session_state[key] = default
    for key, default in CHOICE_DEFAULTS.items():
        st.session_state[key] = default
        st.query_params.pop(key, None)


def sidebar_ui() -> tuple[Settings, dict]:
    """Draw the shared controls; return the settings and a slot per field for its message."""
    sb = st.sidebar
    slots: dict[str, object] = {}
    current = lang()
    chosen = sb.radio(
        t("language"),
        list(LANGS),
        index=list(LANGS).index(current),
        format_func=LANGS.get,
        key="lang_widget",
        horizontal=True,
    )
    _sync_url("lang", chosen, "en")

    sb.subheader(t("sec_input"))
    sentence = sb.text_area(
        t("sentence"),
        value=WIDGET_DEFAULTS["sentence"],
        key="sentence",
        help=t("sentence_help"),
        height=80,
        max_chars=MAX_TEXT,
        **BIND,
    )
    slots["sentence"] = sb.empty()
    source = sb.text_input(t("source"), value=WIDGET_DEFAULTS["source"], key="source", max_chars=MAX_TEXT, **BIND)
    slots["source"] = sb.empty()

    sb.subheader(t("sec_dims"))
    heads = _number("heads")
    slots["heads"] = sb.empty()
    layout = choice(
        sb.radio, t("layout"), LAYOUTS, "layout", default=CHOICE_DEFAULTS["layout"], format_func=label("opt_layout_")
    )
    d_model = _number("d_model")
    slots["d_model"] = sb.empty()
    cols = sb.columns(3)
    d_q = _number("d_q", container=cols[0])
    d_k = _number("d_k", container=cols[1])
    d_v = _number("d_v", container=cols[2])
    if layout == "standard" and heads and d_model % heads == 0:
        sb.caption(t("standard_dims", d=d_model // heads))
    slots["d_q"] = slots["d_k"] = slots["d_v"] = sb.empty()

    sb.subheader(t("sec_scores"))
    score = choice(sb.selectbox, t("score"), SCORES, "score", default=CHOICE_DEFAULTS["score"], format_func=label())
    temperature = float(
        sb.number_input(
            t("temperature"),
            min_value=0.01,
            max_value=100.0,
            value=WIDGET_DEFAULTS["temperature"],
            step=0.1,
            key="temperature",
            **BIND,
        )
    )
    slots["temperature"] = sb.empty()
    mask = choice(sb.selectbox, t("mask"), MASK_MODES, "mask", default=CHOICE_DEFAULTS["mask"], format_func=label())
    causal = (
        sb.checkbox(t("causal"), value=WIDGET_DEFAULTS["causal"], key="causal", **BIND) if mask != "causal" else False
    )
    slots["causal"] = sb.empty()
    window, dilation, global_tokens, block = DEFAULTS.window, DEFAULTS.dilation, DEFAULTS.global_tokens, DEFAULTS.block
    if mask in ("sliding_window", "dilated", "global_window"):
        window = _number("window")
    if mask == "dilated":
        dilation = _number("dilation")
    if mask == "global_window":
        global_tokens = _number("global_tokens")
    if mask == "block":
        block = _number("block")
    slots["window"] = slots["dilation"] = slots["global_tokens"] = slots["block"] = slots["mask"] = sb.empty()

    sb.subheader(t("sec_model"))
    pos = choice(sb.selectbox, t("pos"), POSITIONS, "pos", default=CHOICE_DEFAULTS["pos"], format_func=label())
    init = choice(
        sb.radio, t("init"), INITS, "init", default=CHOICE_DEFAULTS["init"], format_func=label(), horizontal=True
    )
    seed = int(
        sb.number_input(
            t("seed"), min_value=0, max_value=2**31 - 1, value=WIDGET_DEFAULTS["seed"], step=1, key="seed", **BIND
        )
    )
    dropout = 0.0
    if sb.checkbox(t("dropout"), value=WIDGET_DEFAULTS["dropout_on"], key="dropout_on", **BIND):
        dropout = float(sb.slider(t("dropout_p"), 0.05, 0.9, WIDGET_DEFAULTS["dropout"], 0.05, key="dropout", **BIND))
    slots["dropout"] = sb.empty()
    residual_norm = sb.checkbox(
        t("residual_norm"), value=WIDGET_DEFAULTS["residual_norm"], key="residual_norm", **BIND
    )
    slots["residual_norm"] = sb.empty()
    sb.button(t("reset"), on_click=reset_to_defaults, key="reset")

    pad_to = 0
    if mask == "padding":
        pad_to = min(max(len(split_words(sentence)), len(split_words(source))), LIMITS["pad_to"][1])
    settings = Settings(
        sentence=sentence,
        source=None,
        seed=seed,
        init=init,
        d_model=d_model,
        d_q=d_q,
        d_k=d_k,
        d_v=d_v,
        heads=heads,
        layout=layout,
        score=score,
        temperature=temperature,
        pos=pos,
        mask=mask,
        causal=bool(causal),
        window=window,
        dilation=dilation,
        global_tokens=global_tokens,
        block=block,
        pad_to=pad_to,
        dropout=dropout,
        residual_norm=bool(residual_norm),
    )
    st.session_state["settings"] = settings.to_dict()
    st.session_state["source_text"] = source
    return settings, slots


def show_error(err: AttentionConfigError, slots: dict) -> None:
    """The message next to the control at fault (or at the top of the sidebar)."""
    slot = slots.get(err.field) or slots.get("sentence")
    message, fix = (md(text) for text in error_text(err))
    slot.error(f"{message}\n\n**{t('fix_prefix')}** {fix}" if fix else message, icon=":material/warning:")


@bounded(max_mib=256, max_entries=256)  # shared by every session, within a memory budget
def _trace(items: tuple) -> Trace:
    return run_trace(Settings(**dict(items)))


def trace_for(settings: Settings) -> Trace:
    """The cached trace for plain settings; raises AttentionConfigError for bad ones."""
    return _trace(tuple(sorted(settings.to_dict().items())))


def current_settings() -> Settings:
    data = st.session_state.get("settings")
    return Settings.from_dict(data) if data else DEFAULTS


def cross_settings(settings: Settings) -> Settings:
    """Queries from the second sentence, keys and values from the first."""
    return replace(
        settings,
        sentence=st.session_state.get("source_text", DEFAULT_SOURCE),
        source=settings.sentence,
        pad_to=0,
        mask="none" if settings.mask == "padding" else settings.mask,
    )


def current_trace(settings: Settings | None = None) -> Trace | None:
    """The trace, or None after showing the reason on the page (the rest of the page goes on)."""
    settings = settings or current_settings()
    try:
        return trace_for(settings)
    except AttentionConfigError as err:
        st.warning(t("invalid", msg=md(" ".join(error_text(err)))), icon=":material/warning:")
        return None
