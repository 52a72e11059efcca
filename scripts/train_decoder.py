"""Train the small GPT-style decoder that ships with the app, offline, on text a registry installs.

    apt-get install fortunes fortunes-zh          # the corpus (Debian main: BSD-style and GPL-3+)
    python scripts/train_decoder.py --out DIR      # seeded, resumable (DIR/checkpoint.pt), prints progress
    python scripts/train_decoder.py --out DIR --steps 0   # only evaluate what DIR holds

The model is transformers' own GPT-2 (``GPT2LMHeadModel``: fused ``c_attn``, learned absolute
positions, causal), saved as ``config.json`` + ``model.safetensors`` + ``tokenizer.json`` so that
``AutoModelForCausalLM.from_pretrained(DIR)`` loads it like any other. The tokenizer is a
byte-level BPE trained here on the same text (English and Chinese), so any text can be encoded and
the common Chinese characters are single tokens.

Induction: natural text alone makes an induction head form late (a byte-level model trained 7 minutes
showed none). A share of the training sequences (``--repeat``) carries a repeated span: half of them a span of
the text itself copied later in the window, half a span of random tokens repeated (the setting TransformerLens
measures induction on; ``--span-vocab K`` draws those from the K most frequent tokens). The record follows the
induction score against the loss curve. The shipped run (3,000 steps, 6.1M tokens) still formed none: see
attn_core/models/bundled/fortune-gpt/README.md.

Everything measured is written to ``DIR/record.json`` and printed: the loss curve, held-out
perplexity beside unigram and bigram baselines on the same held-out tokens, seeded samples, the
induction, previous-token, duplicate-token and first-token scores per head, trained and at
initialisation.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import time
from pathlib import Path

import torch

FORTUNES = Path("/usr/share/games/fortunes")
CHINESE = ("chinese", "tang300", "song100")  # fortunes-zh; every other plain file is English (fortunes)
ANSI = re.compile(r"\x1b\[[0-9;]*m")
EOT = "<|endoftext|>"


def corpus(root: Path = FORTUNES) -> list[tuple[str, str]]:
    """(language, text) for every fortune: the files' '%'-separated entries, terminal colours removed."""
    out = []
    for path in sorted(root.iterdir()):
        if not path.is_file() or path.suffix in (".dat", ".u8") or path.is_symlink():
            continue
        lang = "zh" if path.name in CHINESE else "en"
        text = ANSI.sub("", path.read_text(encoding="utf-8", errors="replace"))
        for entry in re.split(r"\n%\n", text):
            entry = entry.strip()
            if entry and "\ufffd" not in entry:
                out.append((lang, entry))
    if not out:
        raise SystemExit(f"no fortunes under {root}: apt-get install fortunes fortunes-zh")
    return out


def held_out(text: str) -> bool:
    """5 % of the entries, chosen by a hash of their text: the same split on any machine."""
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) % 20 == 0


def train_tokenizer(texts: list[str], vocab: int, out: Path):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab,
        special_tokens=[EOT],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=EOT, eos_token=EOT, unk_token=EOT)
    fast.model_max_length = 256  # the model's n_positions
    fast.save_pretrained(out)
    return fast


def stream(tokenizer, texts: list[str]) -> torch.Tensor:
    eot = tokenizer.convert_tokens_to_ids(EOT)
    ids: list[int] = []
    for text in texts:
        ids.extend(tokenizer(text)["input_ids"])
        ids.append(eot)
    return torch.tensor(ids, dtype=torch.long)


def common_tokens(train: torch.Tensor, vocab: int, k: int) -> torch.Tensor:
    """The ``k`` most frequent tokens of the training stream (the end-of-text token left out); k = 0: all but it."""
    if k <= 0:
        return torch.arange(1, vocab)
    counts = torch.bincount(train, minlength=vocab)
    counts[0] = -1
    return counts.argsort(descending=True)[:k].sort().values


