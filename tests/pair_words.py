"""The minimal pair's line of words, recomputed from the engine's attention in numpy (an independent computation of
what the pages say, read by the AppTests and the browser test alike): the mean of the changed word's rows in A and in
B, read on the keys the two sentences share with the changed keys lumped into one, then the key that lost most and
the one that gained most."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Moved:
    names: list[str]  # the shared keys' labels, then ``changed`` (the lumped changed keys)
    a: np.ndarray  # the changed word's weights on them in A
    b: np.ndarray  # ... and in B
    src: int  # the key that lost most
    dst: int  # the key that gained most
    moved: float  # the share of the weight that went elsewhere (total variation)


def moved(r: dict, layer: int, head: int, changed: str) -> Moved:
    q = r["queries"][r["query"]]
    ra = np.asarray(r["attention_a"][layer][head])[q["a"]].mean(0)
    rb = np.asarray(r["attention_b"][layer][head])[q["b"]].mean(0)
    ia, jb = [i for i, _ in r["shared"]], [j for _, j in r["shared"]]
    a = np.append(ra[ia], ra.sum() - ra[ia].sum())
    b = np.append(rb[jb], rb.sum() - rb[jb].sum())
    names = [r["a"]["labels"][i] for i in ia] + [changed]
    return Moved(names, a, b, int(np.argmin(b - a)), int(np.argmax(b - a)), float(0.5 * np.abs(b - a).sum()))
