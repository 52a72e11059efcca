"""The ground floor every page stands on: the session and the URL (``session``), the catalogue (``i18n``), what a
user typed made safe (``safe``), the shared cache (``cache``), widgets that check what the browser sends
(``widgets``, ``wire``), the link's notices (``urlcheck``) and the server process's facts (``runtime``, ``heap``,
``relay``)."""
