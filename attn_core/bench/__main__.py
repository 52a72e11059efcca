"""``python -m attn_core.bench ...``: the same as ``python -m attn_core bench ...``."""

import sys

from ..cli import main

sys.exit(main(["bench", *sys.argv[1:]]))
