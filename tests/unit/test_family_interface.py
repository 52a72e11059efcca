"""A model family is one module with a written interface (``attn_core.models.family``): every registered family
satisfies its Protocol, member by member with the Protocol's parameters; a module lacking a member is refused
when registered; and outside ``attn_core/models/`` no code asks which family a model is by its name."""

from __future__ import annotations

import inspect
import os
import re
import types

import pytest

from attn_core import kernels
from attn_core.models import family, gpt2

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHIPPED = ("app.py", "pages", "explorer", "attn_core", "benchmarks", "scripts")  # tests build fixtures per family


def _protocol(module):
    return family.Decoder if module.CAUSAL else family.Encoder


def _methods(proto) -> dict:
    return {
        n: v
        for c in proto.__mro__
        if c.__module__ == family.__name__  # the Protocols, not typing's own classes
        for n, v in vars(c).items()
        if callable(v) and not n.startswith("_")
    }


@pytest.mark.parametrize("name", sorted(family.FAMILIES))
def test_every_registered_family_satisfies_its_protocol(name):
    module = family.FAMILIES[name]
    proto = _protocol(module)
    assert isinstance(module, family.Family) and isinstance(module, proto)
    assert family.missing(module) == []
    for member, declared in _methods(proto).items():
        want = [p for p in inspect.signature(declared).parameters if p != "self"]
        assert list(inspect.signature(getattr(module, member)).parameters) == want, f"{name}.{member}"
    for accessor in ("attention", "out_linear", "mlp", "final_norm", "unembed", "attn_norm", "mlp_output"):
        assert callable(getattr(module, accessor)), f"{name}.{accessor}"
    assert isinstance(module.CAUSAL, bool) and isinstance(module.MODEL_TYPES, tuple)
    assert module.ATTN_NORM is None or isinstance(module.ATTN_NORM, str)
    if module.CAUSAL:
        assert isinstance(module.NOTEBOOK_FORWARD, str) and module.NOTEBOOK_FORWARD_TEXT.startswith("nb_nt_forward")
        compile(module.NOTEBOOK_FORWARD, f"<{name} notebook forward>", "exec")


def test_every_model_type_belongs_to_one_family():
    claimed = [t for module in family.FAMILIES.values() for t in module.MODEL_TYPES]
    assert len(claimed) == len(set(claimed))


def test_a_module_lacking_a_member_is_refused():
    partial = types.ModuleType("partial")
    partial.__dict__.update({k: v for k, v in vars(gpt2).items() if k not in ("NOTEBOOK_FORWARD", "projection_code")})
    with pytest.raises(TypeError, match="NOTEBOOK_FORWARD, projection_code"):
        family.register("partial", partial)
    assert "partial" not in family.FAMILIES


COMPARED = re.compile(
    r"""\bfamily\b\s*(?:==|!=)\s*(?P<a>\S+)"""
    r"""|(?P<b>["'][^"']*["'])\s*(?:==|!=)\s*[\w.\[\]()]*\bfamily\b"""
    r"""|\bfamily\b\s+(?:not\s+)?in\s+(?P<c>[\(\[\{][^)\]}]*)"""
)
KEYED = re.compile(r"""["'](?P<k>\w+)["']\s*:""")


def offending(text: str, model_families, kernel_families) -> list[str]:
    """Lines of ``text`` that ask which model family a thing is by its name: a comparison of a ``family`` with
    anything but a kernel family's name (kernels have families too), or a table keyed by a model family."""
    found = []
    for line in text.splitlines():
        code = line.split("#", 1)[0]
        for hit in COMPARED.finditer(code):
            names = re.findall(r"""["'](\w+)["']""", hit.group("a") or hit.group("b") or hit.group("c"))
            if not names or any(n not in kernel_families for n in names):
                found.append(line.strip())
                break
        else:
            if any(k.group("k") in model_families for k in KEYED.finditer(code)):
                found.append(line.strip())
    return found


def test_no_family_is_asked_for_by_name_outside_attn_core_models():
    kernel_families = {spec.family for spec in kernels.KERNELS.values()}
    assert not kernel_families & set(family.FAMILIES)
    seen = {}
    for top in SHIPPED:
        for folder, _, files in os.walk(os.path.join(ROOT, top)):
            rel = os.path.relpath(folder, ROOT).replace(os.sep, "/")
            if rel == "attn_core/models" or rel.startswith("attn_core/models/"):
                continue
            for f in files if top != "app.py" else ():
                if f.endswith(".py"):
                    with open(os.path.join(folder, f), encoding="utf-8") as fh:
                        seen[f"{rel}/{f}"] = fh.read()
        if top == "app.py":
            with open(os.path.join(ROOT, top), encoding="utf-8") as fh:
                seen[top] = fh.read()
    assert len(seen) > 50  # the walk found the code
    bad = {p: lines for p, text in seen.items() if (lines := offending(text, set(family.FAMILIES), kernel_families))}
    assert bad == {}


@pytest.mark.parametrize(
    "line",
    [
        'forward = _GPT2 if m.family == "gpt2" else _LLAMA',
        'if pre.family != "bert":',
        'if "llama" == pre.family:',
        "if m.family == other:",
        'if family in ("gpt2", "llama"):',
        'NORMS = {"gpt2": "LayerNorm (ln_1)", "llama": "RMSNorm"}',
    ],
)
def test_the_search_finds_each_way_of_asking(line):
    assert offending(line, {"bert", "gpt2", "llama"}, {"full", "sparse"}) == [line]


def test_the_search_lets_kernel_families_pass():
    text = 'if any(KERNELS[k].family == "sparse" for k in shown):\n    if k.family != "full":  # gpt2 in a comment'
    assert offending(text, {"bert", "gpt2", "llama"}, {"full", "sparse"}) == []
