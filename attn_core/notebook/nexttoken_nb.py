"""The Next token page as a notebook: the prompt's tokens, the decoder's forward pass in plain torch from its
weights (its family's own cell: ``NOTEBOOK_FORWARD`` in ``attn_core/models/<family>.py``), checked against the
model's own logits, and the sampling with its seed exactly as the app draws it (``attn_core.nexttoken.sampling``:
temperature, top-k, top-p, one uniform number from a ``torch.Generator`` seeded with the seed, or greedy). The
last cell compares with the app's own values."""

from __future__ import annotations

import base64

import torch

from ..models import family
from ..notebook_text import text
from .cells import Cell, Notebook, _md, check_lang, quoted

_TOKENS = (
    "ids = tokenizer(PROMPT, add_special_tokens=True)['input_ids']\n"
    "bos = tokenizer.bos_token_id\n"
    "head = 1 if ids and bos is not None and ids[0] == bos else 0\n"
    "cut = max(len(ids) - MAX_POSITIONS, 0)  # a prompt over the context loses its first tokens\n"
    "ids = ids[:head] + ids[head + cut:]\n"
    "L = len(ids)\n"
    "print(f'{L} tokens ({cut} cut from the start):', ids)\n"
    "print([tokenizer.decode([i]) for i in ids])\n"
)


_LOGITS = (
    "U = model.get_output_embeddings()\n"
    "logits = x @ U.weight.float().T + (U.bias.float() if U.bias is not None else 0)  # (L, vocab)\n"
    "with torch.inference_mode():\n"
    "    theirs = model(input_ids=torch.tensor([ids])).logits[0].float()\n"
    "print(f'max |plain torch - transformers| = {float((logits - theirs).abs().max()):.3g}')\n"
    "recomputed.update(logits=logits[-1], ids=list(ids))\n"
)

_SAMPLE = (
    "z = logits[-1].double()\n"
    "probs = torch.softmax(z / TEMPERATURE, 0)\n"
    "order = torch.sort(probs, descending=True, stable=True).indices  # ties: the lower id first\n"
    "kept = torch.ones_like(probs, dtype=torch.bool)\n"
    "if TOP_K:\n"
    "    kept[order[TOP_K:]] = False  # top-k: the k most probable\n"
    "if TOP_P < 1.0:  # top-p: a token is kept while the kept ones ranked before it add up to less than p\n"
    "    in_order = torch.where(kept[order], probs[order], torch.zeros_like(probs))\n"
    "    in_order = in_order / in_order.sum()\n"
    "    kept[order[torch.cumsum(in_order, 0) - in_order >= TOP_P]] = False\n"
    "sampled = torch.where(kept, probs, torch.zeros_like(probs))\n"
    "sampled = sampled / sampled.sum()\n"
    "if GREEDY:\n"
    "    chosen, u = int(torch.sort(z, descending=True, stable=True).indices[0]), None\n"
    "else:\n"
    "    u = float(torch.rand((), generator=torch.Generator().manual_seed(SEED), dtype=torch.float64))\n"
    "    stacked = torch.cumsum(sampled[order], 0)  # the kept tokens' bars, stacked in rank order\n"
    "    at = int(torch.searchsorted(stacked, torch.tensor([u], dtype=torch.float64), right=True))\n"
    "    chosen = int(order[min(at, int(kept.sum()) - 1)])\n"
    "recomputed.update(chosen=chosen)\n"
    "print(f'kept {int(kept.sum())} of {len(probs)} tokens; u = {u}')\n"
    "print(f'chosen: {chosen} {tokenizer.decode([chosen])!r}, p = {float(probs[chosen]):.4f}, "
    "rank {int((probs > probs[chosen]).sum()) + 1}')\n"
)

