"""What a running server process knows of itself, asked by jobs, the poll and pages: whether this is a real
``streamlit run`` server, how many sessions it has now (a sweep records it beside its timings) and this browser
session's id."""

from __future__ import annotations


def serving() -> bool:
    """Under ``streamlit run``: a runtime of Streamlit's own (AppTest's is a stand-in mock)."""
    try:
        from streamlit import runtime
        from streamlit.runtime.runtime import Runtime

        return runtime.exists() and type(runtime.get_instance()) is Runtime
    except ImportError:  # pragma: no cover
        return False


def active_sessions() -> int:
    """Sessions with an open connection on this server (0 outside a running server)."""
    try:
        from streamlit import runtime

        if not runtime.exists():
            return 0
        return runtime.get_instance()._session_mgr.num_active_sessions()
    except Exception:  # noqa: BLE001 - a count for a caption; never worth a failed page
        return 0


def session_id() -> str:
    """This browser session's id (a random string Streamlit gives it; "" outside a running script)."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else ""
