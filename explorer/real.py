"""The trained model, once per server, and its runs cached on plain values (model, sentence, pad)."""
from __future__ import annotations

import streamlit as st

from attn_core import pretrained as pt


@st.cache_resource(max_entries=3, show_spinner=False)
def model(spec: str) -> pt.Pretrained:
    """Shared by every session: eval mode, gradients off, never written to."""
    return pt.load(spec)


@st.cache_resource(max_entries=64, show_spinner=False)
def run(spec: str, sentence: str, pad_to: int) -> pt.ModelRun:
    pre = model(spec)
    return pt.forward(pre, pt.encode(pre, sentence, pad_to=pad_to))


@st.cache_resource(max_entries=512, show_spinner=False)
def head(spec: str, sentence: str, pad_to: int, layer: int, head: int) -> pt.HeadTrace:
    return pt.take_apart(run(spec, sentence, pad_to), pt.head_weights(model(spec), layer, head), layer, head)


@st.cache_resource(max_entries=64, show_spinner=False)
def random_head(spec: str, sentence: str, pad_to: int, layer: int, seed: int) -> pt.HeadTrace:
    w = pt.random_weights(model(spec), seed=seed)
    return pt.take_apart(run(spec, sentence, pad_to), w, layer, -1, compare=False)
