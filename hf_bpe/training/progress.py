"""Progress bars on stderr: tqdm's when shown, a stand-in that costs nothing when not.

>>> with progress_bar(False, desc="merges") as bar:
...     bar.update(3)
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

__all__ = ["counted", "progress_bar"]

_T = TypeVar("_T")


class _NoBar:
    """What a disabled bar is used for (``update``, ``set_postfix_str``, ``n``, ``total``, a context manager),
    doing nothing."""

    n = 0
    total: int | None = None

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

    class ErasedOnError(tqdm):  # type: ignore[misc, valid-type]
        """A bar left on screen when its phase ends, erased when an error ends it (the error line stays alone)."""

        def __exit__(self, *exc: object) -> Any:
            if exc[0] is not None:
                self.leave = False
            return super().__exit__(*exc)

    return ErasedOnError(file=sys.stderr, dynamic_ncols=True, **kwargs)


def counted(items: Iterable[_T], bar: Any, *, every: int = 4096) -> Iterator[_T]:
    """Yield ``items`` unchanged, adding their number to ``bar`` by ``every`` at a time (and the rest at the end).

    >>> with progress_bar(False) as bar:
    ...     list(counted("abc", bar, every=2))
    ['a', 'b', 'c']
    """
    pending = 0
    for item in items:
        yield item
        pending += 1
        if pending == every:
            bar.update(pending)
            pending = 0
    bar.update(pending)
