"""The ``hf-bpe`` console script: Ctrl-C at any moment, while the command's modules load included, exits 130
with one line and no traceback (``cli.main`` handles it once they are loaded)."""

from __future__ import annotations

import sys


def run() -> None:
    """Run ``hf-bpe`` with ``sys.argv`` and exit with its status."""
    try:
        from .cli import main

        status = main()
    except KeyboardInterrupt:
        print("hf-bpe: interrupted", file=sys.stderr)
        status = 130
    sys.exit(status)
