"""``python -m attn_core.heavy``: the worker behind the Explain, Inside, Next token and Real model pages' slow parts.

The server sends one request a line, ``{"kind": ..., "args": {...}}``; the worker answers with lines
``{"progress": share, "part": {...}}`` as each part is ready (plain lists and floats), then
``{"end": "ok"}``, ``{"end": "cancelled"}`` (a line ``{"cancel": true, "id": ...}`` naming the
request's ``id`` arrived: it stops between two parts) or ``{"end": "error", "code", "params",
"message"}``. The model is loaded once, before the first request is read; a worker serves request
after request (a fresh process costs seconds of imports and the model's load).
"""

from __future__ import annotations

import json
import queue
import sys
import threading
from collections.abc import Callable, Iterator

from .errors import AttentionConfigError

Steps = Iterator[tuple[float, dict]]


def _once(fn: Callable[[], dict]) -> Steps:
    yield 1.0, fn()


def _explain(pre, a: dict) -> Steps:
    from .explain import staged

    return staged.stages(pre, a["sentence"], a["removal"], a["steps"], a.get("part", "all"))


def _explain_join(pre, a: dict) -> Steps:
    from .explain import staged

    return _once(lambda: staged.joined(pre, a["sentence"], a["refs"], a["att"], a["references"]))


def _shapley(pre, a: dict) -> Steps:
    from .explain.explain import with_shapley

    return _once(lambda: {"shapley": with_shapley(pre, a["sentence"], a["removal"])})


def _pair(pre, a: dict) -> Steps:
    from .explain.pair import pair

    return _once(lambda: pair(pre, a["a"], a["b"], steps=a["steps"]))


def _pair_shapley(pre, a: dict) -> Steps:
    from .explain.pair import pair_shapley

    return _once(lambda: pair_shapley(pre, a["a"], a["b"], a["removal"]))


def _importance(pre, a: dict) -> Steps:
    from .interpret import ablate

    def run() -> dict:
        r = ablate.importance(pre, a["sentence"], a["mode"], tuple(a["masked"]), a["second"])
        return {k: v.tolist() for k, v in r.items()}

    return _once(run)


def _patching(pre, a: dict) -> Steps:
    from .interpret import patch

    def run() -> dict:
        r = patch.patch_map(pre, a["clean"], a["corrupted"])
        return {"restored": r["restored"].tolist(), "base_distance": r["base_distance"], "identical": r["identical"]}

    return _once(run)


def _pruning(pre, a: dict) -> Steps:
    from .interpret import prune

    return _once(lambda: prune.prune_curve(pre))


def _head_stats(pre, a: dict) -> Steps:
    from .interpret import roles

    return _once(lambda: roles.head_stats(pre))


def _next_token_importance(pre, a: dict) -> Steps:
    from .interpret import ablate

    def run() -> dict:
        r = ablate.next_token_importance(pre, a["sentence"], a["mode"], tuple(a["masked"]), a.get("pair"))
        return {k: v.tolist() if hasattr(v, "tolist") else v for k, v in r.items()}

    return _once(run)


def _next_token_patching(pre, a: dict) -> Steps:
    from .interpret import decoder

    def run() -> dict:
        r = decoder.patch_next_token(pre, a["clean"], a["corrupted"], a.get("pair"))
        return {**r, "restored": r["restored"].tolist()}

    return _once(run)


def _decoder_roles(pre, a: dict) -> Steps:
    from .interpret import composition, decoder

    def run() -> dict:
        roles = decoder.head_roles(pre)
        return roles | {"composition": composition.of_roles(pre, roles)}

    return _once(run)


def _next_token_copying(m, a: dict) -> Steps:
    from .interpret import copying
    from .models import display_pieces, token_labels

    def run() -> dict:
        ids = copying.repeated_prompt(m, a["kind"], text=a["prompt"], seed=a["seed"])
        shown = {"pieces": list(display_pieces(m.tokenizer, ids)[0]), "labels": list(token_labels(m.tokenizer, ids))}
        return copying.copying(m, ids) | shown

    return _once(run)


def _next_token_generation(m, a: dict) -> Steps:
    from .nexttoken import plain

    return _once(lambda: plain.generation(m, a))


def _next_token_branches(m, a: dict) -> Steps:
    from .nexttoken import plain

    return _once(lambda: plain.branches_at(m, a))


def _model_run(m, a: dict):
    from .models import encode, forward

    return forward(m, encode(m, a["sentence"], pad_to=a.get("pad_to", 0)))


def _why_weight(m, a: dict) -> Steps:
    from . import why

    def run() -> dict:
        w = why.explain_weight(m, _model_run(m, a), a["layer"], a["head"], a["query"], a["key"])
        return why.to_dict(w)

    return _once(run)


def _atlas(m, a: dict) -> Steps:
    from . import why

    return _once(lambda: {"heads": why.atlas(m, _model_run(m, a))})


