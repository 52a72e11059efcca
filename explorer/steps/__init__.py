"""The Step by step page's parts: each step drawn (``step_views``), the query–key map (``qk_view``, ``qk_parts``)
and Pin as A (``pin``)."""
