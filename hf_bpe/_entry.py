"""Run the ``hf-bpe`` command: Ctrl-C at any moment, while the command's modules load included, exits 130 with one
line and no traceback (``cli.main`` handles it once they are loaded).

The console script enters through the top-level ``_hf_bpe_entry``, which holds Ctrl-C while this package's
``__init__`` runs (a window that no code inside the package can cover); ``run`` also works when called directly.
"""

from __future__ import annotations

import signal
import sys


def run() -> None:
    """Run ``hf-bpe`` with ``sys.argv`` and exit with its status."""
    try:
        from .cli import main

        # The console script's start-up handler exits at once; from here on a Ctrl-C must reach the command as
        # KeyboardInterrupt instead, so that it stops its workers and removes what it started to write.
        if getattr(signal.getsignal(signal.SIGINT), "__module__", None) == "_hf_bpe_entry":
            signal.signal(signal.SIGINT, signal.default_int_handler)
        status = main()
    except KeyboardInterrupt:
        print("hf-bpe: interrupted", file=sys.stderr)
        status = 130
    sys.exit(status)
