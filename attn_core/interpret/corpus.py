"""The probe set shipped with the app (``probe_set.json``): its schema, its validator, and the
corpus means the ``mean`` ablation uses.

Schema ``attn-explorer-probe-set/1``::

    {"schema": ..., "relations": ["coref", ...],
     "sentences": [{"id": "p000", "half": "select" | "score", "pattern": ...,
                    "words": ["The", "dog", ...],
                    "labels": [{"rel": "det", "from": 0, "to": 1}, ...]}]}

A label says: the word at ``from`` (the query) should attend to the word at ``to`` (the key).
Heads are chosen on the ``select`` half and scored on the ``score`` half.
"""

from __future__ import annotations

import functools
import json
import threading
from pathlib import Path

import torch

PROBE_FILE = Path(__file__).with_name("probe_set.json")
SCHEMA = "attn-explorer-probe-set/1"
RELATIONS = ("coref", "nsubj", "dobj", "det", "amod", "pobj")
HALVES = ("select", "score")
MIN_SENTENCES = 150


def validate(doc) -> list[str]:
    """Every problem of a probe-set document, as sentences; [] when it is valid."""
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        return [f"schema is not {SCHEMA}"]
    rels = doc.get("relations")
    if not isinstance(rels, list) or not set(rels) <= set(RELATIONS):
        return [f"relations must be a list drawn from {RELATIONS}"]
    items = doc.get("sentences")
    if not isinstance(items, list) or len(items) < MIN_SENTENCES:
        return [f"at least {MIN_SENTENCES} sentences are needed"]
    problems: list[str] = []
    ids, texts = set(), {}
    for k, s in enumerate(items):
        where = f"sentence {k} ({s.get('id') if isinstance(s, dict) else '?'})"
        if not isinstance(s, dict):
            problems.append(f"{where}: not an object")
            continue
        if s.get("id") in ids:
            problems.append(f"{where}: id used twice")
        ids.add(s.get("id"))
        if s.get("half") not in HALVES:
            problems.append(f"{where}: half must be one of {HALVES}")
        words = s.get("words")
        if not (
            isinstance(words, list) and words and all(isinstance(w, str) and w and w.split() == [w] for w in words)
        ):
            problems.append(f"{where}: words must be non-empty strings without spaces")
            continue
        text = " ".join(words).lower()
        if text in texts and texts[text] != s.get("half"):
            problems.append(f"{where}: the same sentence is in both halves")
        texts.setdefault(text, s.get("half"))
        for lab in s.get("labels", []):
            ok = isinstance(lab, dict) and lab.get("rel") in rels
            a, b = (lab.get("from"), lab.get("to")) if isinstance(lab, dict) else (None, None)
            ok = ok and all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < len(words) for i in (a, b))
            if not ok or a == b:
                problems.append(f"{where}: label {lab} does not point from one word of the sentence to another")
    return problems


@functools.cache
def load() -> dict:
    doc = json.loads(PROBE_FILE.read_text(encoding="utf-8"))
    problems = validate(doc)
    if problems:
        raise ValueError(f"{PROBE_FILE.name}: {problems[0]} ({len(problems)} problems)")
    return doc


def sentences() -> list[str]:
    return [" ".join(s["words"]) for s in load()["sentences"]]


_MEANS: dict[str, torch.Tensor] = {}
_MEANS_LOCK = threading.Lock()


def corpus_means(pre) -> torch.Tensor:
    """(layers, H·d): each head's output (its slice of the context before the output projection)
    averaged over every real token of the probe set's sentences; computed once per model and process."""
    with _MEANS_LOCK:
        if pre.name in _MEANS:
            return _MEANS[pre.name]
        from . import hooks

        batch, _ = hooks.batch_of(pre, sentences())
        plan = hooks.Plan(
            torch.zeros(len(batch.ids), pre.layers, pre.heads, dtype=torch.int8), batch.keep, record=True
        )
        hooks.run(pre, batch, plan)
        keep = batch.keep.float()[..., None]
        means = torch.stack([(plan.capture[i][0] * keep).sum((0, 1)) / keep.sum() for i in range(pre.layers)])
        _MEANS[pre.name] = means.float()
        return _MEANS[pre.name]
