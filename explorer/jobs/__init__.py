"""Work too slow for a page's rerun, run in child processes outside the server, shared by every session
that asks for the same plain values and bounded in slots and memory.

``skeleton`` (the queue, the slots, the bounded keeping) over ``children`` (starting, reading and
ending child processes; a worker is forked from a fork server that has done its imports, ``forked`` and
``forkserver``, where it can be); ``heavy`` (the Explain and Inside pages' slow parts in reusable workers,
``split`` when one Explain job may use both cores) with ``waiting`` (a page's view of its jobs:
a progress bar that polls without holding the script thread), and ``sweeps`` (the Complexity
page's timings). The Lab's runs (``explorer.lab.runs``) are built on the same skeleton.
"""
