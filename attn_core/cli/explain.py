"""``python -m attn_core explain "SENTENCE" [--model NAME] [--second "SENTENCE"] [--removal delete|mask|attention]
--json`` and ``python -m attn_core explain-table --json`` (the corpus table, recomputed). With a decoder (``--model``
names one), what is explained is the log-probability of its top next token (``next_token`` in the output); it has
no [MASK] and no sentence embedding to compare a second sentence with: both are refused with a message."""

from __future__ import annotations

import argparse
import json
import sys

from ..explain.references import IG_STEPS
from ..explain.sentence import REMOVALS


def add_cli(sub) -> dict:
    """Add both subcommands; returns {name: function} for the CLI's dispatch."""
    p = sub.add_parser("explain", help="explain a sentence's embedding: attention methods against references")
    p.add_argument("sentence")
    p.add_argument(
        "--model",
        default="",
        help="a name from `models`, a local model directory or a hub name (default: the bundled encoder)",
    )
    p.add_argument("--second", help="a second sentence: why the two embeddings are similar (encoders)")
    p.add_argument("--removal", choices=REMOVALS, default="attention", help="how leave-one-out removes a piece")
    p.add_argument(
        "--steps", type=int, default=IG_STEPS, help=f"integrated gradients' steps (Gauss-Legendre nodes; {IG_STEPS})"
    )
    p.add_argument("--json", action="store_true", help="print everything as one JSON object")
    t = sub.add_parser("explain-table", help="recompute the corpus table of rank correlations")
    t.add_argument("--limit", type=int, default=0, help="only the first N sentences of the corpus")
    t.add_argument("--progress", action="store_true", help="report progress on stderr")
    t.add_argument("--json", action="store_true", help="print the table as one JSON object")
    return {"explain": cmd_explain, "explain-table": cmd_table}


add = add_cli  # the entry calls every subcommand module's add(sub)


def _check_steps(steps: int) -> None:
    from ..errors import AttentionConfigError

    if not 4 <= steps <= 256:
        raise AttentionConfigError("steps", "out_of_range", value=steps, low=4, high=256)


def payload(pre, args: argparse.Namespace) -> dict:
    from ..errors import AttentionConfigError
    from ..explain.explain import explain, spearman_table
    from ..explain.pair import pair

    _check_steps(args.steps)
    if args.second is not None and getattr(pre, "causal", False):  # said before the explanation's work, not after
        raise AttentionConfigError("second", "explain_pair_decoder", model=pre.name)
    if args.second is not None:
        try:
            args.second.encode("utf-8")
        except UnicodeEncodeError:
            raise AttentionConfigError("second", "not_utf8") from None
    result = explain(pre, args.sentence, removal=args.removal, steps=args.steps)
    out = {k: result[k] for k in ("model", "removal", "tokens", "methods", "references", "ig_completeness_error")}
    out["family"], out["causal"] = getattr(pre, "family", "bert"), bool(getattr(pre, "causal", False))
    if "next_token" in result:
        out["next_token"] = result["next_token"]
    out.update(curves=result["curves"], ks=result["ks"], correlation=spearman_table(result))
    out.update(correlation_detail=result["correlation"], specials=result["specials"], notices=result["notices"])
    out["shapley_words"] = result["word_texts"] if "shapley" in result["references"] else None
    if args.second is not None:
        p = pair(pre, args.sentence, args.second, steps=args.steps)
        out.update({k: p[k] for k in ("tokens_b", "pair_cosine", "pair_attribution", "token_pairs")})
        out["attention_alone"] = p["attention_alone"]
        out["notices"] = out["notices"] + p["notices"]
    return out


def _summary(out: dict) -> str:
    lines = [f"model   {out['model']} ({out['family']})", f"tokens  {out['tokens']}"]
    if "next_token" in out:
        nt = out["next_token"]
        lines.append(f"explained: log p({nt['text']!r} | the text) = {nt['logp']:.4f}, the model's top next token")
    for name, vals in out["methods"].items():
        lines.append(
            f"{name:14s}" + ("(not computed: too long)" if vals is None else " ".join(f"{v:.3f}" for v in vals))
        )
    for name, vals in out["references"].items():
        lines.append(f"{name:14s}" + " ".join(f"{v:.3f}" for v in vals))
    lines.append(f"integrated gradients: completeness error {out['ig_completeness_error']:.2%}")
    lines.append("Spearman (method x reference): " + json.dumps(out["correlation"]))
    if "pair_cosine" in out:
        lines.append(f"cos(e(a), e(b)) = {out['pair_cosine']:.4f}")
    for note in out["notices"]:
        lines.append(f"note: {note['code']}")
    return "\n".join(lines)


def cmd_explain(args: argparse.Namespace) -> int:
    from ..models import load

    out = payload(load(args.model), args)
    print(json.dumps(out, ensure_ascii=False) if args.json else _summary(out))
    return 0


def cmd_table(args: argparse.Namespace) -> int:
    from ..errors import AttentionConfigError
    from ..explain.table import build, corpus
    from ..models import load

    if args.limit < 0:
        raise AttentionConfigError("limit", "not_negative", value=args.limit)
    sentences = corpus()[: args.limit] if args.limit else corpus()

    def report(i: int, n: int) -> None:
        print(f"{i}/{n}", file=sys.stderr, flush=True)

    out = build(load(), sentences, progress=report if args.progress else None)
    print(json.dumps(out, ensure_ascii=False) if args.json else json.dumps(out["table"], indent=1))
    return 0
