"""Train the small decoder that ships with the app, offline, on text a registry installs.

    apt-get install fortunes fortunes-zh          # the corpus (Debian main: BSD-style and GPL-3+)
    python scripts/train_decoder.py --out DIR      # seeded, resumable (DIR/checkpoint.pt), prints progress
    python scripts/train_decoder.py --out DIR --steps 0   # only evaluate what DIR holds

The model is transformers' own Llama (``LlamaForCausalLM``: rotary positions, RMSNorm, SwiGLU, causal; tied
embeddings) or, with ``--family gpt2``, GPT-2 (``GPT2LMHeadModel``), saved as ``config.json`` +
``model.safetensors`` + ``tokenizer.json`` so that ``AutoModelForCausalLM.from_pretrained(DIR)`` loads it like any
other. The tokenizer is the shipped byte-level BPE (English and Chinese; ``--tokenizer``), trained afresh only when
none is given.

The recipe, in two stages, is the defaults (see attn_core/models/bundled/fortune-gpt/README.md and
benchmarks/results/decoder_train.json for what it gave):

1. **Copy** (the Lab's induction task over the whole vocabulary): a first token, distinct random tokens, then a
   segment of them copied at a random place; the loss on the copy only. When the copy loss falls below
   ``--copy-exit`` (checked every ``--every`` steps) the window grows (``--copy-lengths``: 16, 32, 64, 128). With
   rotary positions the induction head forms here in a few thousand steps; with learned positions it did not.
2. **Text**: fortunes windows of ``--length`` tokens, a share of them (``--repeat`` annealed linearly to
   ``--repeat-end``, never 0) carrying a repeated span (half a span of the text, half random tokens of the whole
   vocabulary whose first copy is not scored), so the head is kept while the model learns language.

Every ``--every`` steps the induction, previous-token and copy-loss probe (random tokens of the whole vocabulary,
a first token, a span repeated; seed ``PROBE_SEED``, which no training batch uses) is logged; the step where the head
formed (induction >= 0.4 and the second copy's loss <= 0.3x the first's) is marked. Everything measured is written to
``DIR/record.json`` and printed: the loss curve, held-out perplexity beside unigram and bigram baselines on the same
held-out tokens, seeded samples, the per-head scores trained and at initialisation.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import shutil
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


def batch(
    data: torch.Tensor, n: int, length: int, repeat: float, pool: torch.Tensor, g: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """n windows of ``length`` tokens and their labels; a share ``repeat`` of them carries a repeated span (half of
    those a span of random tokens drawn from ``pool``, whose first copy is not scored: nothing predicts it)."""
    starts = torch.randint(0, len(data) - length - 1, (n,), generator=g)
    x = torch.stack([data[s : s + length] for s in starts.tolist()])
    labels = x.clone()
    for i in range(n):
        if torch.rand((), generator=g) >= repeat:
            continue
        span = int(torch.randint(8, length // 3, (), generator=g))
        a = int(torch.randint(1, length - 2 * span, (), generator=g))
        b = int(torch.randint(a + span, length - span + 1, (), generator=g))
        if torch.rand((), generator=g) < 0.5:  # random tokens, repeated
            x[i, a : a + span] = pool[torch.randint(0, len(pool), (span,), generator=g)]
            labels[i, a : a + span] = -100
        x[i, b : b + span] = x[i, a : a + span]
        labels[i, b : b + span] = x[i, b : b + span]
    return x, labels


def copy_batch(n: int, length: int, vocab: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """The Lab's induction task over the whole vocabulary: token 0, then ``length - m`` distinct random tokens, then
    a copy of a segment of ``m = length // 3`` of them that starts at a random place; labels only in the copy (where
    the earlier occurrence of the current token says what comes next)."""
    m = max(2, length // 3)
    first = length - m
    tokens = torch.stack([torch.randperm(vocab - 1, generator=g)[:first] + 1 for _ in range(n)])
    start = torch.randint(0, first - m + 1, (n,), generator=g)
    segment = torch.gather(tokens, 1, start.view(-1, 1) + torch.arange(m).view(1, -1))
    x = torch.cat([torch.zeros(n, 1, dtype=torch.long), tokens, segment], dim=1)
    labels = torch.full_like(x, -100)
    labels[:, first + 2 :] = x[:, first + 2 :]  # the copy's tokens after its first, each predictable
    return x, labels


def lr_at(step: int, steps: int, peak: float, warmup: int = 100, floor: float = 0.1) -> float:
    """Linear warm-up, then cosine to ``floor`` x the peak."""
    if step < warmup:
        return peak * (step + 1) / warmup
    return peak * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, steps - warmup))))


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


PROBE_SEED = 4242  # the logged probe's seed; training batches draw from --seed's generator, tests use others


@torch.no_grad()
def copy_probe(model, vocab: int, *, seed: int = PROBE_SEED, n: int = 16, half: int = 24) -> dict:
    """On ``n`` sequences of token 0 then ``half`` random tokens of the whole vocabulary repeated twice: the loss
    (nats) on the first copy and on the second (each copy's tokens after its first, the same tokens), their ratio,
    and the best induction and previous-token scores of any head."""
    g = torch.Generator().manual_seed(seed)
    rand = torch.randint(1, vocab, (n, half), generator=g)
    x = torch.cat([torch.zeros(n, 1, dtype=torch.long), rand, rand], dim=1)
    out = model(x, output_attentions=True)
    nll = torch.nn.functional.cross_entropy(out.logits[:, :-1].transpose(1, 2), x[:, 1:], reduction="none")
    first = nll[:, 1:half].mean()  # targets 2..half: the first copy's tokens after its first
    second = nll[:, half + 1 :].mean()  # targets half+2..2 half: the same tokens, copied
    att = torch.stack(out.attentions)  # (layers, n, H, T, T)
    t = torch.arange(half + 1, 2 * half + 1)
    rows = torch.arange(1, 2 * half + 1)
    ind = att[..., t, t - half + 1].mean(dim=(1, 3))
    prev = att[..., rows, rows - 1].mean(dim=(1, 3))
    return {
        "first_copy_nats": round(float(first), 4),
        "second_copy_nats": round(float(second), 4),
        "copy_ratio": round(float(second / first), 4),
        "induction_max": round(float(ind.max()), 4),
        "previous_token_max": round(float(prev.max()), 4),
    }


FORMED = {"induction_max": 0.4, "copy_ratio": 0.3}  # the shipped decoder's bar (its record and data card)


def formed(probe: dict) -> bool:
    return probe["induction_max"] >= FORMED["induction_max"] and probe["copy_ratio"] <= FORMED["copy_ratio"]


def build(family: str, vocab: int, args, tok):
    """A fresh model of ``family`` (its module's ``fresh``: transformers' own classes, eager attention, so weights
    can be read)."""
    from attn_core.models.family import FAMILIES

    return FAMILIES[family].fresh(
        vocab,
        d_model=args.d_model,
        layers=args.layers,
        heads=args.heads,
        d_ff=args.d_ff,
        bos=tok.bos_token_id,
        eos=tok.eos_token_id,
    )


def optimiser(model, lr: float) -> torch.optim.AdamW:
    """AdamW, weight decay 0.1 on matrices only (not on norms' gains or biases)."""
    decay = [p for p in model.parameters() if p.dim() >= 2]
    rest = [p for p in model.parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95))


def save(path: Path, state: dict) -> None:
    torch.save(state, path.with_suffix(".tmp"))
    os.replace(path.with_suffix(".tmp"), path)


def arguments(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, type=Path)
    from attn_core.models.family import FAMILIES

    trainable = sorted(name for name, module in FAMILIES.items() if hasattr(module, "fresh"))  # llama, gpt2
    ap.add_argument("--family", choices=trainable, default="llama")
    ap.add_argument("--copy-steps", type=int, default=5000, help="at most this many copy steps (stage 1)")
    ap.add_argument("--copy-batch", type=int, default=32)
    ap.add_argument("--copy-lengths", default="16,32,64,128", help="the copy window's lengths, grown in turn")
    ap.add_argument("--copy-exit", type=float, default=0.3, help="grow the window when the copy loss is below this")
    ap.add_argument("--steps", type=int, default=7000, help="text steps (stage 2)")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--length", type=int, default=128)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--d-model", type=int, default=128)
    ap.add_argument("--d-ff", type=int, default=0, help="Llama's MLP width (0: 11/4 d_model, GPT-2's parameters)")
    ap.add_argument("--vocab", type=int, default=4096)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--repeat", type=float, default=0.25, help="share of text windows with a repeated span, at first")
    ap.add_argument("--repeat-end", type=float, default=0.10, help="... and at the end (annealed linearly)")
    ap.add_argument("--tokenizer", type=Path, default=Path(__file__).resolve().parent.parent / BUNDLED)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--every", type=int, default=50, help="log, probe and checkpoint every N steps")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--name", default="fortune-gpt", help="the name the record gives the model")
    return ap.parse_args(argv)


