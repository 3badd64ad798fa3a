"""Cut a line too long to hold at once into fragments that pre-tokenize exactly like the whole line.

A 200 MB line without a newline is one sequence for `tokenizers`; counting it whole costs several times its size
in memory. Read in chunks, it can be cut where every named pattern (``gpt2``, ``gpt4``, ``o200k``, ``llama3``,
``qwen2``) is known to end a piece, and each fragment counted on its own gives the same pieces.

Where the cut is safe: before a ``" "`` that follows a letter or a digit. Why, for all five named patterns:

1. The piece holding the letter/digit at ``p - 1`` cannot hold the space at ``p``: in these patterns a space is
   only ever the *first* character of a non-whitespace piece (`` ?\\p{L}+``, ``[^\\r\\n\\p{L}\\p{N}]?\\p{L}+``,
   `` ?[^\\s\\p{L}\\p{N}]+``) or part of a whitespace piece, which cannot hold a letter or digit. So a piece ends at
   ``p`` in the whole line, and the pieces from ``p`` on depend only on the text from ``p`` on.
2. The pieces before ``p`` are the same when the text ends at ``p``: an alternative that reads past the
   letter/digit at ``p - 1`` next asks whether ``p`` is a letter, mark, digit, apostrophe, punctuation, ``\\r``,
   ``\\n`` or ``/`` (no to each, for a space and for the end alike) or applies ``(?!\\S)`` (true for both).
3. A fragment after a cut starts with ``" "``, so ``add_prefix_space`` leaves it unchanged, as it leaves the
   middle of the line.

Custom patterns get no such guarantee and are never cut. ``tests/test_fragment.py`` checks the property for
each named pattern with hypothesis, against the compiled scanner and the ``regex`` module.

A line is read chunk by chunk through a :class:`SafeCutter`, which looks at each character once: a run with no cut
(spaces, letters, CJK, digits, punctuation) grows as a list of chunks joined once, when a cut or the end comes, so
reading is linear in the line's size (searching the whole carried text again at each chunk was quadratic).

>>> text = "Hello world, 2024 was long"
>>> cut = last_safe_cut(text)
>>> text[:cut], text[cut:]
('Hello world, 2024 was', ' long')
>>> f = Fragment(text[cut:], start=False, end=True, line_bytes=len(text))
>>> f, f.start, f.end
(' long', False, True)
"""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["Fragment", "SafeCutter", "last_safe_cut", "next_safe_cut", "CUTTABLE_PATTERNS"]

# The patterns the rule above was checked for (names in hf_bpe.core.patterns.PATTERNS).
CUTTABLE_PATTERNS = frozenset({"gpt2", "gpt4", "o200k", "llama3", "qwen2"})

# A cut is the space of a match (searched backwards). Matching the letter/digit too, not looking behind for it, makes
# a run of spaces 3x cheaper to search (~60 ns a character, where each space starts an attempt).
# Compiled at the first huge line: training or encoding ordinary text never loads `regex` (59M instructions and
# 1.6 MiB of a small training run's start-up).
@functools.cache
def _cut_patterns() -> tuple[Any, Any]:
    import regex

    return (regex.compile(r"(?r)[\p{L}\p{N}] "),
            regex.compile(r"(?<=[\p{L}\p{N}]) "))  # the second searched forwards, from a position


class Fragment(str):
    """A part of one line (document) of a corpus that was read in pieces.

    Args:
        text: the part's text.
        start: it is the first part of its line.
        end: it is the last part of its line.
        line_bytes: the UTF-8 size of the whole line (what a fingerprint frames the document with).
    """

    start: bool
    end: bool
    line_bytes: int

    def __new__(cls, text: str, *, start: bool, end: bool, line_bytes: int) -> Fragment:
        self = super().__new__(cls, text)
        self.start = start
        self.end = end
        self.line_bytes = line_bytes
        return self

    def __reduce__(self) -> tuple:
        # Keep the flags across pickling (worker processes): str's own reduce would drop them.
        return (_rebuild, (str(self), self.start, self.end, self.line_bytes))


def _rebuild(text: str, start: bool, end: bool, line_bytes: int) -> Fragment:
    return Fragment(text, start=start, end=end, line_bytes=line_bytes)


def last_safe_cut(text: str) -> int:
    """Return the last position where ``text`` may be cut (see the module docstring), or 0 if there is none.

    O(distance from the end to the cut): the search runs backwards.

    >>> last_safe_cut("a b c"), last_safe_cut("   "), last_safe_cut("中文 ")
    (3, 0, 2)
    """
    match = _cut_patterns()[0].search(text)
    return 0 if match is None else match.start() + 1


class SafeCutter:
    """Cut a line given chunk by chunk at its last safe cut so far, searching each character once.

    :meth:`push` a chunk, get back the text up to the last safe cut of everything pushed (``""`` when there is
    none yet); :meth:`rest` gives what is left after the last chunk. The pieces returned, end to end, are the line.

    Attributes:
        examined: characters handed to the cut search so far: each chunk plus the one character before it (the
            look-behind), so ``examined <= characters pushed + chunks pushed`` whatever the text.

    >>> cutter = SafeCutter()
    >>> cutter.push("Hello wor"), cutter.push("ld   "), cutter.push("x"), cutter.rest()
    ('Hello', ' world', '', '   x')
    >>> cutter.examined  # 9 + (1 + 5) + (1 + 1)
    17
    """

    def __init__(self) -> None:
        self._parts: list[str] = []  # the text since the last cut (no cut inside), in the chunks it came in
        self._last = ""  # the last character pushed: the look-behind of the next chunk's first position
        self.examined = 0

    def push(self, chunk: str) -> str:
        """Add the next chunk of the line; return the text up to the line's last safe cut so far, or ``""``."""
        if not chunk:
            return ""
        # Only positions inside the new chunk can be new cuts: the carried text has none after its start (it
        # begins at the previous cut), so it is never searched again.
        window = self._last + chunk
        self.examined += len(window)
        match = _cut_patterns()[0].search(window)
        self._last = chunk[-1]
        if match is None:
            self._parts.append(chunk)
            return ""
        cut = match.start() + 1 - (len(window) - len(chunk))
        head = "".join(self._parts) + chunk[:cut]
        self._parts = [chunk[cut:]]
        return head

    def rest(self) -> str:
        """Return the text after the last cut, and start over (for the end of the line)."""
        tail = "".join(self._parts)
        self._parts, self._last = [], ""
        return tail


def next_safe_cut(text: str, start: int, end: int) -> int:
    """Return the first position in ``[start, end)`` where ``text`` may be cut, or -1 if there is none.

    O(end - start): the search reads no further than ``end`` (it looks back one character before ``start``).

    >>> next_safe_cut("ab cd ef", 3, 8), next_safe_cut("ab cd ef", 6, 8), next_safe_cut("中文 x", 0, 5)
    (5, -1, 2)
    """
    match = _cut_patterns()[1].search(text, start, end)
    return -1 if match is None else match.start()
