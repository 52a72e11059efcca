"""What a class meets around the pages: the start page (``home``), the tour (``tour``), lesson links
(``lesson``), the concept check (``check_view``), take-home notebooks (``takehome``) and what a server computes
ahead of its lessons (``ahead``)."""
