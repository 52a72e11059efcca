"""Every chart downloads as PNG too (``explorer.charts.png``): the page-end control offers exactly the charts the page
drew, named as their SVG files are; a real chart's PNG has the size asked for; without a Chromium the page says so
in the UI's language instead."""

from __future__ import annotations

import json
import struct

import plotly.io as pio
import pytest

from explorer.base.i18n import t
from explorer.charts import png
from explorer.pages import PAGES

QUERY = {"heads": "2", "sentence": "Attention learns what to read"}
SIGNATURE = b"\x89PNG\r\n\x1a\n"


def svg_names(at) -> list[str]:
    """The file name (less its extension) each chart's modebar button downloads it under, in drawing order."""
    return [json.loads(c.proto.config)["toImageButtonOptions"]["filename"] for c in at.get("plotly_chart")]


def png_names(at) -> list[str]:
    """The charts the PNG control offers ([] when it is not drawn)."""
    found = [s for s in at.selectbox if s.key == "png_chart"]
    return list(found[0].options) if found else []


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) from a PNG's header: the signature, then the IHDR chunk (length 13, its type, width and
    height as big-endian 32-bit integers)."""
    assert data[:8] == SIGNATURE, data[:8]
    length, kind, width, height = struct.unpack(">I4sII", data[8:24])
    assert (length, kind) == (13, b"IHDR"), (length, kind)
    return width, height


@pytest.mark.parametrize("spec", PAGES, ids=[p.url_path for p in PAGES])
def test_the_png_choice_is_the_charts_the_page_drew(app, spec, monkeypatch):
    monkeypatch.setattr(png, "chromium", lambda: "chromium")  # the offer itself does not depend on this machine
    at = app(spec.file, QUERY)
    drawn = svg_names(at)
    assert png_names(at) == png.unique(drawn), (png_names(at), drawn)  # a repeated title numbered: one name a chart
    assert len(set(png_names(at))) == len(drawn)
    assert all(name.startswith(f"{spec.url_path}_") for name in drawn), drawn
    assert bool([d for d in at.get("download_button") if d.proto.id.endswith("png_download")]) == bool(drawn)


def test_the_check_sees_a_chart_left_out(app, monkeypatch):
    monkeypatch.setattr(png, "chromium", lambda: "chromium")
    real = png.record
    monkeypatch.setattr(png, "record", lambda name, figure: None if name.endswith("_1") else real(name, figure))
    at = app("pages/2_multihead.py", QUERY)
    assert "multihead_Head_1" in svg_names(at) and png_names(at) != svg_names(at)


def test_the_button_renders_the_chart_chosen(app, monkeypatch):
    """The download button's callable (what Streamlit calls on a click) renders the chart chosen, under its name."""
    import streamlit as st

    monkeypatch.setattr(png, "chromium", lambda: "chromium")
    monkeypatch.setattr(png, "render", lambda figure, width, height: (figure, width, height))  # no Chromium needed
    buttons, real = {}, st.download_button

    def spy(label, data, file_name, *args, key=None, **kwargs):
        buttons[key] = (file_name, data)
        return real(label, data, file_name, *args, key=key, **kwargs)

    monkeypatch.setattr(st, "download_button", spy)
    at = app("pages/2_multihead.py", QUERY)
    names, specs = svg_names(at), [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    for i in (1, len(names) - 1, 0):
        at.selectbox(key="png_chart").set_value(names[i]).run()
        assert not at.exception
        file_name, data = buttons["png_download"]
        figure, width, height = data()
        assert file_name == f"{names[i]}.png"
        assert figure.layout.title.text == specs[i]["layout"]["title"]["text"]
        assert (width, height) == png.size(figure)


def test_a_real_chart_renders_at_the_size_asked(app):
    assert png.chromium(), "no Chromium found: scripts/test.sh installs one (a missing part is an error)"
    at = app("pages/2_multihead.py", QUERY)
    figure = pio.from_json(at.get("plotly_chart")[0].proto.spec)
    assert png_size(png.render(figure, 640, 360)) == (640, 360)
    width, height = png.size(figure)  # the control's own size: the figure's height, the default width
    assert (width, height) == (png.WIDTH, figure.layout.height or png.HEIGHT)
    label = next(d.proto.label for d in at.get("download_button") if d.proto.id.endswith("png_download"))
    assert label == t("png.download", width=width, height=height, language="en")
    assert png_size(png.render(figure, width, height)) == (width, height)


def test_the_header_check_reads_the_size():
    """The IHDR reader, on a header built here: 3 x 2 reads as such, a swapped one does not, a JPEG is refused."""
    header = SIGNATURE + struct.pack(">I4sII", 13, b"IHDR", 3, 2)
    assert png_size(header) == (3, 2)
    assert png_size(SIGNATURE + struct.pack(">I4sII", 13, b"IHDR", 2, 3)) != (3, 2)
    with pytest.raises(AssertionError):
        png_size(b"\xff\xd8\xff\xe0" + header[4:])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_chromium_is_said_in_the_ui_language(app, monkeypatch, tmp_path, lang):
    from choreographer.browsers import chromium

    monkeypatch.setenv("BROWSER_PATH", str(tmp_path / "no-chromium"))  # the lookup pointed at a missing path
    monkeypatch.setattr(chromium, "get_chrome_download_path", lambda **_: None)  # and no downloaded one
    monkeypatch.setattr(chromium, "get_old_chrome_download_path", lambda **_: None)
    assert png.chromium() is None
    at = app("pages/2_multihead.py", {**QUERY, "lang": lang})
    assert not at.exception
    assert svg_names(at)  # charts drawn, each with its SVG button
    assert [i.value for i in at.info if i.value == t("png.no_chromium", language=lang)]
    assert not png_names(at)
    assert not [d for d in at.get("download_button") if d.proto.id.endswith("png_download")]


def test_each_chart_has_a_name_of_its_own_in_the_choice():
    """Two charts of one title (one file name) are both offered, the second numbered; a name that already ends in a
    number is not taken twice."""
    assert png.unique(["a", "b", "a"]) == ["a", "b", "a_2"]
    names = png.unique(["a", "a_2", "a", "a"])
    assert len(set(names)) == 4 and names[:2] == ["a", "a_2"], names
