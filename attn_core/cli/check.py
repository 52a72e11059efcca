"""``python -m attn_core items`` and ``python -m attn_core lesson`` (a contract: these names are used from outside).

items [SENTENCE] [settings flags] [--focus I] [--items ID,ID,…] [--lang en|zh] --json
    items: the concept check's items (``attn_core.check``), each with id, concept, question, options,
    misconceptions (null for the correct option), answer (the correct option's index; for a live item computed
    for the settings the flags give, as ``trace`` reads them) and live; left_out: the live items these settings
    cannot ask, and why
lesson CODE --json
    the class's report of the lesson's check, from the store the app uses (``ATTN_EXPLORER_REDIS``): items with id,
    pre and post (each n, correct, options: counts per option index, share: percent correct) and gain
    (g = (post − pre) / (100 − pre)); class: the items' mean gain and its spread
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from ..config import TUTORIAL_SENTENCE
from ..locales import LANGS
from .trace import add_settings_flags, settings_from_args


def add(sub) -> dict:
    i = sub.add_parser("items", help="the concept check's items, live ones computed for the settings given")
    add_settings_flags(i)
    i.add_argument("--items", help="only these items, comma-separated ids")
    i.add_argument("--lang", choices=LANGS, default="en", help="the language of the items")
    i.add_argument("--json", action="store_true", help="print one JSON object")
    n = sub.add_parser("lesson", help="a lesson's check: per item the answers before and after, and the gain")
    n.add_argument("code", help="the lesson code")
    n.add_argument("--json", action="store_true", help="print one JSON object")
    return {"items": cmd_items, "lesson": cmd_lesson}


def _fail(text: str) -> int:
    print(f"error: {text}", file=sys.stderr)
    return 2


def cmd_items(args: argparse.Namespace) -> int:
    from ..check.bank import CheckError, check_items, parse_ids

    if args.sentence is None and args.preset is None:
        args.sentence = TUTORIAL_SENTENCE
    settings = settings_from_args(args)
    try:
        ids = parse_ids(args.items) if args.items is not None else None
    except CheckError as err:
        return _fail(err.text(args.lang))
    items, left_out = check_items(args.lang, settings, args.focus, ids)
    if args.json:
        print(json.dumps({"lang": args.lang, "items": items, "left_out": left_out}, ensure_ascii=False))
        return 0
    for item in items:
        print(f"{item['id']} ({item['concept']}{', live' if item['live'] else ''})\n  {item['question']}")
        for k, option in enumerate(item["options"]):
            print(f"  {'*' if k == item['answer'] else ' '} {k}. {option}")
    for line in left_out:
        print(line)
    return 0


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}%"


def cmd_lesson(args: argparse.Namespace) -> int:
    from ..check.bank import CheckError

    if not os.environ.get("ATTN_EXPLORER_REDIS", "").strip():
        return _fail("no shared store to read: set ATTN_EXPLORER_REDIS=redis://host:port/db, the app's own store")
    # the app's store: this command reads what the app's servers wrote
    from ..classroom.base import PollUnavailable
    from ..classroom.check import make_check_store, report

    try:
        result = report(make_check_store(), args.code)
    except CheckError as err:
        return _fail(str(err))
    except PollUnavailable as err:
        return _fail(f"the store cannot be reached ({err})")
    if args.json:
        print(json.dumps({"lesson": args.code, **result}, ensure_ascii=False))
        return 0
    print(f"{'item':24} {'n pre':>6} {'pre':>7} {'n post':>6} {'post':>7} {'gain':>6}")
    for row in result["items"]:
        g = "-" if row["gain"] is None else f"{row['gain']:.2f}"
        pre, post = row["pre"], row["post"]
        print(f"{row['id']:24} {pre['n']:>6} {_pct(pre['share']):>7} {post['n']:>6} {_pct(post['share']):>7} {g:>6}")
    c = result["class"]
    if c["mean_gain"] is not None:
        spread = "" if c["spread"] is None else f" ± {c['spread']:.2f}"
        print(f"class: mean gain {c['mean_gain']:.2f}{spread} over {c['items_with_gain']} items")
    return 0
