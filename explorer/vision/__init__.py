"""The Vision page's parts (``view``)."""