def tokenizer_for(out: Path, given: Path, train_texts: list[str], vocab: int):
    """The tokenizer in ``out``: copied from ``given`` (the shipped one) when it has none, trained when neither has."""
    from transformers import PreTrainedTokenizerFast

    if not (out / "tokenizer.json").exists() and (given / "tokenizer.json").exists():
        for name in ("tokenizer.json", "tokenizer_config.json"):
            shutil.copyfile(given / name, out / name)
    if (out / "tokenizer.json").exists():
        return PreTrainedTokenizerFast.from_pretrained(out)
    return train_tokenizer(train_texts, vocab, out)


class Run:
    """One training run: the model, its optimiser, the batches' generator and ``st`` (the stage, the step
    counters, the curve and events), all saved in ``checkpoint.pt`` every ``--every`` steps."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args, self.out = args, args.out
        self.out.mkdir(parents=True, exist_ok=True)
        torch.manual_seed(args.seed)
        entries = corpus()
        self.train_texts = [t for _, t in entries if not held_out(t)]
        self.test_texts = [t for _, t in entries if held_out(t)]
        self.tok = tokenizer_for(self.out, args.tokenizer, self.train_texts, args.vocab)
        self.vocab = len(self.tok)
        self.train, self.test = stream(self.tok, self.train_texts), stream(self.tok, self.test_texts)
        self.pool = torch.arange(1, self.vocab)  # random spans: the whole vocabulary (the probe's)
        self.model = build(args.family, self.vocab, args, self.tok).eval()
        self.opt = optimiser(self.model, args.lr)
        self.g = torch.Generator().manual_seed(args.seed)
        self.lengths = [int(v) for v in args.copy_lengths.split(",") if v.strip()]
        self.st = {"stage": "copy", "step": 0, "copy_step": 0, "text_step": 0, "length_index": 0, "spent": 0.0}
        self.st.update(curve=[], events=[])
        self.st.update(init_scores=head_scores(self.model, self.vocab), init_probe=copy_probe(self.model, self.vocab))
        self.ckpt = self.out / "checkpoint.pt"
        if self.ckpt.exists():  # resume where a stopped run left off
            saved = torch.load(self.ckpt, weights_only=False)
            self.model.load_state_dict(saved.pop("model"))
            self.opt.load_state_dict(saved.pop("opt"))
            self.g.set_state(saved.pop("rng"))
            self.st.update(saved)
            self.st["events"].append({"step": self.st["step"], "event": "resumed"})
        self.started = time.perf_counter() - self.st["spent"]

    def step(self, x: torch.Tensor, labels: torch.Tensor) -> float:
        self.model.train()
        loss = self.model(x, labels=labels).loss
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.opt.step()
        self.st["step"] += 1
        return loss.item()

    def log(self, loss: float) -> None:
        st = self.st
        self.model.eval()
        probe = copy_probe(self.model, self.vocab)
        point = {"step": st["step"], "stage": st["stage"], "loss": round(loss, 4), **probe}
        if st["stage"] == "copy":
            point["copy_length"] = self.lengths[st["length_index"]]
        point["seconds"] = round(time.perf_counter() - self.started, 1)
        st["curve"].append(point)
        if formed(probe) and not any(e["event"] == "formed" for e in st["events"]):
            st["events"].append({"step": st["step"], "event": "formed", **probe})
        print(json.dumps(point), flush=True)

    def checkpoint(self) -> None:
        self.st["spent"] = time.perf_counter() - self.started
        state = dict(self.st, model=self.model.state_dict(), opt=self.opt.state_dict(), rng=self.g.get_state())
        save(self.ckpt, state)

    def copy_stage(self) -> None:
        """Stage 1: the copy task, its window grown each time the copy loss is below ``--copy-exit``."""
        st, args = self.st, self.args
        while st["stage"] == "copy":
            if st["copy_step"] >= args.copy_steps:
                st["events"].append({"step": st["step"], "event": "copy stage ended by its step limit"})
                st["stage"] = "text"
                break
            length = self.lengths[st["length_index"]]
            for group in self.opt.param_groups:
                group["lr"] = args.lr * min(1.0, (st["copy_step"] + 1) / 100)
            loss = self.step(*copy_batch(args.copy_batch, length, self.vocab, self.g))
            st["copy_step"] += 1
            if st["step"] % args.every == 0:
                self.log(loss)
                if loss < args.copy_exit:
                    st["events"].append({"step": st["step"], "event": f"copy learned at length {length}"})
                    st["length_index"] += 1
                    if st["length_index"] == len(self.lengths):
                        st["stage"] = "text"
                self.checkpoint()

    def text_stage(self) -> None:
        """Stage 2: fortunes with a share of repeated spans that falls from ``--repeat`` to ``--repeat-end``."""
        st, args = self.st, self.args
        while st["text_step"] < args.steps:
            for group in self.opt.param_groups:
                group["lr"] = lr_at(st["text_step"], args.steps, args.lr)
            share = args.repeat + (args.repeat_end - args.repeat) * st["text_step"] / max(1, args.steps - 1)
            loss = self.step(*batch(self.train, args.batch, args.length, share, self.pool, self.g))
            st["text_step"] += 1
            if st["step"] % args.every == 0 or st["text_step"] == args.steps:
                self.log(loss)
                self.checkpoint()

    def samples(self) -> dict:
        model, tok, out = self.model, self.tok, {}
        for i, prompt in enumerate(SAMPLE_PROMPTS):
            torch.manual_seed(self.args.seed + i)
            ids = tok(prompt, return_tensors="pt")["input_ids"]
            pad = tok.eos_token_id
            gen = model.generate(ids, max_new_tokens=30, do_sample=True, temperature=0.8, top_k=40, pad_token_id=pad)
            greedy = model.generate(ids, max_new_tokens=20, do_sample=False, pad_token_id=pad)
            out[prompt] = {"sampled": tok.decode(gen[0]), "greedy": tok.decode(greedy[0])}
        return out

    def record(self) -> dict:
        """Everything measured on the trained model (see the module)."""
        args, model, vocab, st = self.args, self.model.eval(), self.vocab, self.st
        nll, count = held_out_loss(model, self.test, args.length)
        base = ngram_baselines(self.train, self.test, vocab, count)
        per_token = sum(len(t.encode()) + 1 for t in self.test_texts) / len(self.test)
        final = copy_probe(model, vocab)
        keys = ("family", "copy_steps", "copy_batch", "copy_lengths", "copy_exit", "steps", "batch", "length")
        keys += ("layers", "heads", "d_model", "d_ff", "vocab", "lr", "repeat", "repeat_end", "seed")
        return {
            "name": args.name,
            "config": {k: getattr(args, k) for k in keys},
            "architecture": type(model).__name__,
            "parameters": sum(p.numel() for p in model.parameters()),
            "train_tokens": len(self.train),
            "held_out_tokens": count,
            "held_out_bytes_per_token": per_token,
            "held_out": {
                "model_nats": nll,
                "model_perplexity": math.exp(nll),
                "unigram_perplexity": math.exp(base["unigram"]),
                "bigram_perplexity": math.exp(base["bigram"]),
                "model_bits_per_byte": nll / math.log(2) / per_token,
            },
            "curve": st["curve"],
            "events": st["events"],
            "probe": final,
            "induction_formed": formed(final),
            "formed_at_step": next((e["step"] for e in st["events"] if e["event"] == "formed"), None),
            "probe_at_init": st["init_probe"],
            "probe_seed": PROBE_SEED,
            "formed_bar": FORMED,
            "scores": head_scores(model, vocab),
            "scores_at_init": st["init_scores"],
            "samples": self.samples(),
            "train_seconds": round(st["spent"], 1),
            "torch_threads": torch.get_num_threads(),
        }


def main(argv: list[str] | None = None) -> None:
    args = arguments(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    run = Run(args)
    run.copy_stage()
    run.text_stage()
    run.checkpoint()
    run.model.eval()
    run.model.save_pretrained(args.out, safe_serialization=True)
    run.tok.save_pretrained(args.out)
    record = run.record()
    (args.out / "record.json").write_text(json.dumps(record, indent=1, ensure_ascii=False), encoding="utf-8")
    shown = {k: record[k] for k in ("parameters", "held_out", "probe", "samples")}
    print(json.dumps(shown, ensure_ascii=False, indent=1))


BUNDLED = "attn_core/models/bundled/fortune-gpt"
SAMPLE_PROMPTS = ("The cat sat on the", "Q: What is the meaning of life?\nA:", "A computer", "人生", "床前明月光，")


if __name__ == "__main__":
    main()
