"""Tables as Arrow, straight from their plain columns.

``st.dataframe`` given a dict of columns (or a list of row dicts) builds a pandas DataFrame and converts it to
Arrow on every rerun: 1-2.5 ms a table on this 2-core machine, against 0.1 ms for ``pyarrow.table`` on the same
columns, and the Explain and Next token pages draw five tables a rerun (during a class, pandas' conversion was the
largest share of the server's held interpreter that a page itself asks for: ``benchmarks/results/class_load_cpu.txt``).
``dataframe`` hands Streamlit the Arrow table; columns Arrow cannot type (a column mixing numbers and text) go
the old way, through pandas, which shows them as text.
"""

from __future__ import annotations

import pyarrow as pa
import streamlit as st


def arrow(data):
    """``data`` (a dict of columns, or a list of row dicts) as a ``pyarrow.Table``; anything else, or columns Arrow
    cannot type, unchanged."""
    try:
        if isinstance(data, dict):
            return pa.table({str(k): list(v) for k, v in data.items()})
        if isinstance(data, list) and data and all(isinstance(row, dict) for row in data):
            return pa.Table.from_pylist(data)
    except (pa.ArrowException, TypeError, ValueError):
        pass
    return data


def dataframe(data, *, container=None, **kwargs):
    """``st.dataframe`` (or ``container.dataframe``) of ``data`` through ``arrow``."""
    return (st if container is None else container).dataframe(arrow(data), **kwargs)
