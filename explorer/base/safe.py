"""Text a user typed (or a link carried) is data: it is shown, never interpreted.

Streamlit renders Markdown in captions, messages and expander labels, and plotly renders a few
HTML tags (<a href>, <b>, <br>...) in titles, tick labels and hover text. Anything that came from
the user goes through ``md()`` before a Markdown sink and through ``plot()`` before a chart.
"""

from __future__ import annotations

import html
import re

_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#!|<>~$:])")


def md(text: object) -> str:
    """Backslash-escape every character Markdown (and Streamlit's extensions: :icons:, $math$,
    autolinks) gives a meaning, so the text shows as typed."""
    return _MARKDOWN.sub(r"\\\1", str(text))


def md_t(key: str, *, language: str | None = None, **values) -> str:
    """A catalogue string for a Markdown sink: its own markup (bold, code) rendered, the values put
    into it escaped with ``md()`` (they may be a user's text). Not ``md(t(...))``, which would show
    the catalogue's ``**`` as text."""
    from explorer.base.i18n import t

    return t(key, language=language, **{k: md(v) for k, v in values.items()})


def plot(text: object) -> str:
    """Entities for plotly's HTML-like labels: '<a href=...>' shows as typed, not as a link."""
    return html.escape(str(text), quote=False)
