"""The notice that names the parameters of a link that could not be used.

A link is how this app is shared in a classroom, so anyone can send any link. Every control
parses and range-checks its own URL value before its widget sees it (``controls.url_value``); one
that cannot be used is removed from the URL (its control starts from the default) and its name is
kept here, to be shown until the user changes a setting. A value is never echoed.
"""

from __future__ import annotations

from . import session


def show_notices(slot) -> None:
    """One message naming the parameters of the link that could not be used."""
    from .i18n import t
    from .safe import md

    names = session.notices_to_show()  # none once the user has changed a setting since: it has done its job
    if not names:
        return
    slot.warning(t("url_fixed", names=", ".join(md(n) for n in dict.fromkeys(names))), icon=":material/link_off:")


def notices() -> list[str]:
    """The parameters of this run's URL that could not be used (names only: a value is never echoed)."""
    return session.notices()