def batch(
    data: torch.Tensor, n: int, length: int, repeat: float, pool: torch.Tensor, g: torch.Generator
) -> torch.Tensor:
    """n windows of ``length`` tokens; a share ``repeat`` of them carries a repeated span (half of those a span of
    random tokens drawn from ``pool``)."""
    starts = torch.randint(0, len(data) - length - 1, (n,), generator=g)
    x = torch.stack([data[s : s + length] for s in starts.tolist()])
    for i in range(n):
        if torch.rand((), generator=g) >= repeat:
            continue
        span = int(torch.randint(8, length // 3, (), generator=g))
        a = int(torch.randint(0, length - 2 * span, (), generator=g))
        b = int(torch.randint(a + span, length - span + 1, (), generator=g))
        if torch.rand((), generator=g) < 0.5:  # random tokens, repeated
            x[i, a : a + span] = pool[torch.randint(0, len(pool), (span,), generator=g)]
        x[i, b : b + span] = x[i, a : a + span]
    return x


def lr_at(step: int, steps: int, peak: float, warmup: int = 200) -> float:
    if step < warmup:
        return peak * (step + 1) / warmup
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, steps - warmup))))


@torch.no_grad()
def head_scores(model, pool, *, seed: int = 0, n: int = 16, half: int = 50) -> dict[str, list[list[float]]]:
    """Per layer and head, on ``n`` sequences of ``half`` random tokens (from ``pool``: a vocabulary size for
    every token but the first, or a tensor of token ids) repeated twice (after a first
    token): TransformerLens's induction score (attention from i to i - half + 1 in the second half),
    the previous-token score (to i - 1), the duplicate-token score (to i - half) and the first-token
    share (to position 0)."""
    g = torch.Generator().manual_seed(seed)
    first = torch.zeros(n, 1, dtype=torch.long)
    if isinstance(pool, int):
        pool = torch.arange(1, pool)
    rand = pool[torch.randint(0, len(pool), (n, half), generator=g)]
    x = torch.cat([first, rand, rand], dim=1)
    att = torch.stack(model(x, output_attentions=True).attentions)  # (layers, n, H, T, T)
    t = torch.arange(half + 1, 2 * half + 1)  # the second half's positions
    ind = att[..., t, t - half + 1].mean(dim=(1, 3))
    dup = att[..., t, t - half].mean(dim=(1, 3))
    rows = torch.arange(1, 2 * half + 1)
    prev = att[..., rows, rows - 1].mean(dim=(1, 3))
    sink = att[..., rows, 0].mean(dim=(1, 3))
    return {
        k: v.tolist()
        for k, v in dict(induction=ind, previous_token=prev, duplicate_token=dup, first_token=sink).items()
    }


@torch.no_grad()
def held_out_loss(model, data: torch.Tensor, length: int, max_windows: int = 200) -> tuple[float, int]:
    """Mean next-token cross-entropy (nats) over non-overlapping windows of the held-out stream."""
    total, count = 0.0, 0
    for s in range(0, min(len(data) - 1, max_windows * length), length):
        x = data[s : s + length + 1]
        if len(x) < 2:
            break
        logits = model(x[:-1][None]).logits[0]
        total += float(torch.nn.functional.cross_entropy(logits, x[1:], reduction="sum"))
        count += len(x) - 1
    return total / count, count


