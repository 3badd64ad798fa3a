"""Split text into pre-tokens (pieces) with the regex of GPT-2, GPT-4, GPT-4o, Llama 3, Qwen2 or your own.

The named patterns run on a compiled scanner (``hf_bpe.core._scanner``) that returns exactly the pieces
``regex.findall(pattern, text)`` returns, several times faster; custom patterns use the ``regex`` module.

>>> pre = Pretokenizer("gpt2")
>>> pre.split("Hello world's 123!")
['Hello', ' world', "'s", ' 123', '!']
>>> Pretokenizer("gpt4").split_bytes("I'M  4096 ok")
[b'I', b"'M", b' ', b' ', b'409', b'6', b' ok']
>>> Pretokenizer("gpt2", add_prefix_space=True).count(["hi hi", "hi"])
{b' hi': 3}
"""

from __future__ import annotations

import functools
import os
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from . import _core, _scanner, _tally
from .fragment import CUTTABLE_PATTERNS, next_safe_cut
from .patterns import ALIASES, PATTERNS, to_oniguruma

__all__ = ["PATTERNS", "ALIASES", "Pretokenizer"]

# A long text is cut near every multiple of its part length at the first safe cut within this many characters
# (fragment.py); a stretch without one (Chinese, one long word) is left to the part before it: bounded search.
_CUT_WINDOW = 1 << 16
_PIECES: list[Any] = []  # the scanner's splitter capsule, made once (a capsule per call costs a short text ~5 %)

# A named pattern's exact text, or its Oniguruma spelling in a tokenizer.json (patterns.to_oniguruma), gets the
# name and so the compiled scanner.
# Built at the first pattern that is not a name: to_oniguruma loads `regex`, which a named pattern never needs.
@functools.cache
def _name_of_source() -> dict[str, str]:
    return {spelling: name for name, source in PATTERNS.items() for spelling in (to_oniguruma(source), source)}

_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def _resolve(pattern: str) -> tuple[str | None, str]:
    """Return (canonical name or None, regex source) for a name, alias or regex source."""
    key = pattern.lower()
    if key in PATTERNS:
        return key, PATTERNS[key]
    if key in ALIASES:
        return ALIASES[key], PATTERNS[ALIASES[key]]
    if pattern in _name_of_source():  # the exact text of a named pattern gets its name (and the fast scanner)
        name = _name_of_source()[pattern]
        return name, PATTERNS[name]
    if not pattern:
        raise ValueError(f"pattern is empty ({pattern!r}); expected a name in {sorted(PATTERNS)} or a regex source")
    if set(pattern) <= _NAME_CHARS:
        raise ValueError(
            f"unknown pattern name {pattern!r}; expected one of {sorted(PATTERNS)} (aliases {sorted(ALIASES)}) "
            f"or a regex source; to use {pattern!r} as a literal regex, write '(?:{pattern})'"
        )
    return None, pattern


def _check_text(text: Any) -> None:
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__} {text!r:.80}; decode bytes first")


def _restore(pattern: str, add_prefix_space: bool) -> Pretokenizer:
    # Pickle support: Pretokenizer's options are keyword-only.
    return Pretokenizer(pattern, add_prefix_space=add_prefix_space)


