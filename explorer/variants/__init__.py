"""The Variants page's parts: each variant against full attention (``results``), Performer's gap
(``performer_gap``) and the spread sections (``spread_view``)."""
