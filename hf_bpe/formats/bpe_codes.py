"""subword-nmt's codes file (``bpe.codes``): a ``#version:`` header, then one merge per line, ``left right``.

Version 0.2 (subword-nmt since 2017) fuses ``</w>`` onto a word's last character (``th e</w>``); version 0.1 (the
paper's scheme) keeps ``</w>`` a symbol of its own (``est </w>``). The writer matches ``subword-nmt learn-bpe``
byte for byte; the reader accepts what ``subword-nmt apply-bpe`` accepts (no header means version 0.1).

>>> text = dump_codes([("t", "h"), ("th", "e</w>")])
>>> text
'#version: 0.2\\nt h\\nth e</w>\\n'
>>> parse_codes(text)
((0, 2), [('t', 'h'), ('th', 'e</w>')])
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from ..errors import InputError, excerpt
from .gpt2 import read_line_file

__all__ = ["CODES_NAME", "dump_codes", "load_codes", "parse_codes"]

CODES_NAME = "bpe.codes"
_VERSIONS = {(0, 1): "0.1", (0, 2): "0.2"}
_UNWRITABLE = frozenset(" \n\r")


def dump_codes(merges: Sequence[tuple[str, str]], *, version: tuple[int, int] = (0, 2)) -> str:
    """Return the text of a codes file: the header, then ``left right`` per merge, in order.

    >>> dump_codes([("est", "</w>")], version=(0, 1))
    '#version: 0.1\\nest </w>\\n'
    """
    if version not in _VERSIONS:
        raise ValueError(f"version must be one of {sorted(_VERSIONS)!r}, got {version!r}")
    for left, right in merges:
        # subword-nmt reads a line back with .strip("\r\n ").split(" "): any other whitespace (tabs, U+00A0, ...)
        # inside a symbol survives, as learn-bpe writes it (its words are split on spaces only).
        if not left or not right or any(c in _UNWRITABLE for c in left + right):
            raise InputError(
                f"merge {(left, right)!r} cannot be written to a codes file: symbols must be non-empty and hold "
                "no space, '\\n' or '\\r' (subword-nmt splits its lines on '\\n' and on one space)"
            )
    return f"#version: {_VERSIONS[version]}\n" + "".join(f"{left} {right}\n" for left, right in merges)


def parse_codes(text: str, *, name: str = CODES_NAME) -> tuple[tuple[int, int], list[tuple[str, str]]]:
    """Parse a codes file; return ``(version, merges)`` (duplicates kept: the first one ranks, as in subword-nmt)."""
    lines = text.rstrip("\n").split("\n")
    version = (0, 1)
    if lines and lines[0].startswith("#version:"):
        # subword-nmt: "0.2.0" and "0.2" are the same version.
        numbers = tuple(int(x) for x in re.sub(r"(\.0+)*$", "", lines[0].split()[-1]).split("."))
        if numbers not in _VERSIONS:
            raise InputError(f"{name}: unsupported codes version {excerpt(lines[0])}; expected '#version: 0.1' or 0.2")
        version = numbers  # type: ignore[assignment]
        lines = lines[1:]
    merges: list[tuple[str, str]] = []
    for number, line in enumerate(lines, start=2 if version != (0, 1) or text.startswith("#version:") else 1):
        pair = tuple(line.strip("\r\n ").split(" "))
        if len(pair) != 2:
            raise InputError(f"{name} line {number}: expected two symbols separated by one space, got {excerpt(line)}")
        merges.append(pair)  # type: ignore[arg-type]
    return version, merges


def load_codes(path: str | os.PathLike[str]) -> tuple[tuple[int, int], list[tuple[str, str]]]:
    """Read a codes file from disk (UTF-8); see :func:`parse_codes`."""
    path = Path(path)
    try:
        # Bytes decoded, no newline translation: subword-nmt's codecs reader keeps a "\r" inside a line.
        text = read_line_file(os.fspath(path), "a codes file").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{os.fspath(path)!r} is not UTF-8 ({exc.reason} at byte {exc.start})") from None
    return parse_codes(text, name=os.fspath(path))
