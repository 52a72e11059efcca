"""A chart on a page: drawn with its CSV and PNG downloads (``views``, ``png``), from the builders in
``explorer.figures``."""
