"""The class's report of a concept check: per item, the answers before (pre) and after (post) the lesson and the
normalized gain g = (post − pre) / (100 − pre) of the shares correct in percent (Hake 1998); for the class, the
mean of the items' gains and its spread (the sample standard deviation over the items).

Read from the store's questions (``attn_core.classroom.check``): each is a description ``{"item", "phase", "answer",
"options"}`` and the option index of every answer (one per student, no session ids).
"""

from __future__ import annotations

import math

from .bank import PHASES, by_id


def phase_count(answer: int, n_options: int, answers: list[int]) -> dict:
    """``{"n", "correct", "options", "share"}`` of one item in one phase (``share``: percent correct, or None)."""
    counts = [0] * n_options
    for a in answers:
        if 0 <= a < n_options:
            counts[a] += 1
    n = sum(counts)
    correct = counts[answer] if 0 <= answer < n_options else 0
    return {"n": n, "correct": correct, "options": counts, "share": 100.0 * correct / n if n else None}


def gain(pre: float | None, post: float | None) -> float | None:
    """g = (post − pre) / (100 − pre), shares in percent; None without both, or with everyone right before."""
    if pre is None or post is None or pre >= 100.0:
        return None
    return (post - pre) / (100.0 - pre)


def mean_spread(values: list[float]) -> tuple[float | None, float | None]:
    """The mean and the sample standard deviation (None where there are too few values)."""
    if not values:
        return None, None
    mean = sum(values) / len(values)
    if len(values) < 2:
        return mean, None
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def report(questions: list[tuple[dict, list[int]]]) -> dict:
    """``{"items": [{"id", "concept", "options", "answer", "pre", "post", "gain"}], "class": {...}}`` from the store's
    questions; items in the bank's order, descriptions of anything else (the post check's switch) ignored."""
    order = {item_id: i for i, item_id in enumerate(by_id())}
    seen: dict[str, dict] = {}
    for meta, answers in questions:
        item_id, phase = meta.get("item"), meta.get("phase")
        if item_id not in order or phase not in PHASES:
            continue
        entry = seen.setdefault(item_id, {"id": item_id, "concept": by_id()[item_id].concept, "phases": {}})
        entry["phases"][phase] = (meta, answers)
    items = []
    for item_id in sorted(seen, key=order.__getitem__):
        phases = seen[item_id]["phases"]
        metas = [m for m, _ in phases.values()]
        labels = max((list(m.get("options") or []) for m in metas), key=len)
        answer = int((phases.get("post") or phases.get("pre"))[0].get("answer", -1))
        row = {"id": item_id, "concept": seen[item_id]["concept"], "options": labels, "answer": answer}
        for phase in PHASES:
            meta, answers = phases.get(phase, ({"answer": answer}, []))
            row[phase] = phase_count(int(meta.get("answer", answer)), len(labels), answers)
        row["gain"] = gain(row["pre"]["share"], row["post"]["share"])
        items.append(row)
    gains = [r["gain"] for r in items if r["gain"] is not None]
    mean, spread = mean_spread(gains)
    return {"items": items, "class": {"items_with_gain": len(gains), "mean_gain": mean, "spread": spread}}