_COMPARE = (
    "def app_tensor(shape, data):\n"
    "    return torch.frombuffer(bytearray(base64.b64decode(data)), dtype=torch.float32).reshape(shape)\n\n\n"
    "theirs = app_tensor(*APP['logits'])\n"
    "gap = float((recomputed['logits'] - theirs).abs().max()) / max(float(theirs.abs().max()), 1.0)\n"
    "same = recomputed['ids'] == APP['ids'] and recomputed['chosen'] == APP['chosen']\n"
    "print(f'logits: {gap:.2e} of their largest value', 'ok' if gap <= 1e-5 else 'DIFFERS')\n"
    "print('tokens and the chosen token:', 'the same' if same else 'DIFFER')\n"
)


def _blob(t: torch.Tensor) -> str:
    data = base64.b64encode(t.detach().to(torch.float32).contiguous().numpy().tobytes()).decode("ascii")
    return f"({tuple(t.shape)!r}, {data!r})"


def _setup(m, model_dir: str, s, prompt: str) -> str:
    return (
        "import base64\n\nimport torch\nimport transformers\n\n"
        "torch.set_printoptions(precision=4, sci_mode=False, linewidth=110)\n\n"
        f"PROMPT = {prompt!r}\n"
        f"TEMPERATURE, TOP_K, TOP_P = {float(s.temperature)!r}, {int(s.top_k)!r}, {float(s.top_p)!r}\n"
        f"SEED, GREEDY = {int(s.seed)!r}, {bool(s.greedy)!r}\n"
        f"MAX_POSITIONS = {int(m.max_positions)!r}\n"
        f"MODEL_DIR = {model_dir!r}  # the decoder's directory (config.json, safetensors, tokenizer)\n"
        "recomputed = {}\n\n"
        "transformers.utils.logging.set_verbosity_error()\n"
        "tokenizer = transformers.AutoTokenizer.from_pretrained(MODEL_DIR, local_files_only=True)\n"
        "model = transformers.AutoModelForCausalLM.from_pretrained(MODEL_DIR, local_files_only=True)\n"
        "model.eval().requires_grad_(False)\n"
        "cfg = model.config\n"
        "W = {k: v.float() for k, v in model.state_dict().items()}  # every weight by its name\n"
    )


def nexttoken_notebook(m, prediction, *, prompt: str, lang: str = "en", model_dir: str | None = None) -> Notebook:
    """The notebook of the Next token page's prediction (``attn_core.nexttoken.predict``'s result on ``m``)."""
    check_lang(lang)
    d = prediction.distribution
    with torch.inference_mode():
        logits = m.hf(input_ids=torch.tensor([list(prediction.prompt.ids)])).logits[0, -1].float()
    app = {"logits": _blob(logits), "ids": repr(list(prediction.prompt.ids)), "chosen": repr(int(d.chosen))}
    rows = "\n".join(f"    {k!r}: {v}," for k, v in app.items())
    fam = family.of(m)  # a decoder family: its own forward pass, in plain torch
    cells = [
        _md(
            "# " + text("page.next_token", lang),
            text("nb_nt_intro", lang, model=quoted(m.name), prompt=quoted(prompt)),
        ),
        _md("## 0 " + text("nb_nt_setup", lang)),
        Cell("code", _setup(m, model_dir or m.path or m.name, d.settings, prompt)),
        _md("## 1 " + text("nb_nt_tokens", lang)),
        Cell("code", _TOKENS),
        _md("## 2 " + text("nb_nt_forward", lang), text(fam.NOTEBOOK_FORWARD_TEXT, lang)),
        Cell("code", fam.NOTEBOOK_FORWARD + _LOGITS),
        _md("## 3 " + text("nb_nt_sample", lang), text("nb_nt_sample_how", lang)),
        Cell("code", _SAMPLE),
        _md("## " + text("nb_compare_title", lang), text("nb_nt_compare", lang)),
        Cell("code", "APP = {  # the app's own values\n" + rows + "\n}\n\n\n" + _COMPARE),
    ]
    return Notebook(tuple(cells), "next_token", needs=", transformers")
