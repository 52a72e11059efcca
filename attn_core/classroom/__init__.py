"""A class's shared answers, with no Streamlit in them: the stores' rules (``base``), the store a process uses
(``store``: in memory, or Redis through ``redis_store`` for every replica) and the concept check's answers and report
(``check``). The app's pages read and write them (``explorer.poll``); ``python -m attn_core lesson`` reads them too.
"""
