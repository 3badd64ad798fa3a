"""The errors hf_bpe raises for bad input, shared by every layer; the CLI turns them into one-line messages.

hf_bpe reports a caller's mistake with the built-in exception that fits (``TypeError``, ``ValueError``,
``FileNotFoundError``, ...), its message naming what was received, what was expected and how to fix it. The classes
here are the few that callers may want to catch by name; each subclasses the built-in it refines.

>>> issubclass(InputError, ValueError) and issubclass(DisallowedSpecialTokenError, ValueError)
True
"""

from __future__ import annotations

__all__ = ["DisallowedSpecialTokenError", "InputError", "USER_ERRORS"]


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
