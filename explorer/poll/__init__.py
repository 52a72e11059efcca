"""The class poll in the app: the lesson a session's link carries (link) and the views (view); its stores are the
engine's (``attn_core.classroom``)."""
