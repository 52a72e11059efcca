"""Every value a link brings is checked before a widget sees it.

A link is how this app is shared in a classroom, so anyone can send any link. Streamlit hands a
URL value to its widget as it is: ``?heads=1e400`` overflowed inside ``number_input`` and showed a
traceback. Here each URL parameter of a number, a switch or a text is parsed and checked against
its range first; one that cannot be used is removed from the URL (its control starts from the
default) and named in a notice. Choices are checked where they are drawn (``state.choice``).
"""

from __future__ import annotations

import math

import streamlit as st

from attn_core.config import LIMITS

MAX_TEXT = 1000  # characters of a sentence (it travels in the URL; 1000 CJK characters are ~9 KB)

# URL name -> (lowest, highest, integer?) for the sidebar's numbers; page controls pass their own.
NUMBERS: dict[str, tuple[float, float, bool]] = {
    **{
        name: (low, high, True) for name, (low, high) in LIMITS.items() if name not in ("pad_to", "features", "proj_k")
    },
    "temperature": (0.01, 100.0, False),
    "dropout": (0.05, 0.9, False),
}
SWITCHES = ("causal", "dropout_on", "residual_norm")
TEXTS = ("sentence", "source")
NOTICES = "_url_notices"  # session-state key: the parameters fixed since the link was opened
SHOWN_WITH = "_url_notices_settings"  # the settings when the notice was first shown


def _number(raw: str, low: float, high: float, integer: bool) -> float | None:
    try:
        value = float(raw)
    except (TypeError, ValueError, OverflowError):
        return None
    if not math.isfinite(value) or not low <= value <= high:
        return None
    if integer and value != int(value):
        return None
    return value


def _seed(name: str, value: str | None) -> None:
    """Streamlit seeds a URL-bound widget from a snapshot of the URL taken when the run began,
    not from ``st.query_params``: correct the snapshot too (private, so guarded; the hostile-link
    tests fail if a Streamlit upgrade moves it)."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None:
        return
    with ctx.session_state.query_params() as qp:
        initial = getattr(qp, "_initial_query_params", None)
        if isinstance(initial, dict):
            if value is None:
                initial.pop(name, None)
            elif name in initial:
                initial[name] = [value]


def _drop(name: str) -> None:
    del st.query_params[name]
    _seed(name, None)
    st.session_state.setdefault(NOTICES, []).append(name)


def check_number(name: str, low: float, high: float, *, integer: bool = True) -> None:
    """Remove ``?name=`` from the URL unless it is a number in [low, high] (whole if ``integer``).
    Pages call it just before drawing a control whose range depends on the settings."""
    raw = st.query_params.get(name)
    if raw is not None and _number(raw, low, high, integer) is None:
        _drop(name)


def reject_choice(name: str) -> None:
    """A choice's URL value is not one of its options: drop it (the control shows its default)."""
    if st.query_params.get(name) is not None:
        _drop(name)


def show_notices(slot) -> None:
    """One message naming the parameters of the link that could not be used."""
    from .i18n import t
    from .safe import md

    names = notices()
    if not names:
        return
    now = st.session_state.get("settings")
    first = st.session_state.get(SHOWN_WITH)
    if first is None:
        st.session_state[SHOWN_WITH] = now
    elif first != now:  # the user has changed a setting since: the notice has done its job
        st.session_state[NOTICES], st.session_state[SHOWN_WITH] = [], None
        return
    slot.warning(t("url_fixed", names=", ".join(md(n) for n in dict.fromkeys(names))), icon=":material/link_off:")


def check_url() -> None:
    """The sidebar's URL parameters, checked once per run before any widget reads them."""
    params = st.query_params
    for name, (low, high, integer) in NUMBERS.items():
        check_number(name, low, high, integer=integer)
    for name in SWITCHES:
        raw = params.get(name)
        if raw is not None and raw.lower() not in ("true", "false"):
            _drop(name)
    for name in TEXTS:
        raw = params.get(name)
        if raw is not None and len(raw) > MAX_TEXT:
            params[name] = raw[:MAX_TEXT]
            _seed(name, raw[:MAX_TEXT])
            st.session_state.setdefault(NOTICES, []).append(name)


def notices() -> list[str]:
    """The parameters of this run's URL that could not be used (names only: a value is never echoed)."""
    return list(st.session_state.get(NOTICES) or [])