def ngram_baselines(train: torch.Tensor, test: torch.Tensor, vocab: int, count: int) -> dict[str, float]:
    """Unigram and bigram (add-k, interpolated with the unigram) cross-entropy in nats on ``test[:count+1]``."""
    test = test[: count + 1]
    uni = torch.bincount(train, minlength=vocab).double() + 0.5
    uni /= uni.sum()
    uni_nll = float(-uni[test[1:]].log().mean())
    pairs = train[:-1] * vocab + train[1:]
    keys, counts = torch.unique(pairs, return_counts=True)
    table = dict(zip(keys.tolist(), counts.tolist(), strict=True))
    ctx = torch.bincount(train[:-1], minlength=vocab).double()
    lam = 0.8
    nll = 0.0
    for a, b in zip(test[:-1].tolist(), test[1:].tolist(), strict=True):
        big = table.get(a * vocab + b, 0) / ctx[a] if ctx[a] > 0 else 0.0
        nll -= math.log(lam * float(big) + (1 - lam) * float(uni[b]))
    return {"unigram": uni_nll, "bigram": nll / (len(test) - 1)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--length", type=int, default=128)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--d-model", type=int, default=128)
    ap.add_argument("--vocab", type=int, default=4096)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--repeat", type=float, default=0.4, help="share of sequences with a repeated span")
    ap.add_argument("--span-vocab", type=int, default=0, help="random spans from the K most frequent tokens (0: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--every", type=int, default=100, help="log and checkpoint every N steps")
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(args.seed)
    entries = corpus()
    train_texts = [t for _, t in entries if not held_out(t)]
    test_texts = [t for _, t in entries if held_out(t)]
    if (out / "tokenizer.json").exists():
        tok = PreTrainedTokenizerFast.from_pretrained(out)
    else:
        tok = train_tokenizer(train_texts, args.vocab, out)
    vocab = len(tok)
    train, test = stream(tok, train_texts), stream(tok, test_texts)
    pool = common_tokens(train, vocab, args.span_vocab)
    cfg = GPT2Config(
        vocab_size=vocab,
        n_positions=256,
        n_embd=args.d_model,
        n_layer=args.layers,
        n_head=args.heads,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        attn_implementation="eager",
    )
    model = GPT2LMHeadModel(cfg)
    init_scores = head_scores(model.eval(), vocab)
    init_common = head_scores(model, pool)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.1, betas=(0.9, 0.95))
    g = torch.Generator().manual_seed(args.seed)
    curve: list[dict] = []
    step, spent = 0, 0.0
    ckpt = out / "checkpoint.pt"
    if ckpt.exists():  # resume where a stopped run left off
        state = torch.load(ckpt, weights_only=False)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        g.set_state(state["rng"])
        step, spent, curve, init_scores = state["step"], state["spent"], state["curve"], state["init_scores"]
        init_common = state.get("init_common", init_common)
    model.train()
    started = time.perf_counter() - spent
    while step < args.steps:
        for group in opt.param_groups:
            group["lr"] = lr_at(step, args.steps, args.lr)
        x = batch(train, args.batch, args.length, args.repeat, pool, g)
        loss = model(x, labels=x).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        if step % args.every == 0 or step == args.steps:
            model.eval()
            scores = head_scores(model, vocab)
            common = head_scores(model, pool)
            model.train()
            point = {
                "step": step,
                "tokens": step * args.batch * args.length,
                "loss": round(loss.item(), 4),
                "induction_max": round(max(max(r) for r in scores["induction"]), 4),
                "induction_max_common": round(max(max(r) for r in common["induction"]), 4),
                "seconds": round(time.perf_counter() - started, 1),
            }
            curve.append(point)
            print(json.dumps(point), flush=True)
            state = dict(model=model.state_dict(), opt=opt.state_dict(), rng=g.get_state(), step=step)
            state.update(spent=time.perf_counter() - started, curve=curve, init_scores=init_scores)
            state.update(init_common=init_common)
            torch.save(state, ckpt.with_suffix(".tmp"))
            os.replace(ckpt.with_suffix(".tmp"), ckpt)
    model.eval()
    model.save_pretrained(out, safe_serialization=True)
    nll, count = held_out_loss(model, test, args.length)
    base = ngram_baselines(train, test, vocab, count)
    test_bytes = sum(len(t.encode()) + 1 for t in test_texts)
    test_tokens = len(test)
    samples = {}
    for i, prompt in enumerate(["The meaning of life is", "A computer", "人生", "床前明月光，"]):
        torch.manual_seed(args.seed + i)
        ids = tok(prompt, return_tensors="pt")["input_ids"]
        gen = model.generate(
            ids, max_new_tokens=30, do_sample=True, temperature=0.8, top_k=40, pad_token_id=tok.eos_token_id
        )
        samples[prompt] = tok.decode(gen[0])
    record = {
        "config": {
            k: getattr(args, k.replace("-", "_"))
            for k in ("steps", "batch", "length", "layers", "heads", "d_model", "vocab", "lr", "repeat", "span_vocab")
            + ("seed",)
        },
        "parameters": sum(p.numel() for p in model.parameters()),
        "train_tokens": len(train),
        "held_out_tokens": count,
        "held_out_bytes_per_token": test_bytes / test_tokens,
        "held_out": {
            "model_nats": nll,
            "model_perplexity": math.exp(nll),
            "unigram_perplexity": math.exp(base["unigram"]),
            "bigram_perplexity": math.exp(base["bigram"]),
            "model_bits_per_byte": nll / math.log(2) / (test_bytes / test_tokens),
        },
        "curve": curve,
        "scores": head_scores(model, vocab),
        "scores_common": head_scores(model, pool),
        "common_tokens": len(pool),
        "scores_at_init": init_scores,
        "scores_common_at_init": init_common,
        "samples": samples,
        "train_seconds": curve[-1]["seconds"] if curve else 0.0,
        "torch_threads": torch.get_num_threads(),
    }
    (out / "record.json").write_text(json.dumps(record, indent=1, ensure_ascii=False), encoding="utf-8")
    print(json.dumps({k: record[k] for k in ("parameters", "held_out", "samples")}, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