class Pretokenizer:
    """Split text into pieces with a named pattern (compiled scanner) or a custom regex.

    Args:
        pattern: a name of ``PATTERNS`` ("gpt2", "gpt4", "o200k", "llama3", "qwen2"), an alias of ``ALIASES``
            (e.g. "cl100k"), or a regex source for the ``regex`` module. The exact source of a named pattern (in
            ``PATTERNS``, or its Oniguruma spelling in a tokenizer.json) is recognised as that name.
        add_prefix_space: like tokenizers' ``ByteLevel(add_prefix_space=True)``: prepend " " to a non-empty text
            that does not start with a space before splitting.

    Raises:
        TypeError: ``pattern`` is not a str.
        ValueError: ``pattern`` looks like a name but is none, or is not a valid regex.

    Instances are immutable, hashable, equal by ``(regex, add_prefix_space)`` and picklable.

    >>> Pretokenizer("cl100k")
    Pretokenizer('gpt4', add_prefix_space=False)
    >>> Pretokenizer(r"\\d+|\\D+").split("ab12c")
    ['ab', '12', 'c']
    """

    __slots__ = ("_name", "_regex", "_add_prefix_space", "_compiled", "_scanner_id")

    def __init__(self, pattern: str = "gpt2", *, add_prefix_space: bool = False) -> None:
        if not isinstance(pattern, str):
            raise TypeError(
                f"pattern must be a str (a name in {sorted(PATTERNS)} or a regex source), "
                f"got {type(pattern).__name__} {pattern!r:.80}"
            )
        if not isinstance(add_prefix_space, bool):
            raise TypeError(
                f"add_prefix_space must be a bool, got {type(add_prefix_space).__name__} {add_prefix_space!r}"
            )
        name, source = _resolve(pattern)
        compiled = None
        if name is None:
            import regex  # custom patterns only: the named ones never load it (1.6 MiB, 59M instructions)

            from ._reference_superbpe import bare_split_regex

            try:
                # A pattern R|(?:(?!R)[\s\S])+ (SuperBPE's split, written for findall) splits as R does here
                # (_regex_pieces keeps the text between matches), without a lookahead at every character.
                compiled = regex.compile(bare_split_regex(source) or source)
            except regex.error as exc:
                raise ValueError(
                    f"pattern {source!r} is not a valid regex for the `regex` module ({exc}); "
                    f"fix it or use a name in {sorted(PATTERNS)}"
                ) from exc
        self._name: str | None = name
        self._regex: str = source
        self._add_prefix_space: bool = add_prefix_space
        self._compiled = compiled
        self._scanner_id: int = -1 if name is None else _scanner.SCANNERS[name]

    @property
    def name(self) -> str | None:
        """The canonical pattern name, or None for a custom regex."""
        return self._name

    @property
    def regex(self) -> str:
        """The regex source that defines the pieces."""
        return self._regex

    @property
    def add_prefix_space(self) -> bool:
        """Whether a space is prepended to texts that do not start with one."""
        return self._add_prefix_space

    def _prefixed(self, text: str) -> str:
        if self._add_prefix_space and text and not text.startswith(" "):
            return " " + text
        return text

    def _regex_pieces(self, text: str) -> Iterator[str]:
        # tokenizers' Split(behavior="isolated"): every match is a piece, and so is every stretch of text between
        # matches (a pattern need not cover the text: `\w+` leaves spaces and punctuation). Empty pieces are dropped.
        # The pieces always concatenate to the text, so no text is ever lost.
        end = 0
        for match in self._compiled.finditer(text):
            start, stop = match.span()
            if start > end:
                yield text[end:start]
            if stop > start:
                yield text[start:stop]
            end = max(end, stop)
        if end < len(text):
            yield text[end:]

    def split(self, text: str) -> list[str]:
        """Return the pieces of `text`, in order; they are never empty and concatenate to the (prefixed) text.

        For a custom regex they are the whole matches of ``finditer`` (capture groups do not change them) and the
        text between matches, as `tokenizers`' ``Split(pattern, "isolated")`` gives them.

        >>> Pretokenizer("gpt2").split("a  b\\n")
        ['a', ' ', ' b', '\\n']
        >>> Pretokenizer(r"\\w+").split("Hello, world!")
        ['Hello', ', ', 'world', '!']
        """
        _check_text(text)
        text = self._prefixed(text)
        if self._scanner_id >= 0:
            return _scanner.split(text, self._scanner_id)
        return list(self._regex_pieces(text))

    def split_bytes(self, text: str) -> list[bytes]:
        """Return the pieces of `text` encoded as UTF-8.

        Raises:
            TypeError: `text` is not a str.
            UnicodeEncodeError: `text` holds a lone surrogate (it has no UTF-8 form).

        >>> Pretokenizer("gpt2").split_bytes("né 1")
        [b'n\\xc3\\xa9', b' 1']
        """
        _check_text(text)
        text = self._prefixed(text)
        if self._scanner_id >= 0:
            return _scanner.split_bytes(text, self._scanner_id)
        return [piece.encode("utf-8") for piece in self._regex_pieces(text)]

    def count(self, texts: Iterable[str], counts: dict[bytes, int] | None = None, *,
              threads: int = 1) -> dict[bytes, int]:
        """Add how often each UTF-8 piece occurs in `texts` to `counts` and return it.

        Args:
            texts: an iterable of str (not a single str); each is split on its own.
            counts: a dict to add to (updated in place), or None for a new one. New keys are added in first-seen
                order, so the result does not depend on hashing.
            threads: scan on this many threads without the GIL (named patterns; a custom regex counts on one).
                The result, order included, is the same for any number.

        Returns:
            `counts` (or the new dict).

        Raises:
            TypeError: `texts` is a str or bytes, an item is not a str, or `counts` is not a dict.

        >>> Pretokenizer("gpt2").count(["a b", "a"], {b"a": 5})
        {b'a': 7, b' b': 1}
        """
        if isinstance(texts, (str, bytes)):
            raise TypeError(
                f"texts must be an iterable of str, got a single {type(texts).__name__} {texts!r:.80}; "
                f"wrap it in a list: count([text])"
            )
        if counts is None:
            counts = {}
        elif not isinstance(counts, dict):
            raise TypeError(f"counts must be a dict[bytes, int] or None, got {type(counts).__name__} {counts!r:.80}")
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise ValueError(f"threads must be an int >= 1, got {threads!r}")
        if self._scanner_id >= 0:
            return _tally.count(texts, self._scanner_id, self._add_prefix_space, counts, threads)
        # Custom regex: count str pieces, then encode each distinct piece once.
        pieces: Counter[str] = Counter()
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"texts[{i}] is {type(text).__name__} {text!r:.80}; expected str (decode bytes first)")
            pieces.update(self._regex_pieces(self._prefixed(text)))
        for piece, n in pieces.items():
            key = piece.encode("utf-8")
            counts[key] = counts.get(key, 0) + n
        return counts

    @property
    def compiled(self) -> bool:
        """Whether a compiled scanner splits (a named pattern), so that :meth:`encode_batch` can run on threads."""
        return self._scanner_id >= 0

    def encode_batch(self, texts: list[str], encoder: Any, *, threads: int = 1) -> list[list[int]]:
        """Split and encode every text with the compiled scanner and ``encoder`` (a ``WordEncoder``) in one call.

        Each text is split and encoded on ``threads`` threads without the GIL (contiguous parts of the batch, one
        encoder copy per thread); the ids do not depend on ``threads``. Named patterns only (:attr:`compiled`).

        Raises:
            ValueError: a custom regex (no compiled scanner), or ``threads < 1``.
            TypeError: a text that is not a str (naming its index).

        >>> from hf_bpe.core._core import WordEncoder
        >>> Pretokenizer("gpt2").encode_batch(["hi there", ""], WordEncoder([], list(range(256))))
        [[104, 105, 32, 116, 104, 101, 114, 101], []]
        """
        return encoder.encode_texts(self._scannable(texts), _scanner.pieces_function(), self._scanner_id, threads)

    def encode_batch_arrays(self, texts: list[str], encoder: Any, *, threads: int = 1,
                            eos_id: int = -1) -> tuple[Any, Any]:
        """:meth:`encode_batch` into two flat ``TokenBuffer`` arrays: ``(ids, offsets)`` (int32, int64).

        ``eos_id >= 0`` is appended after every text. Raises as :meth:`encode_batch`.

        >>> from hf_bpe.core._core import WordEncoder
        >>> ids, offsets = Pretokenizer("gpt2").encode_batch_arrays(["hi", ""], WordEncoder([], list(range(256))))
        >>> list(memoryview(ids)), list(memoryview(offsets))
        ([104, 105], [0, 2, 2])
        """
        return encoder.encode_texts_arrays(self._scannable(texts), _scanner.pieces_function(), self._scanner_id,
                                           threads, eos_id=eos_id)

    def encode_documents(self, raw: Any, separator: bytes, encoder: Any, *, threads: int = 1, eos_id: int = -1,
                         skip_empty: bool = False) -> tuple[Any, Any]:
        """Encode the documents of a window of a UTF-8 file (``raw``, bytes that end at a document's end) where they
        lie, as :meth:`encode_batch_arrays` encodes them as a list of str (``WordEncoder.encode_documents``).

        Named patterns without the prefix space only; ``separator`` (bytes) ends each document and is left out.

        Raises:
            UnicodeDecodeError: a document is not UTF-8 (its ``start`` is an offset in ``raw``).

        >>> from hf_bpe.core._core import WordEncoder
        >>> ids, offsets = Pretokenizer("gpt2").encode_documents(b"a\\n\\xc3\\xa9\\n", b"\\n",
        ...                                                      WordEncoder([], list(range(256))))
        >>> list(memoryview(ids)), list(memoryview(offsets))
        ([97, 195, 169], [0, 1, 3])
        """
        if self._scanner_id < 0 or self._add_prefix_space:
            raise ValueError("encode_documents needs a named pattern's compiled scanner and no prefix space; encode "
                             "a list of the documents with encode_batch_arrays instead")
        return encoder.encode_documents(raw, separator, _scanner.pieces_function(), self._scanner_id, threads,
                                        eos_id=eos_id, skip_empty=skip_empty)

    def _scannable(self, texts: list[str]) -> list[str]:
        """The texts as the compiled scanner takes them (the prefix space added); refuse a custom regex."""
        if self._scanner_id < 0:
            raise ValueError(f"encode_batch needs a named pattern's compiled scanner; {self._regex!r} is a custom "
                             "regex: split with split_bytes() instead")
        if self._add_prefix_space:
            return [self._prefixed(t) if isinstance(t, str) else t for t in texts]
        return texts

    def short_text_encoder(self, encoder: Any, long_chars: int) -> Any:
        """Return the compiled single-text call of ``encoder`` for this pattern, or None for a custom regex.

        Its ``encode(text, num_threads, surrogates)`` returns ``self.encode_text(text, encoder)`` for a str shorter
        than ``long_chars`` with default options, and None for anything its caller must check or cut
        (``hf_bpe.core._core.ShortTextEncoder``).

        >>> from hf_bpe.core._core import WordEncoder
        >>> Pretokenizer("gpt2").short_text_encoder(WordEncoder([], range(256)), 100).encode("hi", None, "strict")
        [104, 105]
        """
        if self._scanner_id < 0:
            return None
        return _core.ShortTextEncoder(encoder, self._scanner_id, self._add_prefix_space, long_chars)

    def encode_text(self, text: str, encoder: Any, *, threads: int = 1, part_chars: int = 0) -> list[int]:
        """Split and encode one text: a named pattern in one compiled call (no object per piece).

        Args:
            text: the text (a str: not checked here).
            encoder: a ``WordEncoder`` (a custom regex: anything with ``encode_words``, given its pieces).
            threads: with ``part_chars``, encode the parts on this many threads without the GIL.
            part_chars: 0 to encode the text whole; else cut it near every ``part_chars`` characters, where every
                named pattern ends a piece (:func:`hf_bpe.core.fragment.next_safe_cut`), and encode the parts on
                ``threads`` threads. The ids never depend on ``threads`` or ``part_chars``. A part that is not
                ASCII is transcoded to UTF-8 in its thread, whole, and scanned as UTF-8 (``csrc/scanner.hpp``).

        Raises:
            UnicodeEncodeError: `text` holds a lone surrogate.

        >>> from hf_bpe.core._core import WordEncoder
        >>> enc = WordEncoder([], list(range(256)))
        >>> Pretokenizer("gpt2").encode_text("a b", enc) == Pretokenizer("gpt2").encode_text("a b", enc, threads=2,
        ...                                                                                   part_chars=1)
        True
        """
        if self._scanner_id < 0:
            return encoder.encode_words(self.split_bytes(text))  # a custom regex: its pieces (prefixed), never cut
        return self._encode_one(text, encoder, threads, part_chars, False)

    def encode_text_array(self, text: str, encoder: Any, *, threads: int = 1, part_chars: int = 0) -> Any:
        """:meth:`encode_text` into a ``TokenBuffer`` of int32 ids (no Python int per id). Named patterns only.

        Raises:
            ValueError: a custom regex (no compiled scanner).
            UnicodeEncodeError: `text` holds a lone surrogate.

        >>> from hf_bpe.core._core import WordEncoder
        >>> list(memoryview(Pretokenizer("gpt2").encode_text_array("hi", WordEncoder([], list(range(256))))))
        [104, 105]
        """
        self._scannable([])  # refuses a custom regex
        return self._encode_one(text, encoder, threads, part_chars, True)

    def _encode_one(self, text: str, encoder: Any, threads: int, part_chars: int, array: bool) -> Any:
        """encode_text (ids as a list) or encode_text_array (a TokenBuffer) for a named pattern."""
        if self._add_prefix_space:
            text = self._prefixed(text)
        if not _PIECES:
            _PIECES.append(_scanner.pieces_function())
        if part_chars <= 0 or len(text) <= part_chars or self._name not in CUTTABLE_PATTERNS:
            return (encoder.encode_text_array if array else encoder.encode_text)(text, _PIECES[0], self._scanner_id)
        n, bounds, target = len(text), [0], part_chars
        while target < n:  # target grows every turn; the searched ranges do not overlap: O(len(text)) in all
            cut = next_safe_cut(text, target, min(n, target + _CUT_WINDOW))
            if cut > 0:  # cut >= target > the last cut
                bounds.append(cut)
                target = cut + part_chars
            else:
                target += max(part_chars, _CUT_WINDOW)
        bounds.append(n)
        # Without the GIL either way (a long text); no thread to start when no cut was found.
        return (encoder.encode_text_array if array else encoder.encode_text)(
            text, _PIECES[0], self._scanner_id, bounds, threads if len(bounds) > 2 else 1)

    def tally(self) -> Any:
        """Return a compiled piece tally for this pre-tokenizer's named pattern, or None for a custom regex.

        ``tally.add(texts, threads=N)`` counts a batch (without the GIL on N threads); ``tally.into(counts)`` adds
        everything counted to a dict once, in first-seen order: a corpus counted in batches pays the dict updates
        once, not once per batch.

        >>> t = Pretokenizer("gpt2").tally(); t.add(["a b", "a"]); t.into({})
        {b'a': 2, b' b': 1}
        """
        if self._scanner_id < 0:
            return None
        return _tally.PieceTally(self._scanner_id, self._add_prefix_space)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Pretokenizer):
            return NotImplemented
        return (self._regex, self._add_prefix_space) == (other._regex, other._add_prefix_space)

    def __hash__(self) -> int:
        return hash((Pretokenizer, self._regex, self._add_prefix_space))

    def __repr__(self) -> str:
        return f"Pretokenizer({self._name or self._regex!r}, add_prefix_space={self._add_prefix_space!r})"

    def __reduce__(self) -> tuple[Any, tuple[str, bool]]:
        return _restore, (self._name or self._regex, self._add_prefix_space)

    def __setattr__(self, attr: str, value: Any) -> None:
        # Immutable after __init__ (the hash depends on the fields).
        if hasattr(self, "_scanner_id"):
            raise AttributeError(f"Pretokenizer is immutable; cannot set {attr!r}. Make a new one instead")
        object.__setattr__(self, attr, value)


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the OS has one, else the CPU count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)
