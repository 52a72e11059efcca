"""What the notebook export says beside each step, in English and 简体中文.

The page sentences it repeats and its own texts (the ``nb_*`` keys) are read from the app's locale files,
``attn_core/locales/<lang>.toml``, through ``attn_core.locales``: the notebook quotes the page word for word, with
no copy to keep in step, and ``attn_core`` needs no Streamlit.
"""

from __future__ import annotations

from . import locales

SOFTMAX_STAGES = (
    "m_i = \\max_j \\tilde e_{ij},\\quad p_{ij} = e^{\\tilde e_{ij} - m_i},\\quad Z_i = \\sum_j p_{ij},"
    "\\quad \\alpha_{ij} = p_{ij} / Z_i"
)
WEIGHTED_SUM = "\\alpha_{ij} = \\mathrm{softmax}_j(\\tilde e_{ij}),\\qquad z_i = \\sum_j \\alpha_{ij} v_j"


def has(key: str) -> bool:
    """Whether the catalogue has this key (a variant registered later may have no label there)."""
    return key in locales.strings("en")


def text(key: str, lang: str, **params) -> str:
    """The catalogue's text for ``key`` in ``lang`` ("en" or "zh"; English where Chinese has none), formatted."""
    s = locales.strings("zh" if lang == "zh" else "en").get(key) or locales.strings("en")[key]
    return s.format(**params) if params else s
