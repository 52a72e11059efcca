"""The Streamlit side of Attention Explorer: strings, widgets, figures. The math is in attn_core."""
