"""The corpus table: is attention an explanation of this model's sentence embedding?

Over the shipped corpus (``data/corpus.txt``, sentences written for the app, each of at most ten
words), per layer and method, the mean ± s.d. over sentences of Spearman's ρ against each reference
(leave-one-out, integrated gradients, exact Shapley), laid out as Abnar & Zuidema's Tables 1–2
(methods as rows, layers as columns), with the published figures that issue 29 quotes beside it.
Precomputed by ``python -m attn_core explain-table --json`` into ``data/table.json``; every
sentence's own ρ is stored too, so a test can recompute a few of them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from . import correlation as C
from . import references
from .explain import METHODS, per_layer
from .sentence import make_item

DATA = Path(__file__).with_name("data")
CORPUS = DATA / "corpus.txt"
TABLE = DATA / "table.json"
TABLE_REFERENCES = ("loo", "ig", "shapley")
REMOVAL = "attention"

# Only the figures issue 29 quotes, with the model and task each was measured on.
PUBLISHED = [
    {
        "source": "Abnar & Zuidema (2020), Table 3",
        "model": "DistilBERT",
        "task": "SST-2 (sentiment)",
        "methods": "raw attention, rollout, flow",
        "reference": "input gradients",
        "spearman": "≈ 0.1 (all three)",
    },
    {
        "source": "ALTI authors' result files (Ferrando et al., 2022)",
        "model": "BERT",
        "task": "SST-2 (sentiment)",
        "methods": "rollout",
        "reference": "gradients",
        "spearman": "−0.03",
    },
    {
        "source": "ALTI authors' result files (Ferrando et al., 2022)",
        "model": "BERT-style classifiers",
        "task": "as in their files",
        "methods": "attention norms, ALTI (whole-layer)",
        "reference": "gradients",
        "spearman": "0.4–0.7",
    },
]


def corpus(path: Path = CORPUS) -> list[str]:
    lines = (line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def sentence_rows(pre, text: str, removal: str = REMOVAL) -> dict:
    """{method: {reference: [ρ at layer 1..L] (None where undefined)}} for one sentence."""
    item = make_item(pre, text)
    passed = references.full(pre, item)
    target = passed.target
    layers = per_layer(pre, passed)
    refs = {
        "loo": references.loo(pre, item, removal, passed),
        "ig": references.integrated_gradients(pre, item.ids, target)["attr"],
    }
    shap = references.shapley(pre, item, removal, target)
    refs["shapley"] = None if shap is None else shap["words"]
    inner = item.inner
    out: dict = {}
    for method in METHODS:
        per = layers[method]
        out[method] = {}
        for ref, rv in refs.items():
            if per is None or rv is None:
                out[method][ref] = None
                continue
            row = []
            for vals in per:
                vals = np.asarray(vals)
                if ref == "shapley":
                    c = C.correlate(C.words_sum(vals, item.words, item.n_words), rv, with_interval=False)
                else:
                    c = C.correlate(vals[inner], rv[inner], with_interval=False)
                row.append(c["spearman"])
            out[method][ref] = row
    return out


def aggregate(rows: list[dict], layers: int) -> dict:
    """{method: {reference: [{"mean", "sd", "n"} per layer]}} over the sentences where ρ is defined."""
    out: dict = {}
    for method in METHODS:
        out[method] = {}
        for ref in TABLE_REFERENCES:
            cells = []
            for layer in range(layers):
                got = [r[method][ref][layer] for r in rows if r[method][ref] is not None]
                got = [g for g in got if g is not None]
                if got:
                    cells.append(
                        {
                            "mean": float(np.mean(got)),
                            "sd": float(np.std(got, ddof=1)) if len(got) > 1 else 0.0,
                            "n": len(got),
                        }
                    )
                else:
                    cells.append({"mean": None, "sd": None, "n": 0})
            out[method][ref] = cells
    return out


def build(pre, sentences: list[str] | None = None, *, progress=None) -> dict:
    sentences = corpus() if sentences is None else sentences
    rows = []
    for i, text in enumerate(sentences):
        rows.append(sentence_rows(pre, text))
        if progress:
            progress(i + 1, len(sentences))
    return {
        "model": pre.name,
        "removal": REMOVAL,
        "ig_steps": references.IG_STEPS,
        "layers": pre.layers,
        "methods": list(METHODS),
        "references": list(TABLE_REFERENCES),
        "sentences": sentences,
        "per_sentence": rows,
        "table": aggregate(rows, pre.layers),
        "published": PUBLISHED,
    }


def cell(table: dict, method: str, ref: str, layer: int) -> float | None:
    return table["table"][method][ref][layer]["mean"]


def facts(table: dict) -> dict:
    """The numbers the page's reading of the table is written from (last layer unless said)."""
    last = table["layers"] - 1
    refs = table["references"]
    mean_of = {}
    for m in table["methods"]:
        got = [cell(table, m, r, last) for r in refs]
        got = [g for g in got if g is not None]
        mean_of[m] = float(np.mean(got)) if got else None
    ranked = sorted((v, m) for m, v in mean_of.items() if v is not None)
    attention_only = [mean_of[m] for m in ("raw", "rollout", "flow") if mean_of.get(m) is not None]
    whole_layer = [mean_of[m] for m in ("norm", "value_zeroing") if mean_of.get(m) is not None]
    return {
        "n": len(table["sentences"]),
        "layers": table["layers"],
        "best": ranked[-1][1] if ranked else None,
        "best_rho": ranked[-1][0] if ranked else None,
        "worst": ranked[0][1] if ranked else None,
        "worst_rho": ranked[0][0] if ranked else None,
        "attention_only": float(np.mean(attention_only)) if attention_only else None,
        "whole_layer": float(np.mean(whole_layer)) if whole_layer else None,
        "rollout_ig": cell(table, "rollout", "ig", last),
        "raw_first": cell(table, "raw", "ig", 0),
        "raw_last": cell(table, "raw", "ig", last),
        "mean_of": mean_of,
    }