def _minimal_pair(m, a: dict) -> Steps:
    from .interpret import minimal_pair

    top_k = a.get("top_k", minimal_pair.TOP_K)
    return _once(lambda: minimal_pair.minimal_pair(m, a["a"], a["b"], top_k=top_k, packed=True))


def _minimal_pair_ablation(m, a: dict) -> Steps:
    from .interpret import minimal_pair

    return _once(lambda: minimal_pair.ablation_gap(m, a["a"], a["b"]))


def _match_heads(m, a: dict) -> Steps:
    from .interpret import head_match
    from .models import load

    return _once(lambda: head_match.match_models(m, load(a["other"])))


def _match_lab(m, a: dict) -> Steps:
    from .interpret import head_match

    return _once(
        lambda: head_match.match_lab(a["a"], a["b"], name_a=a.get("name_a", "A"), name_b=a.get("name_b", "B"))
    )


KINDS: dict[str, Callable[[object, dict], Steps]] = {
    "explain": _explain,
    "explain_join": _explain_join,
    "shapley": _shapley,
    "pair": _pair,
    "pair_shapley": _pair_shapley,
    "importance": _importance,
    "patching": _patching,
    "pruning": _pruning,
    "head_stats": _head_stats,
    "next_token_importance": _next_token_importance,
    "next_token_patching": _next_token_patching,
    "decoder_roles": _decoder_roles,
    "next_token_copying": _next_token_copying,
    "next_token_generation": _next_token_generation,
    "next_token_branches": _next_token_branches,
    "why_weight": _why_weight,
    "atlas": _atlas,
    "minimal_pair": _minimal_pair,
    "minimal_pair_ablation": _minimal_pair_ablation,
    "match_heads": _match_heads,
    "match_lab": _match_lab,
}


def plain(value):
    """A part as JSON has it (tuples become lists), so that the server and a direct call compare alike."""
    return json.loads(json.dumps(value))


def run(pre, kind: str, args: dict) -> Steps:
    """The parts of one request, in order (what the worker sends, before JSON)."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}")
    if args.get("model"):  # another model than the one loaded first, by its offered name (or a directory): loaded once
        from .models import load

        pre = load(args["model"])
    return KINDS[kind](pre, args)


class Inbox:
    """The server's lines, read by a thread of their own so that a cancel is seen while a request computes."""

    def __init__(self, inp) -> None:
        self.lines: queue.Queue = queue.Queue()
        self.waiting: list[dict] = []  # requests that came while another computed
        self.inp = inp
        threading.Thread(target=self._read, name="heavy-stdin", daemon=True).start()

    def _read(self) -> None:
        for line in self.inp:
            if line.strip():
                self.lines.put(line)
        self.lines.put(None)

    @staticmethod
    def parse(line: str):
        try:
            item = json.loads(line)
        except ValueError:
            return None
        return item if isinstance(item, dict) else None

    def next(self) -> dict | None:
        """The next request (None: the input ended); a cancel for a request no longer computing is dropped."""
        while not self.waiting:
            line = self.lines.get()
            if line is None:
                self.lines.put(None)
                return None
            item = self.parse(line)
            if item is not None and not item.get("cancel"):
                self.waiting.append(item)
        return self.waiting.pop(0)

    def cancelled(self, current) -> bool:
        """A cancel line for the request ``current`` arrived (one for an earlier request is late and
        ignored; other requests that came meanwhile wait their turn; the input's end cancels nothing)."""
        found = False
        while True:
            try:
                line = self.lines.get_nowait()
            except queue.Empty:
                return found
            if line is None:
                self.lines.put(None)
                return found
            item = self.parse(line)
            if item is not None and item.get("cancel"):
                found = found or item.get("id") == current
            elif item is not None:
                self.waiting.append(item)


def serve(inp, out, load: Callable[[], object] | None = None) -> int:
    """Answer requests from ``inp`` until it ends (see the module's docstring)."""
    if load is None:
        from .models import load as load_bundled

        load = load_bundled
    inbox = Inbox(inp)
    pre = load()

    def send(item: dict) -> None:
        out.write(json.dumps(item, ensure_ascii=False) + "\n")
        out.flush()

    while (request := inbox.next()) is not None:
        try:
            for share, part in run(pre, request.get("kind", ""), request.get("args") or {}):
                send({"progress": share, "part": part})
                if inbox.cancelled(request.get("id")):
                    send({"end": "cancelled"})
                    break
            else:
                send({"end": "ok"})
        except AttentionConfigError as err:
            send({"end": "error", "message": str(err), "code": err.code, "params": err.params})
        except (ValueError, TypeError, KeyError, AttributeError) as err:
            send({"end": "error", "message": f"{type(err).__name__}: {err}"})
    return 0


def main() -> int:
    import torch

    from .command import die_with_parent

    die_with_parent()  # never outlive the server (parent-death signal, else a thread watching the parent)
    torch.set_num_threads(1)  # one core per worker: the server and the other worker keep the rest
    return serve(sys.stdin, sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
