"""The errors hf_bpe raises for bad input, shared by every layer; the CLI turns them into one-line messages.

hf_bpe reports a caller's mistake with the built-in exception that fits (``TypeError``, ``ValueError``,
``FileNotFoundError``, ...), its message naming what was received, what was expected and how to fix it. The classes
here are the few that callers may want to catch by name; each subclasses the built-in it refines.

A message quotes a bad value through :func:`excerpt`, so that a 10 MB line makes a short error, not a 20 MB one.

>>> issubclass(InputError, ValueError) and issubclass(DisallowedSpecialTokenError, ValueError)
True
>>> excerpt("x" * 1000, limit=8)
"'xxxxxxxx'... (1,000 characters)"
"""

from __future__ import annotations

import reprlib

__all__ = ["DisallowedSpecialTokenError", "InputError", "USER_ERRORS", "excerpt"]

EXCERPT = 80  # characters of a bad value that a message quotes


def excerpt(value: object, *, limit: int = EXCERPT) -> str:
    """Return ``repr(value)`` cut to about ``limit`` characters, saying how long a cut str or bytes was.

    Use it for every value read from a file or given by a caller that an error message quotes.
    """
    if isinstance(value, str | bytes | bytearray):
        if len(value) <= limit:
            return repr(value)
        unit = "characters" if isinstance(value, str) else "bytes"
        return f"{value[:limit]!r}... ({len(value):,} {unit})"
    shortened = reprlib.Repr()
    shortened.maxstring = shortened.maxother = shortened.maxlong = limit
    shortened.maxlist = shortened.maxtuple = shortened.maxdict = shortened.maxset = 6
    shortened.maxlevel = 3
    text = shortened.repr(value)
    return text if len(text) <= 2 * limit else text[:2 * limit] + "..."


class InputError(ValueError):
    """A corpus, dataset, folder or option that cannot be used as given (the message says why and how to fix it)."""


class DisallowedSpecialTokenError(ValueError):
    """The text to encode contains a special token that the call did not allow."""


# What the command line reports as ``hf-bpe: error: ...`` with exit status 2: mistakes in what the user gave.
USER_ERRORS: tuple[type[BaseException], ...] = (
    InputError,
    TypeError,
    ValueError,
    FileNotFoundError,
    FileExistsError,
    NotADirectoryError,
    IsADirectoryError,
    PermissionError,
)
