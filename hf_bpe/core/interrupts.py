"""Hold Ctrl-C over a short stretch of code that an interruption would leave broken.

>>> with interrupts_held():
...     pass
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator

__all__ = ["interrupts_held"]


@contextlib.contextmanager
def interrupts_held() -> Iterator[None]:
    """Block SIGINT in this thread for the block; one that arrives meanwhile is raised (KeyboardInterrupt) when the
    block ends. Without ``pthread_sigmask`` (not POSIX) the block runs as is."""
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - not POSIX
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
