"""The pages' chart vocabulary (``explorer.charts``) draws what the pure builders draw with the run's style: the
same figure, and ``head_grid`` a heatmap with heads across and layers down."""

from __future__ import annotations

import json

from explorer import charts
from explorer import figures as fig

Z = [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]]  # 2 layers, 3 heads


def spec(figure) -> dict:
    return json.loads(figure.to_json())


def test_each_word_is_its_builder_with_the_runs_style():
    style = fig.run_style()
    assert spec(charts.heatmap(Z, ["a", "b", "c"], ["x", "y"], title="t")) == spec(
        fig.heatmap(Z, ["a", "b", "c"], ["x", "y"], title="t", style=style)
    )
    assert spec(charts.bars([1.0, 2.0], ["p", "q"], title="b")) == spec(
        fig.bars([1.0, 2.0], ["p", "q"], title="b", style=style)
    )


def test_head_grid_puts_heads_across_and_layers_down():
    grid = spec(charts.head_grid(Z, title="g", first_layer=4))
    (trace,) = [d for d in grid["data"] if d["type"] == "heatmap"]
    assert trace["z"] == Z
    assert [str(x) for x in trace["x"]] == ["0", "1", "2"] and [str(y) for y in trace["y"]] == ["4", "5"]
    assert grid["layout"]["xaxis"]["title"]["text"] == fig.axis_name("head")
    assert grid["layout"]["yaxis"]["title"]["text"] == fig.axis_name("layer")
