"""The Is attention an explanation? page: its background runs (runs), its main views (views), the others (more)."""
