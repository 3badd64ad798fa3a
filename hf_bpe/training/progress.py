"""Progress bars on stderr: tqdm's when shown, a stand-in that costs nothing when not.

>>> with progress_bar(False, desc="merges") as bar:
...     bar.update(3)
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["progress_bar"]


class _NoBar:
    """What a disabled bar is used for (``update``, ``set_postfix_str``, a context manager), doing nothing."""

    def update(self, n: int = 1) -> None:
        pass

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def progress_bar(enabled: bool, **kwargs: Any) -> Any:
    """Return a tqdm bar on stderr with ``kwargs`` (``desc``, ``total``, ``unit``), or a no-op one if not ``enabled``.

    Importing tqdm takes 30-50 ms, serial time in every command: a disabled bar does not import it, and
    ``tqdm.auto`` (which also loads asyncio) only serves a notebook, where IPython is already loaded.
    """
    if not enabled:
        return _NoBar()
    if "IPython" in sys.modules:
        from tqdm.auto import tqdm
    else:
        from tqdm import tqdm
    return tqdm(file=sys.stderr, dynamic_ncols=True, **kwargs)
