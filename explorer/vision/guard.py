"""The uploader's own checks, made in the page before Streamlit's drop zone sees a file.

Streamlit's uploader refuses a file over its limit (or of another type) itself, in English whatever the page's
language ("File must be 5.0MB or smaller.", on a chip that also says "Remove …"). So a few lines of script in the page
(``JS``, a Streamlit v2 component: no request leaves the page) look at a file as it is chosen or dropped on Vision's
uploader, before Streamlit does: one over the limit, or not a PNG or JPEG by its name, is stopped there, and the
server is told why; the page then says it in the UI's language, with the engine's own error for that picture
(``attn_core.vision.picture``). A file that passes goes on to Streamlit's uploader untouched.

What the browser sends back is data: only a known reason is taken (``REASONS``); anything else is ignored.
"""

from __future__ import annotations

import streamlit as st

from attn_core import AttentionConfigError
from attn_core.vision.picture import MAX_BYTES
from explorer.base import session

TYPES = ("png", "jpg", "jpeg")
EVENT = "refused"
# The reasons the script may give, and the engine's error for each (its words in both languages)
REASONS = {
    "size": lambda: AttentionConfigError("image", "vision_upload_size", mib=MAX_BYTES // 2**20),
    "type": lambda: AttentionConfigError("image", "vision_upload_bad"),
}
STORE = "_vi_upload_refused"  # (reason, the uploader's file id when it was refused)

# Installed once per page (capture listeners on the document run before React's own on its root): a change of the
# uploader's file input or a drop on its zone is checked against the limits this component last mounted with.
JS = f"""export default function ({{ data, setTriggerValue }}) {{
  window.__attnUploadGuard = {{ data, setTriggerValue }};
  if (window.__attnUploadGuardOn) return;
  window.__attnUploadGuardOn = true;
  const why = (files) => {{
    const {{ data }} = window.__attnUploadGuard;
    for (const f of files || []) {{
      const ext = (f.name.split('.').pop() || '').toLowerCase();
      if (!data.types.includes(ext)) return 'type';
      if (f.size > data.max_bytes) return 'size';
    }}
    return null;
  }};
  const stop = (event, files) => {{
    const {{ data, setTriggerValue }} = window.__attnUploadGuard;
    if (!event.target || !event.target.closest || !event.target.closest(data.scope)) return;
    const reason = why(files);
    if (!reason) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    if (event.target.type === 'file') event.target.value = '';
    setTriggerValue('{EVENT}', reason);
  }};
  document.addEventListener('change', (e) => stop(e, e.target && e.target.files), true);
  document.addEventListener('drop', (e) => stop(e, e.dataTransfer && e.dataTransfer.files), true);
}}"""
GUARD = st.components.v2.component("attn_explorer_upload_guard", js=JS)


def refusal(value) -> AttentionConfigError | None:
    """The engine's error for a reason the page's script sent back; ``None`` for any other value."""
    make = REASONS.get(value) if isinstance(value, str) else None
    return make() if make else None


def guard(uploader_key: str, file_id: str | None) -> AttentionConfigError | None:
    """Mount the check on the uploader ``uploader_key``; the error to show, if a file was stopped and no other file
    has been taken since (``file_id``: the uploader's file now, if any)."""
    data = {"scope": f".st-key-{uploader_key}", "max_bytes": MAX_BYTES, "types": list(TYPES)}
    result = GUARD(key=f"{uploader_key}_guard", data=data, on_refused_change=lambda: None)
    sent = getattr(result, EVENT, None)
    if refusal(sent) is not None:
        session.put(STORE, (sent, file_id))
    stored = session.get(STORE)
    if not stored:
        return None
    reason, refused_with = stored
    if file_id is not None and file_id != refused_with:  # a file taken since: the refusal is over
        session.put(STORE, None)
        return None
    return refusal(reason)
