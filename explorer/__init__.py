"""The Streamlit side of Attention Explorer: strings, widgets, figures. The math is in attn_core."""

from pathlib import Path

# The browser tab's icon, shipped with the app: Streamlit sends an SVG file inline (a data: URL), where a
# ``:material/...`` icon made every page load fetch it from a font host (a classroom offline had none).
FAVICON = str(Path(__file__).with_name("favicon.svg"))
