"""A formula with a definition after it is drawn on lines of its own (``explorer.base.i18n.stacked``): linear
attention's
φ(x) = elu(x) + 1 was the end of one long line, cut at the edge of a narrow column (Variants' side by side). Checked
on every formula the pages draw: the lines joined again are the formula, each line's braces and brackets balance,
and a comma inside a subscript or a bracket stays where it is."""

import pytest

from attn_core import Settings, run_trace
from attn_core.kernels import KERNELS
from attn_core.stages import step_stages
from explorer.base.i18n import stacked

BEGIN, END, BREAK = r"\begin{gathered}", r"\end{gathered}", r" \\ "


def formulas() -> dict[str, str]:
    """Every kernel's formula and every step's of each teaching kernel on the default settings."""
    found = {name: k.formula for name, k in KERNELS.items()}
    for name, k in KERNELS.items():
        if not k.teaching:
            continue
        for key, stage in step_stages(run_trace(Settings(kernel=name)), 0, 1).items():
            found[f"{name}/{key}"] = stage.formula
    return found


def lines(formula: str) -> list[str]:
    out = stacked(formula)
    if out == formula:
        return [formula]
    assert out.startswith(BEGIN) and out.endswith(END), out
    return out[len(BEGIN) : -len(END)].split(BREAK)


def balanced(text: str) -> bool:
    depth, i = 0, 0
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        depth += (text[i] in "{([") - (text[i] in "})]")
        if depth < 0:
            return False
        i += 1
    return depth == 0


@pytest.mark.parametrize("name,formula", sorted(formulas().items()))
def test_each_line_of_a_formula_is_whole_and_together_they_are_the_formula(name, formula):
    parts = lines(formula)
    assert r"\ ".join(parts) == formula, parts
    assert all(balanced(p) for p in parts), parts


def test_linear_attentions_feature_map_has_a_line_of_its_own():
    parts = lines(KERNELS["linear_elu"].formula)
    assert parts[-1] == r"\phi(x)=\mathrm{elu}(x)+1" and len(parts) == 2, parts


def test_a_comma_inside_a_subscript_or_a_bracket_stays():
    assert stacked(KERNELS["dilated"].formula) == KERNELS["dilated"].formula  # j=i±tr,\ t≤w in the subscript
    inside = r"\lambda = \max\!\Big(0,\ 1 - x\Big)"
    assert stacked(inside) == inside
    assert lines(r"a,\ b,\ c") == ["a,", "b,", "c"]
