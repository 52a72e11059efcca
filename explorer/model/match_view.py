"""Heads matched across two models or two checkpoints (``attn_core.interpret.head_match``): on Inside the model,
this model's heads against another offered model's that cuts text into the same tokens (two checkpoints of one run,
offered as two directories, always do); in the Lab, two snapshots of a run, or A's and B's (``explorer.lab``).

The table pairs each head of one side with one head of the other (the optimal one-to-one matching on the
Jensen–Shannon distance between their attention on the same inputs), closest first, with each head's role. The
models' heads are matched on the shipped probe set by the ``match_heads`` background job (seconds: it runs only when
asked for, once per pair of models and server), the Lab's by ``match_lab``."""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache

import streamlit as st

from attn_core import models as pt
from explorer.base import tables, widgets
from explorer.base.i18n import STRINGS, t
from explorer.base.safe import md
from explorer.jobs import waiting
from explorer.model import real

TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "merges.txt", "tokenizer.model", "spiece.model")


@lru_cache(maxsize=64)
def _digest(path: str, stamps: tuple) -> str | None:
    h = hashlib.sha256()
    found = False
    for name in TOKENIZER_FILES:
        file = os.path.join(path, name)
        if os.path.isfile(file):
            found = True
            h.update(name.encode() + b"\0")
            with open(file, "rb") as f:
                h.update(f.read())
    return h.hexdigest() if found else None


def tokenizer_of(name: str) -> str | None:
    """A fingerprint of the offered model's tokenizer files (None: none found, or the model is not there):
    two models with the same one cut every text into the same tokens."""
    path = pt.offered_paths().get(name)
    if path is None:
        return None
    if not path:
        try:
            path = pt.bundled_path()
        except pt.ModelUnavailable:
            return None
    stamps = tuple(
        os.stat(os.path.join(path, f)).st_mtime_ns if os.path.isfile(os.path.join(path, f)) else 0
        for f in TOKENIZER_FILES
    )
    return _digest(path, stamps)


def partners(name: str) -> list[str]:
    """The other offered models that share ``name``'s tokenizer, in menu order."""
    mine = tokenizer_of(name)
    if mine is None:
        return []
    return [other for other in pt.offered_paths() if other != name and tokenizer_of(other) == mine]


def request(name: str, other: str) -> tuple[str, dict]:
    """``name``'s heads matched with ``other``'s on the probe set (``attn_core.heavy``'s ``match_heads``)."""
    return "match_heads", {"model": name, "other": other}


def roles(names: list[str]) -> str:
    """A head's roles in the UI's language ("—": none found)."""
    return ", ".join(t(f"mp.role.{r}") if f"mp.role.{r}" in STRINGS else r for r in names) or "—"


def table_rows(result: dict) -> dict:
    """One row per matched pair, closest first: A's head, B's head, their distance, each one's roles."""
    pairs = result["pairs"]
    a, b = result["a"]["name"], result["b"]["name"]
    return {
        t("mp.match_col_a", name=a): [f"{p['a'][0]}:{p['a'][1]}" for p in pairs],
        t("mp.match_col_b", name=b): [f"{p['b'][0]}:{p['b'][1]}" for p in pairs],
        t("mp.match_col_distance"): [round(p["distance"], 3) for p in pairs],
        t("mp.match_col_roles_a"): [roles(p["roles_a"]) for p in pairs],
        t("mp.match_col_roles_b"): [roles(p["roles_b"]) for p in pairs],
    }


def table_ui(result: dict) -> None:
    """The matched heads: the table, the mean distance (and in place, where both have as many heads)."""
    facts = dict(n=len(result["pairs"]), mean=f"{result['mean']:.3f}", probes=result["probes"])
    st.markdown(t("mp.match_words", **facts))
    if result["same_place_mean"] is not None:
        st.caption(t("mp.match_in_place", same=f"{result['same_place_mean']:.3f}", mean=f"{result['mean']:.3f}"))
    tables.dataframe(table_rows(result), hide_index=True)
    left = [f"{h[0]}:{h[1]}" for h in result["unmatched_a"]] + [f"{h[0]}:{h[1]}" for h in result["unmatched_b"]]
    if left:
        st.caption(t("mp.match_left", heads=", ".join(left)))
    st.caption(t("mp.match_note"))


def section(name: str) -> None:
    """Inside the model: match this model's heads with another offered model's, or say why it cannot be shown."""
    st.subheader(t("mp.match_title"))
    st.caption(t("mp.match_intro"))
    others = partners(name)
    if not others:
        offered = ", ".join(md(n) for n in real.offered())
        st.info(t("mp.match_none", model=md(name), offered=offered, env=real.MODELS_ENV), icon=":material/info:")
        waiting.ask("mp_match", {})
        return
    other = widgets.selectbox(st, t("mp.match_other"), others, key="mp_match_other")
    if not widgets.toggle(st, t("mp.match_go"), key="mp_match_go"):
        waiting.ask("mp_match", {})
        return
    job = waiting.ask("mp_match", {"match": request(name, other)})["match"]
    if waiting.status(job):
        table_ui(job.result)
