"""The notice that names the parameters of a link that could not be used, and the one reading of
a switch in a link.

A link is how this app is shared in a classroom, so anyone can send any link. Every control
parses and range-checks its own URL value before its widget sees it (``controls.url_value``); one
that cannot be used is removed from the URL (its control starts from the default) and its name is
kept here, to be shown until the user changes a setting. A value is never echoed.

Every switch in a link (``predict``, ``present``, ``teacher``, and every on/off setting of the
sidebar and the pages) is read by ``switch``: ``1``, ``true``, ``yes``, ``on`` and ``0``,
``false``, ``no``, ``off``, in any case. A notice naming a switch says these spellings.
"""

from __future__ import annotations

from explorer.base import session

ON = ("1", "true", "yes", "on")
OFF = ("0", "false", "no", "off")
SWITCHES = {"present", "teacher"}  # the link's switches seen so far (a control's is added when its value is refused)


def switch(raw: str | None) -> bool | None:
    """A link's switch: True, False, or None when ``raw`` is none of the spellings."""
    text = raw.lower() if isinstance(raw, str) else None  # exactly one of the words: " 1" is not one
    return True if text in ON else False if text in OFF else None


def url_switch(name: str) -> bool | None:
    """The link's switch ``name``: None when absent; a value that is none of the spellings is
    dropped from the link and named in the sidebar's notice (None)."""
    raw = session.url(name)
    if raw is None:
        return None
    value = switch(raw)
    if value is None:
        session.drop_url(name)
        switch_notice(name)
    return value


def switch_notice(name: str) -> None:
    """Name the switch ``name`` in the sidebar's notice, which then says how a switch is written."""
    SWITCHES.add(name)
    session.notice(name)


def show_notices(slot) -> None:
    """One message naming the parameters of the link that could not be used."""
    from explorer.base.i18n import t
    from explorer.base.safe import md

    names = session.notices_to_show()  # none once the user has changed a setting since: it has done its job
    if not names:
        return
    text = t("url_fixed", names=", ".join(md(n) for n in dict.fromkeys(names)))
    if SWITCHES.intersection(names):
        text += " " + t("url_switch_hint")
    slot.warning(text, icon=":material/link_off:")


def notices() -> list[str]:
    """The parameters of this run's URL that could not be used (names only: a value is never echoed)."""
    return session.notices()
