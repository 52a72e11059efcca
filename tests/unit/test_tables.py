"""explorer.base.tables: the Arrow table handed to st.dataframe shows what Streamlit's own conversion (through pandas)
shows, column for column; what Arrow cannot type goes Streamlit's way unchanged."""

from __future__ import annotations

import math

import pandas as pd
import pyarrow as pa
import pytest
from streamlit import dataframe_util as du

from explorer.base import tables

COLUMNS = {
    "位置": [0, 1, 2],
    "token": ["the", "猫", ""],
    "p": [0.125, 1e-7, 0.5],
    "rank": [1, None, 3],
    "hit": ["✓", "", "✓"],
    "": ["a", "b", "c"],  # the Tutorial's unnamed first column
}
ROWS = [{"n": 8, "softmax": "0.1250", "entropy": 2.0794}, {"n": 16, "softmax": "0.0625", "entropy": 2.7726}]


def shown(data) -> pd.DataFrame:
    """What the browser gets: the Arrow bytes Streamlit sends, read back."""
    if isinstance(data, pa.Table):
        raw = du.convert_arrow_table_to_arrow_bytes(data)
    else:
        raw = du.convert_pandas_df_to_arrow_bytes(du.convert_anything_to_pandas_df(data, ensure_copy=True))
    return pa.ipc.open_stream(raw).read_all().to_pandas()


def same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    assert list(a.columns) == list(b.columns)
    assert len(a) == len(b)
    for col in a.columns:
        for x, y in zip(a[col], b[col], strict=True):
            if x is None or (isinstance(x, float) and math.isnan(x)):
                assert y is None or (isinstance(y, float) and math.isnan(y)), (col, x, y)
            else:
                assert x == pytest.approx(y, rel=1e-12) if isinstance(x, float) else x == y, (col, x, y)


@pytest.mark.parametrize("data", [COLUMNS, ROWS], ids=["columns", "rows"])
def test_the_arrow_table_shows_what_streamlits_own_conversion_shows(data):
    table = tables.arrow(data)
    assert isinstance(table, pa.Table)
    same(shown(table), shown(data))


def test_what_arrow_cannot_type_is_handed_over_unchanged():
    mixed = {"value": [1, "two", 3.0]}  # pandas shows it as text
    assert tables.arrow(mixed) is mixed
    frame = pd.DataFrame({"a": [1]})
    assert tables.arrow(frame) is frame and tables.arrow([]) == [] and tables.arrow("x") == "x"
