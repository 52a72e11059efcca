"""The query-key map's colours (by position, by token, by norm) and its click: a click on a query point makes it
the selected query. Plain lists in, plain values out: no Streamlit here but the session's one key."""

from __future__ import annotations

from collections.abc import Sequence

from explorer.base import session
from explorer.figures.base import word


def token_text(label: str) -> str:
    """A point's token text: '4 dessert' -> 'dessert', the Lab's '3·7' -> '7'."""
    return word(label).split("·", 1)[-1]


def colours(by: str, q: dict, k: dict, title: str, n: tuple[int, int] | None = None) -> dict:
    """Every point's colour value for ``qk_scatter``: ``q`` and ``k`` hold per point its position ("pos"), token
    label ("tok") and vector norm before the map's scaling ("norm"); ``n``: how many of each are this sentence's
    (the rest are other sentences'; None: all). By token: one band per distinct token text, the same for a token's
    query and key (``names``: the bands' tokens, this sentence's first; ``labelled``: how many are this sentence's)."""
    n_q, n_k = n if n is not None else (len(q["tok"]), len(k["tok"]))
    if by == "token":
        q_text, k_text = [token_text(x) for x in q["tok"]], [token_text(x) for x in k["tok"]]
        mine = dict.fromkeys([*q_text[:n_q], *k_text[:n_k]])
        names = list(dict.fromkeys([*mine, *q_text[n_q:], *k_text[n_k:]]))
        index = {x: i for i, x in enumerate(names)}
        out = {"q": [index[x] for x in q_text], "k": [index[x] for x in k_text], "names": names, "title": title}
        return out | {"labelled": len(mine)}
    field = "norm" if by == "norm" else "pos"
    return {"q": [float(v) for v in q[field]], "k": [float(v) for v in k[field]], "title": title}


def points(labels: Sequence[str], norms, positions: Sequence[int] | None = None) -> dict:
    """One side's points (queries or keys) as ``colours`` reads them (``positions``: 0, 1, ... unless told)."""
    pos = list(range(len(labels))) if positions is None else list(positions)
    return {"pos": pos, "tok": list(labels), "norm": [float(v) for v in norms]}


def joined(a: dict, b: dict) -> dict:
    """Two lists of points as one (``a``'s first)."""
    return {key: [*a[key], *b[key]] for key in a}


def clicked_query(event, curve: int, n: int) -> int | None:
    """The query a chart's selection event picked: the first selected point on the queries' trace (``curve``) with
    an index below ``n``; None for anything else (no selection, a key or a line clicked, a malformed event)."""
    try:
        found = event["selection"]["points"]
    except (KeyError, TypeError, IndexError):
        return None
    if not isinstance(found, (list, tuple)):
        return None
    for p in found:
        if not isinstance(p, dict) or p.get("curve_number") != curve:
            continue
        i = p.get("point_index", p.get("point_number"))
        if isinstance(i, int) and not isinstance(i, bool) and 0 <= i < n:
            return i
    return None


def on_click(chart_key: str, focus_key: str, curve: int, n: int):
    """The chart's ``on_select`` callback: a query clicked becomes ``focus_key``'s value (run before the script
    reruns, so before that widget is drawn); anything else changes nothing."""

    def pick() -> None:
        i = clicked_query(session.get(chart_key), curve, n)
        if i is not None:
            session.put(focus_key, i)

    return pick
