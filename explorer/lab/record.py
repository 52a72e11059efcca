"""The presets' measured claims, read from their record (``benchmarks/lab_presets.py`` writes
``benchmarks/results/lab_presets_cpu.txt``): the page quotes what was measured, never a number
written into the page. Each ``RESULT {json}`` line is one preset; the file's first line dates it."""

from __future__ import annotations

import json
import os

from explorer.jobs.children import ROOT

RECORD = os.path.join(ROOT, "benchmarks", "results", "lab_presets_cpu.txt")
_cache: dict = {}


def read(path: str = RECORD) -> tuple[str, dict[str, dict]]:
    """(the day it was measured, "" when its header does not say; preset name -> its measured summary); empty when
    there is none. The page says when in words: a file name means nothing to a learner, who cannot open it."""
    try:
        stamp = os.stat(path).st_mtime_ns
    except OSError:
        return "", {}
    if _cache.get("key") != (path, stamp):
        presets, date = {}, ""
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("# python benchmarks/lab_presets.py") and not date:
                    date = line.split(",")[1].strip() if "," in line else ""
                if line.startswith("RESULT "):
                    try:
                        item = json.loads(line[len("RESULT ") :])
                    except ValueError:
                        continue
                    if isinstance(item, dict) and "preset" in item:
                        presets[item["preset"]] = item
        _cache.update(key=(path, stamp), value=(date, presets))
    return _cache["value"]


def span(pair, digits: int = 0, percent: bool = False) -> str:
    """A measured [low, high] as "low–high" (one number when they agree)."""
    if pair is None:
        return ""
    lo, hi = pair
    if percent:
        lo, hi, digits, unit = 100 * lo, 100 * hi, 1, " %"
    else:
        unit = ""
    a, b = f"{lo:.{digits}f}", f"{hi:.{digits}f}"
    return (a if a == b else f"{a}–{b}") + unit
