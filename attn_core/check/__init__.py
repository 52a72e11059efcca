"""The concept check taken before and after a lesson: the item bank (``bank``), the items the engine answers for
the lesson's settings (``live``) and the class's normalized gain (``report``). Pure Python and PyTorch; the store
of the answers is the class poll's (``attn_core.classroom.check``)."""
