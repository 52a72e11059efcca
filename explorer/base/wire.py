"""What a browser sends back, guarded before Streamlit reads it (installed once, on import, by
``explorer.base.widgets``).

Every widget value a browser sends is data: junk for a number, or a value in another widget's wire shape (a stale tab
of an older Streamlit, a hand-made client), must read as the widget's own default or be dropped, never raise inside
Streamlit before or while the page runs. ``tests/browser/test_protocol_stale.py`` sends them over the protocol.
"""

from __future__ import annotations


def guard_serdes() -> None:
    """A number a browser sends is read back by Streamlit itself before the script runs (to
    decide which callbacks to call): NaN, infinity or text for a whole number raised there
    (``int(nan)``), out of this module's reach. Such a value now reads as the widget's own
    default, as Streamlit already does for a number outside the widget's range."""
    from streamlit.elements.widgets.number_input import NumberInputSerde
    from streamlit.elements.widgets.slider import SliderSerde

    for serde in (NumberInputSerde, SliderSerde):
        original = serde.deserialize
        if getattr(original, "guarded", False):
            continue

        def deserialize(self, ui_value, _original=original):
            try:
                return _original(self, ui_value)
            except (TypeError, ValueError, OverflowError):  # junk from the browser: the widget's default
                return _original(self, None)

        deserialize.guarded = True
        serde.deserialize = deserialize


guard_serdes()


def _shape(field: str | None) -> str | None:
    """A wire field's kind: a browser sends a whole number's value as an int and a fraction's as a double."""
    return {"int_value": "double_value", "int_array_value": "double_array_value"}.get(field, field)


def guard_wire() -> None:
    """A value a browser sends in another kind of widget's wire shape (numbers for a select slider, which Streamlit
    1.67 sends as its labels; an index for a selectbox from a tab of an older Streamlit) is not kept: the widget keeps
    the value it had. Kept, Streamlit read it with the widget's own deserializer but then wrote the widget's value
    back in that other shape, and every run of the page raised (``TypeError: must be real number, not str``)."""
    from streamlit.runtime.state.session_state import Serialized, WStates

    original = WStates.set_widget_from_proto
    if getattr(original, "guarded", False):
        return

    def set_widget_from_proto(self, widget_state) -> None:
        known = self.widget_metadata.get(widget_state.id)
        if known is not None and _shape(widget_state.WhichOneof("value")) != _shape(known.value_type):
            return  # another widget's shape: dropped
        self[widget_state.id] = Serialized(widget_state)

    set_widget_from_proto.guarded = True
    WStates.set_widget_from_proto = set_widget_from_proto


guard_wire()
