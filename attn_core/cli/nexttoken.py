"""``python -m attn_core generate`` and ``python -m attn_core lens`` (a contract: these names are used from outside).

    generate "PROMPT" [--model NAME] [--max-new N] [--temperature T] [--top-k K] [--top-p P] [--seed S] [--greedy]
             --json: tokens, steps (per token: top as [token, probability] pairs after the filters, chosen,
             logit), text
    lens "PROMPT" [--model NAME] --json: tokens, layers (row 0 the embeddings, row l after block l; one
             {token, id, prob} per position), decided_at (per position)

The settings are read as text and checked by ``attn_core.nexttoken.sampling``, so a bad one gets the same message
as on the page (exit status 2, one line).
"""

from __future__ import annotations

import argparse
import json

from .. import nexttoken as nt
from ..command import model_text_args
from ..errors import AttentionConfigError

MODELS = "the shipped decoder by default; an offered decoder's"
TOP = 10  # the [token, probability] pairs a step lists


def add(sub) -> dict:
    g = sub.add_parser("generate", help="generate token by token with the KV cache: temperature, top-k/p, a seed")
    model_text_args(g, "prompt", MODELS)
    g.add_argument("--max-new", default="16", dest="max_new", help=f"tokens to generate, 1..{nt.MAX_NEW}")
    g.add_argument("--temperature", default="1.0", help="0.01..100 (greedy: --greedy)")
    g.add_argument("--top-k", default="0", dest="top_k", help="keep the k most probable tokens (0: off)")
    g.add_argument("--top-p", default="1.0", dest="top_p", help="keep the fewest tokens reaching this mass (1: off)")
    g.add_argument("--seed", default="0", help="a whole number 0..4294967295: the same seed, the same tokens")
    g.add_argument("--greedy", action="store_true", help="always the most probable token")
    lens = sub.add_parser("lens", help="the logit lens: each layer's top token at each position")
    model_text_args(lens, "prompt", MODELS)
    return {"generate": cmd_generate, "lens": cmd_lens}


def _prompt(args) -> str:
    try:
        args.prompt.encode("utf-8")
    except UnicodeEncodeError:
        raise AttentionConfigError("prompt", "not_utf8") from None
    return args.prompt


def generation_dict(m, gen, check: dict) -> dict:
    steps = []
    for s in gen.steps:
        d = s.distribution
        top = [[nt.piece(m.tokenizer, t["id"]), t["sampled_prob"]] for t in d.top(TOP, kept_only=True)]
        why = d.why()
        steps.append(
            {"top": top, "chosen": s.piece, "id": s.chosen, "logit": float(d.logits[s.chosen])}
            | {"prob": why["chosen"]["prob"], "rank": why["chosen"]["rank"], "is_top": why["is_top"], "u": d.u}
            | {"kept": why["kept"], "cache": {"shape": list(s.cache_shape or ()), "bytes": s.cache_bytes}}
        )
    p = gen.prompt
    st = gen.steps[0].distribution.settings if gen.steps else None
    return {
        "model": m.name,
        "tokens": list(p.pieces),
        "ids": list(p.ids),
        "cut": p.cut,
        "cut_text": p.cut_text,
        "settings": None if st is None else vars(st),
        "steps": steps,
        "text": gen.text,
        "new_ids": list(gen.new_ids),
        "stopped": gen.stopped,
        "cache_check": check,
    }


def cmd_generate(args: argparse.Namespace) -> int:
    text = _prompt(args)
    m = nt.decoder(args.model)
    settings = nt.sampling(
        vocab=m.vocab,
        temperature=args.temperature,
        top_k=args.top_k,
        top_p=args.top_p,
        seed=args.seed,
        greedy=args.greedy,
    )
    gen = nt.generate(m, text, settings, args.max_new, attention=False)
    out = generation_dict(m, gen, nt.check_cache(m, gen))
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
        return 0
    if gen.prompt.cut:
        print(f"note      the prompt's first {gen.prompt.cut} tokens were cut: {gen.prompt.cut_text!r}")
    for i, s in enumerate(out["steps"]):
        print(f"step {i:>3}  {s['chosen']!r:<14} p={s['prob']:.3f} rank {s['rank']}  cache {s['cache']['shape']}")
    print(f"text      {gen.text}")
    return 0


def cmd_lens(args: argparse.Namespace) -> int:
    text = _prompt(args)
    m = nt.decoder(args.model)
    lens = nt.lens(m, text)
    rows = lens.cells(m.tokenizer)
    out = {
        "model": m.name,
        "tokens": list(lens.prompt.pieces),
        "ids": list(lens.prompt.ids),
        "cut": lens.prompt.cut,
        "cut_text": lens.prompt.cut_text,
        "layers": rows,
        "decided_at": list(lens.decided_at),
        "rows": "row 0 reads the embeddings, row l the residual stream after block l; the last is the model's logits",
        "last_row_max_abs_diff": lens.last_diff,
    }
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
        return 0
    print("tokens   " + " | ".join(lens.prompt.pieces))
    for r, row in enumerate(rows):
        print(f"row {r:>3}  " + " | ".join(f"{c['token']} {c['prob']:.2f}" for c in row))
    print("decided  " + " ".join(str(d) for d in lens.decided_at))
    return 0
