"""Text that Streamlit draws too faint for WCAG AA (4.5:1), as axe-core measures it in both themes
(tests/browser/test_axe.py): captions (its faded text: 3.9:1 on white), code comments (3.6:1 light, 4.3:1 dark)
and the slider's numbers in the primary colour (3.7:1 on the dark background; a primary dark enough for that
would fail white button text on it), and the code blocks' highlighted tokens (keywords in #1c83e1: 3.8:1 light,
4.1:1 dark). Each takes the theme's own text colour (captions and comments a little lighter, keywords bold), which
keeps them above 4.5:1 on either background."""

from __future__ import annotations

import streamlit as st

CSS = """<style>
[data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] p { color: inherit !important; }
[data-testid="stCaptionContainer"] { opacity: 0.8; }
[data-testid="stCode"] .token { color: inherit !important; }
.katex, .katex * { color: inherit !important; }
[data-testid="stCode"] .token.keyword { font-weight: 600; }
[data-testid="stCode"] .token.comment { opacity: 0.8; }
[data-testid="stSliderThumbValue"], [data-testid="stSliderTickBarMin"], [data-testid="stSliderTickBarMax"],
[data-testid="stSliderThumbValue"] p, [data-testid="stSliderTickBarMin"] p, [data-testid="stSliderTickBarMax"] p
{ color: inherit !important; }
</style>"""


def style() -> None:
    """Once per run, before the page draws."""
    st.html(CSS)
