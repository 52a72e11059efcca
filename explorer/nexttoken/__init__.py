"""The Next token page's views (``pages/11_next_token.py``), over ``attn_core.nexttoken``.

``settings`` (its controls, bound to the link, and the messages for a link's refused values), ``runs`` (the
engine's results cached server-wide on plain values), ``charts`` (the distribution's bars with the cut tokens
greyed, the logit lens's grid), ``views`` (the distribution and why, every position's prediction, the lens),
``generation`` (Step, Play, Back: the query row over the cached keys, the cache growing, the check, branches),
``heads`` (what a head writes, every head's direct effect summing to the logit).
"""
