"""The Next token engine's cost (attn_core.nexttoken), on the shipped decoder or a random GPT-2 of its size.

    python benchmarks/nexttoken_bench.py [--model NAME] [--repeats N] [--out FILE]

Medians and 10th/90th percentiles (ms) over ``--repeats`` runs, the contenders interleaved (one run of each in
turn, so a slow spell on this shared machine hits them alike), after one warm-up run each:

- the distribution for a 64-token prompt (``predict``: encode, one forward, the draw, every position's top);
- one generated token with the KV cache (one token's forward over a 64-token cache, and the draw) beside the same
  token without it (the whole 65-token sequence again): the reason the cache exists;
- 32 tokens generated with and without the cache (what a learner waits for after "Play");
- the logit lens for 64 tokens × every layer (``lens``), and the layers × heads map of direct effects.

Without ``--model`` it takes the first decoder the server offers; when there is none, a randomly initialised GPT-2
of the shipped decoder's size (4 layers, 4 heads, d_model 128, vocab 4096, 256 positions) with a byte-level BPE
tokenizer trained here on this repository's own Markdown and locale text, and the record says so.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch

from attn_core import models
from attn_core import nexttoken as nt
from attn_core.nexttoken.generate import forward

TEXT = (
    "Once upon a time a small cat lived in a quiet house by the river. Every morning it walked along the bank, "
    "watched the boats go by and wondered where the water went. One day a bird landed beside it and said that the "
    "river ran all the way to the sea, where the water was salty and the waves were taller than the house. The cat "
    "did not believe it, so the bird offered to show it the way, and the two of them set off together at dawn."
)


def random_gpt2(folder: str) -> str:
    """A random GPT-2 of the shipped size and a 4096-token byte-level BPE trained on this repository's text."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    texts = [p.read_text(encoding="utf-8") for p in sorted(ROOT.glob("**/*.md")) + sorted(ROOT.glob("**/*.toml"))]
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(texts, vocab_size=4096, min_frequency=2, show_progress=False, special_tokens=["<eos>"])
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe._tokenizer, eos_token="<eos>")
    tok.model_max_length = 256
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=4096, n_embd=128, n_layer=4, n_head=4, n_positions=256)
    cfg.bos_token_id = cfg.eos_token_id = tok.eos_token_id
    path = os.path.join(folder, "random-gpt2")
    GPT2LMHeadModel(cfg).save_pretrained(path)
    tok.save_pretrained(path)
    return path


def prompt_of(m, n: int) -> str:
    """A prompt of about ``n`` tokens of this model (TEXT repeated, cut at ``n`` tokens)."""
    ids = m.tokenizer((TEXT + " ") * 8)["input_ids"][:n]
    return m.tokenizer.decode(ids)


def stats(times: list[float]) -> str:
    ms = sorted(t * 1e3 for t in times)
    q = statistics.quantiles(ms, n=10)
    return f"median {statistics.median(ms):8.2f} ms   p10 {q[0]:8.2f}   p90 {q[-1]:8.2f}   (n={len(ms)})"


def one_token(m, ids: list[int], settings, cached: bool):
    """A callable timing one generated token after ``ids``: with a cache of ``ids`` (cropped back each time)."""
    token = ids[-1]
    if not cached:
        return lambda: nt.choose(forward(m.hf, ids + [token], use_cache=False, attention=False)[0], settings)
    _, cache, _ = forward(m.hf, ids, attention=False)

    def step():
        logits, _, _ = forward(m.hf, [token], cache, attention=False)
        cache.crop(-1)  # back to the prompt's cache: every timed step sees a cache of len(ids)
        assert cache.get_seq_length() == len(ids)
        return nt.choose(logits, settings)

    return step


def contenders(m, prompt: str) -> dict:
    settings = nt.sampling(vocab=m.vocab, temperature=0.8, top_k=50, top_p=0.95, seed=1)
    enc = nt.encode(m, prompt)
    ids = list(enc.ids)
    run = models.forward(m, ids)
    token = int(run.logits[-1].argmax())
    return {
        "distribution, 64-token prompt (predict)": lambda: nt.predict(m, prompt, settings),
        "one token WITH the KV cache (cache of 64)": one_token(m, ids, settings, True),
        "one token WITHOUT the cache (65 tokens again)": one_token(m, ids, settings, False),
        "32 tokens WITH the cache (generate)": lambda: nt.generate(m, prompt, settings, 32),
        "32 tokens WITHOUT the cache (generate)": lambda: nt.generate(m, prompt, settings, 32, cached=False),
        "logit lens, 64 tokens x every layer": lambda: nt.lens(m, prompt),
        "direct effects map, last position": lambda: nt.direct_effects(m, models.forward(m, ids), len(ids) - 1, token),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="")
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    lines = [f"torch {torch.__version__}, {torch.get_num_threads()} threads, {time.strftime('%Y-%m-%d')}"]
    with tempfile.TemporaryDirectory() as folder:
        name = args.model or (nt.decoders() or [""])[0]
        if not name:
            name = random_gpt2(folder)
            lines.append("model: NO shipped decoder yet: a RANDOM GPT-2 of its size (4 layers, 4 heads, d_model 128,")
            lines.append(
                "       vocab 4096, 256 positions; BPE trained on this repository's text): rerun on the shipped one"
            )
        t0 = time.perf_counter()
        m = nt.decoder(name)
        lines.append(
            f"model: {m.name if args.model or m.path is None else Path(m.path).name} ({m.family}), "
            f"{m.layers} layers x {m.heads} heads (kv {m.kv_heads}), d_model {m.d_model}, vocab {m.vocab}, "
            f"{m.max_positions} positions; load {1e3 * (time.perf_counter() - t0):.0f} ms"
        )
        prompt = prompt_of(m, 64)
        lines.append(f"prompt: {len(nt.encode(m, prompt).ids)} tokens; {args.repeats} interleaved repeats")
        for line in lines:
            print(line, flush=True)
        jobs = contenders(m, prompt)
        times: dict[str, list[float]] = {k: [] for k in jobs}
        for fn in jobs.values():
            fn()  # warm-up
        for _ in range(args.repeats):
            for key, fn in jobs.items():
                t = time.perf_counter()
                fn()
                times[key].append(time.perf_counter() - t)
    for key, ts in times.items():
        lines.append(f"{key:<48} {stats(ts)}")
        print(lines[-1], flush=True)
    ratio = statistics.median(times[list(jobs)[2]]) / statistics.median(times[list(jobs)[1]])
    lines.append(f"one token without the cache / with it: {ratio:.2f}x (medians)")
    print(lines[-1])
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
