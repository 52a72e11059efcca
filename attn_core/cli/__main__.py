"""``python -m attn_core.cli ...``: the same as ``python -m attn_core ...``."""

import sys

from .entry import main

sys.exit(main())
